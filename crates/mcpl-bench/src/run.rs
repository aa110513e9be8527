//! Running every row in order.

use crate::controller;
use crate::fanout;
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
}

/// Runs every row in order, drawing `progress` (eight steps), and returns the report. A row
/// that fails is reported as failed; the others still run.
pub fn run(config: &BenchConfig, progress: &mut Progress) -> Report {
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
            ]
            .into_iter()
            .map(|(number, title)| Row {
                number,
                title,
                outcome: failed.clone(),
            })
            .collect();
            progress.finish();
            return Report {
                quick,
                machine: machine(),
                rows,
                chart: None,
            };
        }
    };

    progress.status("1 cache stability");
    let steps = 200;
    let budget = Duration::from_secs(if quick { 30 } else { 60 });
    let (row1, chart) = match runtime.block_on(surface::session(steps, budget)) {
        Ok(report) => (
            RowOutcome::Measured(surface::cache_figures(&report, steps)),
            Some(surface::cache_chart(&report, steps)),
        ),
        Err(e) => (RowOutcome::Failed(e.to_string()), None),
    };
    rows.push(Row {
        number: 1,
        title: "cache stability",
        outcome: row1,
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
    let calls = if quick { 100 } else { 2_000 };
    let budget = Duration::from_secs(if quick { 10 } else { 30 });
    rows.push(Row {
        number: 3,
        title: "surface overhead",
        outcome: outcome(runtime.block_on(surface::overhead(calls, budget))),
    });

    progress.advance("4 server fan-out");
    let fanout = fanout::Settings {
        exe: config.exe.clone(),
        principals: if quick { 20 } else { 1_000 },
        budget: Duration::from_secs(if quick { 10 } else { 120 }),
    };
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
    progress.advance("6 replicas on redis");
    let settings = replicas::Settings {
        changes: if quick { 50 } else { 2_000 },
        budget: Duration::from_secs(if quick { 5 } else { 30 }),
    };
    rows.push(Row {
        number: 6,
        title: "replicas on redis",
        outcome: runtime.block_on(replicas::measure(&settings)),
    });
    progress.advance("7 handshake timeout");
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
        outcome: outcome(runtime.block_on(handshake::measure(&settings))),
    });
    progress.advance("8 plain servers");
    rows.push(Row {
        number: 8,
        title: "plain servers",
        outcome: outcome(runtime.block_on(plain::measure())),
    });
    progress.finish();
    // The surface's link tasks and the arcades end with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Report {
        quick,
        machine: machine(),
        rows,
        chart,
    }
}

fn outcome(result: Result<Vec<crate::report::Figure>, crate::BenchError>) -> RowOutcome {
    match result {
        Ok(figures) => RowOutcome::Measured(figures),
        Err(e) => RowOutcome::Failed(e.to_string()),
    }
}
