//! The CLI contract of DESIGN.md: subcommand names, usage errors, and each subcommand's output.

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

/// `mcpl bench --quick` measures what it can and prints one table with every row of the
/// issue: measured rows as ratios against their baselines, the others marked "not measured"
/// with the reason, never with a number.
#[test]
fn bench_quick_prints_a_table_with_every_row() {
    let out = mcpl(&["bench", "--quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    assert!(text.starts_with("Machine: "), "{text}");
    assert!(
        text.contains("| row | measure | ours | baseline | ratio |"),
        "{text}"
    );
    for row in [
        "| 1 cache stability |",
        "| 2 controller throughput |",
        "| 3 surface overhead |",
        "| 4 server fan-out |",
        "| 5 peer comparison |",
        "| 6 replicas on redis |",
        "| 7 plain servers |",
    ] {
        assert!(text.contains(row), "no `{row}` in:\n{text}");
    }
    assert!(!text.contains("FAILED"), "{text}");
    // Rows 1 to 4 are always built: each of their lines ends in a ratio, a number.
    let measured: Vec<&str> = text
        .lines()
        .filter(|l| (1..=4).any(|n| l.starts_with(&format!("| {n} "))))
        .collect();
    for line in &measured {
        let ratio = line
            .trim_end_matches('|')
            .rsplit('|')
            .next()
            .unwrap_or("")
            .trim();
        assert!(ratio.parse::<f64>().is_ok(), "no ratio in `{line}`");
    }
    // Row 5 is measured, or says it is not in this build.
    let row5 = text
        .lines()
        .find(|l| l.starts_with("| 5 peer comparison |"))
        .unwrap_or_default();
    assert!(
        row5.contains("rmcp") && (row5.contains("not in this build") || row5.contains("k/s")),
        "{row5}"
    );
    // The surface never changes its tool list: row 1's figures for it are zero.
    assert!(
        text.contains("| 1 cache stability | model-facing tool-list changes (200 steps, 2 games at once) | 0 |"),
        "{text}"
    );
    assert!(
        text.matches("| 4 server fan-out |").count() >= 2,
        "row 4 has its latency figures:\n{text}"
    );
    // Row 6 needs redis-server, which scripts/test installs: its p50 and p99 figures.
    assert!(
        text.matches("| 6 replicas on redis |").count() >= 2,
        "row 6 has its latency figures:\n{text}"
    );
    // Row 7: every never-initialized connection closed by the handshake timeout, memory flat.
    assert!(
        text.contains("| 7 handshake timeout | connections closed by the 3s handshake timeout | 3000 | 3000 (connections opened) |"),
        "row 7 has its figures:\n{text}"
    );
    // Row 8: the plain servers' list and task bytes, each with its ratio; the list within
    // its goal of 10% of listing the servers directly.
    let row8: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| 8 plain servers |"))
        .collect();
    assert_eq!(row8.len(), 2, "{text}");
    assert!(row8[0].contains("plain_list_bytes_vs_direct"), "{text}");
    assert!(row8[1].contains("plain_task_bytes_vs_direct"), "{text}");
    let ratio: f64 = row8[0]
        .trim_end_matches('|')
        .rsplit('|')
        .next()
        .unwrap_or("")
        .trim()
        .parse()
        .expect("a ratio");
    assert!(ratio <= 0.10, "{}", row8[0]);
    // The progress bar goes to stderr and reaches its end.
    assert!(err.contains("8/8 done"), "{err}");
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
