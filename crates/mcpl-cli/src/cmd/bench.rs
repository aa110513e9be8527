//! `mcpl bench [--quick]`: run every benchmark row against its baseline in the same run and
//! print the results as a Markdown table (the rows and their baselines are described in
//! `mcpl-bench` and docs/BENCHMARKS.md). Progress goes to stderr, the table to stdout.
//!
//! Row 4 starts this same binary as its child servers: with `MCPL_BENCH_CHILD` set,
//! `mcpl bench` serves that role on 127.0.0.1 until its stdin closes instead. With
//! `MCPL_BENCH_SVG=PATH`, row 1's comparison is also written to PATH as an SVG chart.

use anyhow::Context;
use mcpl_bench::{BenchConfig, ChildRole, Progress};
use std::process::ExitCode;

/// Run `mcpl bench`.
pub fn run(quick: bool) -> anyhow::Result<ExitCode> {
    if let Some(role) = ChildRole::from_env() {
        mcpl_bench::serve_child(role?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe().context("finding the mcpl binary for row 4's servers")?;
    let mut progress = Progress::new(8);
    let report = mcpl_bench::run(&BenchConfig { quick, exe }, &mut progress);
    print!("{}", report.markdown());
    if let (Some(path), Some(chart)) = (std::env::var_os("MCPL_BENCH_SVG"), &report.chart) {
        std::fs::write(&path, chart)
            .with_context(|| format!("writing the chart to {}", path.to_string_lossy()))?;
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
