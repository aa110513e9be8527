//! The CLI contract of DESIGN.md: subcommand names and the exit status of unbuilt parts.

use std::process::Command;

fn mcpl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args(args)
        .output()
        .expect("the mcpl binary runs")
}

#[test]
fn help_lists_every_subcommand_of_the_design() {
    let out = mcpl(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "surface",
        "arcade",
        "demo",
        "conformance",
        "bench",
        "inspect",
    ] {
        assert!(text.contains(name), "`mcpl --help` lacks `{name}`:\n{text}");
    }
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = mcpl(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("frobnicate"));
}

/// Subcommands whose part is not built yet exit 2 and say so, and nothing else.
#[test]
fn unbuilt_subcommands_say_so_and_exit_2() {
    for args in [
        &["bench", "--quick"][..],
        &["conformance", "server", "--", "x"][..],
        &["conformance", "host", "--", "x"][..],
    ] {
        let out = mcpl(args);
        assert_eq!(out.status.code(), Some(2), "mcpl {args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not built yet"), "mcpl {args:?}: {err}");
        assert!(out.stdout.is_empty(), "mcpl {args:?} printed to stdout");
    }
}

/// `mcpl inspect` reads a real server (the arcade as a child process) the way a host with
/// `toolHints` does at connect time: every tool with its hints, then `toolsets/list`.
#[test]
fn inspect_shows_the_arcade_declarations_and_full_statement() {
    let arcade = format!("{} arcade", env!("CARGO_BIN_EXE_mcpl"));
    let out = mcpl(&["inspect", &arcade]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("toolHints true"), "{text}");
    assert!(
        text.contains("go: Go (default closed, instances, options)"),
        "{text}"
    );
    assert!(
        text.contains("play [dynamic, toolset go, not visible]"),
        "{text}"
    );
    assert!(text.contains("challenge [static]"), "{text}");
    // §5.3: a fresh connection's statement takes rev 1, after `tools/list` reported rev 0.
    assert!(text.contains("listed at rev 0"), "{text}");
    assert!(text.contains("full statement at rev 1"), "{text}");
}

#[test]
fn inspect_names_an_unreachable_server() {
    let out = mcpl(&["inspect", "ws://127.0.0.1:9"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("mcpl inspect"));
}
