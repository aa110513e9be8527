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

/// A line-based MCP client of an `mcpl surface` process.
struct Proc {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
    /// Notifications read while waiting for answers.
    notes: Vec<serde_json::Value>,
}

impl Proc {
    fn start(args: &[&str]) -> Proc {
        let mut child = Command::new("timeout")
            .arg("120")
            .arg(env!("CARGO_BIN_EXE_mcpl"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("mcpl runs");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut p = Proc {
            child,
            stdin,
            stdout,
            next: 0,
            notes: Vec::new(),
        };
        p.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}),
        );
        p
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next += 1;
        let id = self.next;
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").expect("write");
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(
                n > 0,
                "mcpl surface closed stdout while `{method}` was pending"
            );
            let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            if v["id"] == serde_json::json!(id) {
                return v["result"].clone();
            }
            self.notes.push(v);
        }
    }

    fn tools(&mut self) -> serde_json::Value {
        self.request("tools/list", serde_json::json!({}))["tools"].clone()
    }

    fn call(&mut self, name: &str, args: serde_json::Value) -> (String, bool) {
        let r = self.request(
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        let text: Vec<&str> = r["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect();
        (text.join("\n"), r["isError"] == serde_json::json!(true))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn h57_two_arcade_processes_behind_one_surface_route_by_server() {
    let mcpl = env!("CARGO_BIN_EXE_mcpl");
    let east = format!("east={mcpl} arcade");
    let west = format!("west={mcpl} arcade");
    let mut p = Proc::start(&["surface", "--server", &east, "--server", &west]);
    let tools = p.tools();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"east__challenge") && names.contains(&"west__challenge"),
        "{names:?}"
    );

    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "options": {"size": 9}}),
    );
    assert!(err, "{text}");
    assert!(text.contains("`east`") && text.contains("`west`"), "{text}");
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"server": "west", "toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    // `board` exists on both, but only west has an open game: still ambiguous by name.
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"tool": "board", "args": {}}),
    );
    assert!(
        err && text.contains("`east`") && text.contains("`west`"),
        "{text}"
    );
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"server": "west", "tool": "board", "args": {}}),
    );
    assert!(!err, "{text}");
    assert_eq!(p.tools(), tools);
}

#[test]
fn h28_a_killed_arcade_process_is_restarted_and_its_lost_game_told_once_without_a_reopen() {
    let dir = std::env::temp_dir().join(format!("mcpl-surface-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pidfile = dir.join("pid");
    let spec = format!(
        "arcade=sh -c 'echo $$ > {}; exec {} arcade'",
        pidfile.display(),
        env!("CARGO_BIN_EXE_mcpl")
    );
    let mut p = Proc::start(&["surface", "--server", &spec]);
    let tools = p.tools();
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"tool": "play", "instance": "g", "args": {"move": "E5"}}),
    );
    assert!(!err, "{text}");

    let pid = std::fs::read_to_string(&pidfile).expect("the arcade wrote its pid");
    let first_pid = pid.trim().to_owned();
    let killed = Command::new("kill")
        .args(["-9", &first_pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());

    // Calls meanwhile name the server's state; then the surface reconnects to a new process.
    let mut told = String::new();
    for _ in 0..300 {
        let (text, _) = p.call("toolsets_look", serde_json::json!({}));
        told.push_str(&text);
        let restarted = std::fs::read_to_string(&pidfile).is_ok_and(|p| p.trim() != first_pid);
        if restarted && told.contains("ended while the connection was down") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(told.contains("connection to `arcade` lost"), "{told}");
    assert_eq!(
        told.matches("`go`/`g` ended while the connection was down")
            .count(),
        1,
        "{told}"
    );
    // Nothing was re-opened: the new arcade has no game, and saying so again is not repeated.
    let (text, _) = p.call("toolsets_look", serde_json::json!({"toolset": "go"}));
    assert!(text.contains("`go` (arcade calls it \"Go\"): closed"), "{text}");
    assert!(!text.contains("ended while"), "{text}");
    assert_eq!(p.tools(), tools);
    let _ = std::fs::remove_dir_all(&dir);
}
