//! `mcpl surface` as a process: bad specs are refused by name, and the surface exits when its
//! client closes stdin.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn a_bad_server_spec_is_refused_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args(["surface", "--server", "games=ftp://example.org"])
        .stdin(Stdio::null())
        .output()
        .expect("mcpl runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad server spec `games=ftp://example.org`"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn s8_6_the_surface_answers_initialize_and_exits_when_stdin_closes() {
    let mut child = Command::new("timeout")
        .args(["60", env!("CARGO_BIN_EXE_mcpl"), "surface"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mcpl runs");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2024-11-05","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("an answer");
    assert!(line.contains(r#""protocolVersion":"2024-11-05""#), "{line}");
    assert!(line.contains(r#""name":"mcpl-surface""#), "{line}");
    drop(stdin);
    let status = child.wait().expect("mcpl ends");
    assert!(status.success(), "{status}");
}
