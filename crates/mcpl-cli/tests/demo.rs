//! `mcpl demo`: the scripted session runs to the end and its cache report shows the contract
//! of RFC-014 §8.1 and §8.6: no tool-list change for the surface host, some for both
//! baselines measured in the same run.

use std::process::Command;

/// The number before "changes" on the report line that starts with `label`.
fn changes(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{report}"));
    let after = line.split(':').nth(1).expect("a colon after the label");
    after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in `{line}`"))
}

#[test]
fn s8_6_demo_exits_0_with_no_list_change_for_the_surface_and_some_for_both_baselines() {
    let out = Command::new("timeout")
        .arg("300")
        .arg(env!("CARGO_BIN_EXE_mcpl"))
        .arg("demo")
        .output()
        .expect("mcpl demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mcpl demo failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(changes(&stdout, "surface host (ours)"), 0, "{stdout}");
    assert!(changes(&stdout, "plain MCP host") > 0, "{stdout}");
    assert!(changes(&stdout, "dynamic-toolsets host") > 0, "{stdout}");
    // The session's milestones, as the model read them.
    for milestone in [
        "Game over",
        "`go` has several open instances: `left`, `right`; name one with `instance`",
        "`arcade` is down",
        "`arcade` reconnected; its toolsets were re-read (nothing was re-opened)",
        "closed `go`/`right`",
    ] {
        assert!(stdout.contains(milestone), "no `{milestone}` in:\n{stdout}");
    }
    // The refusal while the link is down says something true of the reconnect: never
    // "retry 2 in 0 ms" for an attempt already under way.
    let refusal = stdout
        .lines()
        .find(|l| l.contains("`arcade` is down"))
        .unwrap_or_default();
    assert!(
        refusal.contains("reconnecting now") || refusal.contains(" ms)"),
        "{refusal}"
    );
    assert!(!refusal.contains(" in 0 ms"), "{refusal}");
    assert!(!stdout.contains("CHANGED"), "{stdout}");
}
