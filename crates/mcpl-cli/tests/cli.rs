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

/// The ratio column of a table line (`0.25`, or `0.25 (0.20–0.30)` with several runs).
fn ratio_of(line: &str) -> Option<f64> {
    let cells: Vec<&str> = line.trim_end_matches('|').split('|').collect();
    // | row | id | measure | ours | baseline | ratio | goal |
    cells
        .get(6)?
        .split_whitespace()
        .next()
        .and_then(|r| r.parse().ok())
}

/// `mcpl bench --quick` measures what it can and prints one table with every row: measured
/// rows as ratios against their baselines, each of the figures with its id and goal,
/// the others marked "not measured" with the reason, never with a number. Then
/// `mcpl bench --quick --json --curves DIR --table FILE` prints the rows as JSON,
/// exactly its ids in its order, each ratio ours / baseline, and writes the growth curves and
/// the Markdown report. (One test, so the
/// two runs do not measure each other.)
#[test]
fn bench_quick_prints_the_table_and_the_json_with_every_row() {
    let out = mcpl(&["bench", "--quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    assert!(text.starts_with("Machine: "), "{text}");
    assert!(
        text.contains("| row | id | measure | ours | baseline | ratio | goal |"),
        "{text}"
    );
    for row in [
        "| 1 cache stability |",
        "| 2 controller throughput |",
        "| 3 surface overhead |",
        "| 4 server fan-out and memory |",
        "| 5 peer comparison |",
        "| 6 replicas on redis |",
        "| 7 handshake timeout |",
        "| 8 plain servers |",
        "| 9 change cost |",
    ] {
        assert!(text.contains(row), "no `{row}` in:\n{text}");
    }
    assert!(!text.contains("FAILED"), "{text}");
    // Every measured line ends in a ratio, a number; rows 1 to 4, 6, 8 and 9 are always
    // measured (scripts/test installs redis-server for row 6).
    for n in [1, 2, 3, 4, 6, 7, 8, 9] {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("| {n} ")))
            .collect();
        assert!(!lines.is_empty(), "row {n}:\n{text}");
        for line in lines {
            assert!(ratio_of(line).is_some(), "no ratio in `{line}`");
        }
    }
    // The ids, each on a line of the table with its goal.
    for (id, _, goal) in mcpl_bench::IDS {
        if matches!(id, "calls_vs_rmcp" | "server_time_vs_rmcp") {
            continue;
        }
        let line = text
            .lines()
            .find(|l| l.contains(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("no `{id}` in:\n{text}"));
        assert!(line.contains(&goal.text()), "{line}");
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
        text.contains("| 1 cache stability | `cache_list_changes` | model-facing tool-list changes (200 steps, 2 games at once) | 0 |"),
        "{text}"
    );
    // Row 7: every never-initialized connection closed by the handshake timeout, memory flat.
    assert!(
        text.contains("| 7 handshake timeout | – | connections closed by the 3s handshake timeout, warm-up wave included | 4000 | 4000 (connections opened) |"),
        "row 7 has its figures:\n{text}"
    );
    // Row 8: the plain servers' list and task bytes; the list within its goal of 10% of
    // listing the servers directly.
    let row8: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| 8 plain servers |"))
        .collect();
    assert_eq!(row8.len(), 2, "{text}");
    assert!(row8[0].contains("plain_list_bytes_vs_direct"), "{text}");
    assert!(row8[1].contains("plain_task_bytes_vs_direct"), "{text}");
    assert!(ratio_of(row8[0]).is_some_and(|r| r <= 0.10), "{}", row8[0]);
    // The progress bar goes to stderr and reaches its end.
    assert!(err.contains("9/9 done"), "{err}");

    let dir = std::env::temp_dir().join(format!("mcpl-bench-curves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = mcpl(&[
        "bench",
        "--quick",
        "--json",
        "--curves",
        dir.to_str().unwrap(),
        "--table",
        dir.join("table.md").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&text).expect("the output is JSON");
    assert_eq!(json["machine"]["quick"], true);
    assert_eq!(json["machine"]["runs"], 1);
    assert!(
        json["machine"]["cpus"].as_u64().is_some_and(|n| n >= 1),
        "{json}"
    );
    let rows = json["rows"].as_array().expect("rows");
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "cache_list_changes",
            "controller_vs_parse",
            "surface_p50_vs_relay",
            "surface_p50_vs_direct",
            "calls_vs_rmcp",
            "server_time_vs_rmcp",
            "ws_fanout_p99_vs_ping",
            "ws_kib_per_connection",
            "http_kib_per_session",
            "redis_p50_vs_memory",
            "change_cost_1000_vs_1",
        ]
    );
    for row in rows {
        for key in [
            "id", "measure", "ours", "baseline", "ratio", "unit", "goal", "met",
        ] {
            assert!(row.get(key).is_some(), "`{key}` missing from {row}");
        }
        let id = row["id"].as_str().unwrap_or_default();
        if matches!(id, "calls_vs_rmcp" | "server_time_vs_rmcp") && row["ratio"].is_null() {
            assert!(
                row["measure"].as_str().unwrap_or_default().contains("rmcp"),
                "{row}"
            );
            continue;
        }
        let ours = row["ours"].as_f64().unwrap_or_else(|| panic!("{row}"));
        let baseline = row["baseline"].as_f64().unwrap_or_else(|| panic!("{row}"));
        let ratio = row["ratio"].as_f64().unwrap_or_else(|| panic!("{row}"));
        assert!(baseline > 0.0, "{row}");
        assert!(
            (ratio - ours / baseline).abs() <= 1e-9 * ratio.abs().max(1.0),
            "{row}"
        );
        assert!(row["unit"].is_string(), "{row}");
        let goal = row["goal"].as_str().unwrap_or_default();
        assert_eq!(row["met"].is_null(), goal == "report", "{row}");
    }
    assert_eq!(
        rows[0]["ours"], 0.0,
        "the surface's tool list never changed"
    );
    for file in [
        "change-cost-instances.svg",
        "change-cost-tools.svg",
        "memory-principals.svg",
        "cache-stability.svg",
    ] {
        let svg = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"),
            "{file}: {svg}"
        );
    }
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap_or_default();
    assert!(
        table.contains("| 9 change cost | `change_cost_1000_vs_1` |"),
        "--table writes the Markdown report: {table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--runs 0` and a `--curves` path that is not a directory are usage errors that run nothing.
#[test]
fn bench_refuses_bad_runs_and_curves_before_measuring() {
    let out = mcpl(&["bench", "--quick", "--runs", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs"));
    let out = mcpl(&[
        "bench",
        "--quick",
        "--curves",
        "/nonexistent/mcpl-bench-dir",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a directory"), "{err}");
    assert!(out.stdout.is_empty(), "nothing measured or printed");
}

/// `--rows` runs only the rows it names; the others are listed as not measured, and a row
/// number outside 1..=9 is a usage error.
#[test]
fn bench_rows_runs_only_the_rows_it_names() {
    let out = mcpl(&["bench", "--quick", "--json", "--rows", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the output is JSON");
    let rows = json["rows"].as_array().expect("rows");
    for row in rows {
        let measure = row["measure"].as_str().unwrap_or_default();
        if row["id"] == "controller_vs_parse" {
            assert!(row["ratio"].as_f64().is_some_and(|r| r > 0.0), "{row}");
        } else {
            assert!(row["ratio"].is_null(), "{row}");
            assert!(measure.contains("--rows"), "{row}");
        }
    }
    let out = mcpl(&["bench", "--quick", "--rows", "2,10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rows"));
    assert!(out.stdout.is_empty(), "nothing measured or printed");
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
