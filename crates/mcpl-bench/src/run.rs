//! Running every row in order.

use crate::controller;
use crate::fanout;
use crate::growth;
use crate::handshake;
use crate::peers;
use crate::plain;
use crate::progress::Progress;
use crate::replicas;
use crate::report::{Report, Row, RowOutcome, machine};
use crate::surface;
use std::path::PathBuf;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// A short run for CI: every row, scaled down.
    pub quick: bool,
    /// The `mcpl` binary, which row 4 starts as its child servers.
    pub exe: PathBuf,
    /// How many times to run every row; each figure is then the median (see
    /// [`Report::median`]).
    pub runs: usize,
    /// The rows to run (1 to [`ROWS`]); `None` runs them all. The others are reported as
    /// not measured.
    pub only: Option<Vec<u8>>,
}

impl BenchConfig {
    /// Whether row `number` is to run.
    fn runs_row(&self, number: u8) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(&number))
    }
}

/// The outcome of a row that `--rows` left out.
fn not_selected() -> RowOutcome {
    RowOutcome::Skipped("not among the rows asked for (--rows)".into())
}

/// Rows per run: the steps of the progress bar.
pub const ROWS: usize = 9;

/// Runs every row `config.runs` times (at least once), drawing `progress` ([`ROWS`] steps a
/// run), and returns the medians.
pub fn run_all(config: &BenchConfig, progress: &mut Progress) -> Report {
    let runs = config.runs.max(1);
    let reports = (0..runs)
        .map(|i| {
            let label = if runs > 1 {
                format!("run {}/{runs}: ", i + 1)
            } else {
                String::new()
            };
            if i > 0 {
                progress.advance(&format!("{label}starting"));
            }
            run(config, &label, progress)
        })
        .collect();
    progress.finish();
    Report::median(reports)
}

