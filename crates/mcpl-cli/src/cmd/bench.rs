//! `mcpl bench [--quick] [--json] [--runs N] [--rows N,N] [--curves DIR] [--table FILE]`: run every benchmark row against
//! its baseline in the same run and print the results, as a Markdown table or as JSON (the
//! rows and their baselines are described in `mcpl-bench` and docs/BENCHMARKS.md). Progress
//! goes to stderr, the results to stdout.
//!
//! Row 4 starts this same binary as its child servers: with `MCPL_BENCH_CHILD` set,
//! `mcpl bench` serves that role on 127.0.0.1 until its stdin closes instead. With
//! `MCPL_BENCH_SVG=PATH`, row 1's comparison is also written to PATH as an SVG chart.

use anyhow::Context;
use mcpl_bench::{BenchConfig, ChildRole, Progress, ROWS};
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `mcpl bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchFlags {
    /// A short run, for CI: every row, scaled down.
    #[arg(long)]
    pub quick: bool,
    /// Print the rows as JSON (`{"machine": {...}, "rows": [...], "failed": [...]}`)
    /// instead of the Markdown table.
    #[arg(long)]
    pub json: bool,
    /// Run every row N times; each figure is then the run with the median ratio, with the
    /// range over the runs.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=50))]
    pub runs: u16,
    /// Also write the growth curves (and row 1's chart) as SVG files into DIR.
    #[arg(long, value_name = "DIR")]
    pub curves: Option<PathBuf>,
    /// Also write the Markdown report to FILE (useful with `--json`).
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Run only these rows (numbers 1 to 9, comma-separated, e.g. `--rows 4,7`); the others
    /// are reported as not measured.
    #[arg(long, value_name = "N,N", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(1..=9))]
    pub rows: Option<Vec<u8>>,
}

/// Run `mcpl bench`.
pub fn run(flags: BenchFlags) -> anyhow::Result<ExitCode> {
    if let Some(role) = ChildRole::from_env() {
        mcpl_bench::serve_child(role?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &flags.curves
        && !dir.is_dir()
    {
        anyhow::bail!("--curves {}: not a directory", dir.display());
    }
    let exe = std::env::current_exe().context("finding the mcpl binary for row 4's servers")?;
    let runs = usize::from(flags.runs);
    let mut progress = Progress::new(ROWS * runs);
    let config = BenchConfig {
        quick: flags.quick,
        exe,
        runs,
        only: flags.rows.clone(),
    };
    let report = mcpl_bench::run_all(&config, &mut progress);
    if flags.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.markdown());
    }
    if let Some(path) = &flags.table {
        std::fs::write(path, report.markdown())
            .with_context(|| format!("writing the table to {}", path.display()))?;
    }
    if let (Some(path), Some(chart)) = (std::env::var_os("MCPL_BENCH_SVG"), &report.chart) {
        std::fs::write(&path, chart)
            .with_context(|| format!("writing the chart to {}", path.to_string_lossy()))?;
    }
    if let Some(dir) = &flags.curves {
        for curve in &report.curves {
            let path = dir.join(&curve.file);
            std::fs::write(&path, mcpl_bench::chart::line_chart(curve))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(chart) = &report.chart {
            let path = dir.join("cache-stability.svg");
            std::fs::write(&path, chart).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
