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
        &["inspect", "x"][..],
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