/// Runs every row once in order, advancing `progress` one step between rows (each step's
/// text after `label`; the caller advances past the last row), and returns the report. A row that fails is reported as failed; the
/// others still run.
pub fn run(config: &BenchConfig, label: &str, progress: &mut Progress) -> Report {
    let quick = config.quick;
    let mut rows = Vec::new();

    let runtime = tokio::runtime::Runtime::new();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            let failed = RowOutcome::Failed(format!("starting tokio: {e}"));
            let rows = [
                (1, "cache stability"),
                (2, "controller throughput"),
                (3, "surface overhead"),
                (4, "server fan-out"),
                (5, "peer comparison"),
                (6, "replicas on redis"),
                (7, "handshake timeout"),
                (8, "plain servers"),
                (9, "change cost"),
            ]
            .into_iter()
            .map(|(number, title)| Row {
                number,
                title,
                outcome: failed.clone(),
            })
            .collect();
            return Report {
                quick,
                runs: 1,
                machine: machine(),
                rows,
                ..Report::default()
            };
        }
    };

    let machine = machine();
    let mut curves = Vec::new();
    progress.status(&format!("{label}1 cache stability"));
    let steps = 200;
    let budget = Duration::from_secs(if quick { 30 } else { 60 });
    let (row1, chart) = if !config.runs_row(1) {
        (not_selected(), None)
    } else {
        match runtime.block_on(surface::session(steps, budget)) {
            Ok(report) => (
                RowOutcome::Measured(surface::cache_figures(&report, steps)),
                Some(surface::cache_chart(&report, steps)),
            ),
            Err(e) => (RowOutcome::Failed(e.to_string()), None),
        }
    };
    rows.push(Row {
        number: 1,
        title: "cache stability",
        outcome: row1,
    });

    progress.advance(&format!("{label}2 controller throughput"));
    let settings = controller::Settings {
        frames: if quick { 2_000 } else { 50_000 },
        passes: if quick { 1 } else { 5 },
        budget: Duration::from_secs(if quick { 5 } else { 20 }),
    };
    rows.push(Row {
        number: 2,
        title: "controller throughput",
        outcome: if config.runs_row(2) {
            outcome(controller::measure(settings))
        } else {
            not_selected()
        },
    });

    progress.advance(&format!("{label}3 surface overhead"));
    let calls = if quick { 100 } else { 2_000 };
    let budget = Duration::from_secs(if quick { 10 } else { 30 });
    rows.push(Row {
        number: 3,
        title: "surface overhead",
        outcome: if config.runs_row(3) {
            outcome(runtime.block_on(surface::overhead(calls, budget)))
        } else {
            not_selected()
        },
    });

    progress.advance(&format!("{label}4 server fan-out"));
    let fanout = fanout::Settings {
        exe: config.exe.clone(),
        principals: if quick { 20 } else { 1_000 },
    };
    let row4 = if !config.runs_row(4) {
        not_selected()
    } else {
        match runtime.block_on(fanout::measure(&fanout, progress)) {
            Ok(measured) => {
                curves.push(measured.memory_curve);
                RowOutcome::Measured(measured.figures)
            }
            Err(e) => RowOutcome::Failed(e.to_string()),
        }
    };
    progress.advance(&format!("{label}5 peer comparison"));
    let row5 = if !config.runs_row(5) {
        not_selected()
    } else if peers::BUILT {
        let settings = peers::Settings {
            calls: if quick { 200 } else { 20_000 },
            budget: Duration::from_secs(if quick { 5 } else { 10 }),
            passes: if quick { 1 } else { 3 },
        };
        outcome(runtime.block_on(peers::measure(settings)))
    } else {
        RowOutcome::Skipped(
            "not in this build: needs the `rmcp` feature \
             (cargo run --release -p mcpl-cli --features bench-rmcp -- bench)"
                .into(),
        )
    };
    rows.push(Row {
        number: 4,
        title: "server fan-out and memory",
        outcome: row4,
    });
    rows.push(Row {
        number: 5,
        title: "peer comparison",
        outcome: row5,
    });
    progress.advance(&format!("{label}6 replicas on redis"));
    let settings = replicas::Settings {
        changes: if quick { 50 } else { 2_000 },
        budget: Duration::from_secs(if quick { 5 } else { 30 }),
    };
    rows.push(Row {
        number: 6,
        title: "replicas on redis",
        outcome: if config.runs_row(6) {
            runtime.block_on(replicas::measure(&settings))
        } else {
            not_selected()
        },
    });
    progress.advance(&format!("{label}7 handshake timeout"));
    let settings = handshake::Settings {
        exe: config.exe.clone(),
        connections: 1_000,
        waves: 3,
        // The default timeout in a full run; a short one keeps `--quick` quick.
        timeout: Duration::from_secs(if quick { 3 } else { 10 }),
    };
    rows.push(Row {
        number: 7,
        title: "handshake timeout",
        outcome: if config.runs_row(7) {
            outcome(runtime.block_on(handshake::measure(&settings)))
        } else {
            not_selected()
        },
    });
    progress.advance(&format!("{label}8 plain servers"));
    rows.push(Row {
        number: 8,
        title: "plain servers",
        outcome: if config.runs_row(8) {
            outcome(runtime.block_on(plain::measure()))
        } else {
            not_selected()
        },
    });
    progress.advance(&format!("{label}9 change cost"));
    let settings = growth::Settings {
        frames: if quick { 100 } else { 20_000 },
        passes: if quick { 1 } else { 3 },
        budget: Duration::from_secs(2),
    };
    let row9 = if !config.runs_row(9) {
        not_selected()
    } else {
        match growth::measure(settings) {
            Ok(measured) => {
                curves.splice(0..0, measured.curves);
                RowOutcome::Measured(measured.figures)
            }
            Err(e) => RowOutcome::Failed(e.to_string()),
        }
    };
    rows.push(Row {
        number: 9,
        title: "change cost",
        outcome: row9,
    });
    // The surface's link tasks and the arcades end with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Report {
        quick,
        runs: 1,
        machine,
        rows,
        chart,
        curves,
    }
}

fn outcome(result: Result<Vec<crate::report::Figure>, crate::error::BenchError>) -> RowOutcome {
    match result {
        Ok(figures) => RowOutcome::Measured(figures),
        Err(e) => RowOutcome::Failed(e.to_string()),
    }
}
