//! Running every row in order.

use crate::controller;
use crate::fanout;
use crate::peers;
use crate::progress::Progress;
use crate::report::{Report, Row, RowOutcome, machine};
use std::path::PathBuf;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// A short run for CI: every row, scaled down.
    pub quick: bool,
    /// The `mcpl` binary, which row 4 starts as its child servers.
    pub exe: PathBuf,
}

/// Why rows 1 and 3 are not measured.
const NO_SURFACE: &str =
    "not built yet: needs the surface host's session API (mcpl-surface), still in progress";

/// Runs every row in order, drawing `progress` (five steps), and returns the report. A row
/// that fails is reported as failed; the others still run.
pub fn run(config: &BenchConfig, progress: &mut Progress) -> Report {
    let quick = config.quick;
    let mut rows = Vec::new();

    progress.status("1 cache stability");
    rows.push(Row {
        number: 1,
        title: "cache stability",
        outcome: RowOutcome::Skipped(NO_SURFACE.into()),
    });

    progress.advance("2 controller throughput");
    let settings = controller::Settings {
        frames: if quick { 2_000 } else { 50_000 },
        passes: if quick { 1 } else { 5 },
        budget: Duration::from_secs(if quick { 5 } else { 20 }),
    };
    rows.push(Row {
        number: 2,
        title: "controller throughput",
        outcome: outcome(controller::measure(settings)),
    });

    progress.advance("3 surface overhead");
    rows.push(Row {
        number: 3,
        title: "surface overhead",
        outcome: RowOutcome::Skipped(NO_SURFACE.into()),
    });

    progress.advance("4 server fan-out");
    let runtime = tokio::runtime::Runtime::new();
    let fanout = fanout::Settings {
        exe: config.exe.clone(),
        principals: if quick { 20 } else { 1_000 },
        budget: Duration::from_secs(if quick { 10 } else { 120 }),
    };
    let (row4, row5) = match runtime {
        Ok(runtime) => {
            let row4 = outcome(runtime.block_on(fanout::measure(&fanout, progress)));
            progress.advance("5 peer comparison");
            let row5 = if peers::BUILT {
                let settings = peers::Settings {
                    calls: if quick { 200 } else { 20_000 },
                    budget: Duration::from_secs(if quick { 5 } else { 20 }),
                };
                outcome(runtime.block_on(peers::measure(settings)))
            } else {
                RowOutcome::Skipped(
                    "not in this build: needs the `rmcp` feature \
                     (cargo run --release -p mcpl-cli --features bench-rmcp -- bench)"
                        .into(),
                )
            };
            (row4, row5)
        }
        Err(e) => {
            progress.advance("5 peer comparison");
            let failed = RowOutcome::Failed(format!("starting tokio: {e}"));
            (failed.clone(), failed)
        }
    };
    rows.push(Row {
        number: 4,
        title: "server fan-out",
        outcome: row4,
    });
    rows.push(Row {
        number: 5,
        title: "peer comparison",
        outcome: row5,
    });
    progress.finish();
    Report {
        quick,
        machine: machine(),
        rows,
    }
}

fn outcome(result: Result<Vec<crate::report::Figure>, crate::BenchError>) -> RowOutcome {
    match result {
        Ok(figures) => RowOutcome::Measured(figures),
        Err(e) => RowOutcome::Failed(e.to_string()),
    }
}
