//! The results: one row per measurement, each figure ours against its baseline, and the two
//! ways they are printed: a Markdown table and the JSON of `mcpl bench --json`.

use crate::chart::Curve;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The unit of a figure's two values, which decides how they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Things per second (more is better).
    PerSecond,
    /// A duration in microseconds (less is better).
    Micros,
    /// A size in bytes (less is better).
    Bytes,
    /// A size in KiB (less is better).
    Kib,
    /// A count of events (less is better).
    #[default]
    Count,
}

impl Unit {
    /// Prints `value` in this unit with a readable magnitude.
    pub fn show(self, value: f64) -> String {
        match self {
            Unit::PerSecond if value >= 1e6 => format!("{:.2} M/s", value / 1e6),
            Unit::PerSecond if value >= 1e3 => format!("{:.1} k/s", value / 1e3),
            Unit::PerSecond => format!("{value:.0}/s"),
            Unit::Micros if value >= 1e3 => format!("{:.2} ms", value / 1e3),
            Unit::Micros if value.abs() < 10.0 => format!("{value:.2} µs"),
            Unit::Micros => format!("{value:.0} µs"),
            Unit::Bytes if value >= 1024.0 * 1024.0 => {
                format!("{:.1} MiB", value / (1024.0 * 1024.0))
            }
            Unit::Bytes if value >= 1024.0 => format!("{:.1} KiB", value / 1024.0),
            Unit::Bytes => format!("{value:.0} B"),
            Unit::Kib => format!("{value:.1} KiB"),
            Unit::Count => format!("{value:.0}"),
        }
    }

    /// The unit's name in the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Unit::PerSecond => "per_second",
            Unit::Micros => "us",
            Unit::Bytes => "bytes",
            Unit::Kib => "KiB",
            Unit::Count => "count",
        }
    }
}

/// The goal of a figure that has one of the issue's ids.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The ratio must be at most this.
    RatioAtMost(f64),
    /// The ratio must be at least this.
    RatioAtLeast(f64),
    /// Our value itself must be at most this (in the figure's unit).
    OursAtMost(f64),
    /// No goal: the figure is reported.
    Report,
}

impl Goal {
    /// Whether `figure` meets the goal; `None` for [`Goal::Report`].
    pub fn met(self, figure: &Figure) -> Option<bool> {
        match self {
            Goal::RatioAtMost(g) => Some(figure.ratio() <= g),
            Goal::RatioAtLeast(g) => Some(figure.ratio() >= g),
            Goal::OursAtMost(g) => Some(figure.ours <= g),
            Goal::Report => None,
        }
    }

    /// The goal as text ("ratio ≤ 1.25", "ours = 0", "report").
    pub fn text(self) -> String {
        match self {
            Goal::RatioAtMost(g) => format!("ratio ≤ {g}"),
            Goal::RatioAtLeast(g) => format!("ratio ≥ {g}"),
            Goal::OursAtMost(0.0) => "ours = 0".to_owned(),
            Goal::OursAtMost(g) => format!("ours ≤ {g}"),
            Goal::Report => "report".to_owned(),
        }
    }
}

/// The issue's row ids, in its order, with the table row that measures each and its goal.
pub const IDS: [(&str, u8, Goal); 11] = [
    ("cache_list_changes", 1, Goal::OursAtMost(0.0)),
    ("controller_vs_parse", 2, Goal::RatioAtLeast(0.5)),
    ("surface_p50_vs_relay", 3, Goal::RatioAtMost(1.25)),
    ("surface_p50_vs_direct", 3, Goal::Report),
    ("calls_vs_rmcp", 5, Goal::Report),
    ("server_time_vs_rmcp", 5, Goal::RatioAtMost(0.67)),
    ("ws_fanout_p99_vs_ping", 4, Goal::RatioAtMost(2.0)),
    ("ws_kib_per_connection", 4, Goal::OursAtMost(16.0)),
    ("http_kib_per_session", 4, Goal::OursAtMost(16.0)),
    ("redis_p50_vs_memory", 6, Goal::RatioAtMost(4.0)),
    ("change_cost_1000_vs_1", 9, Goal::RatioAtMost(2.0)),
];

/// The goal of the issue's row `id`.
pub fn goal_of(id: &str) -> Goal {
    IDS.iter()
        .find(|(i, _, _)| *i == id)
        .map_or(Goal::Report, |(_, _, g)| *g)
}

/// One measured figure and the baseline it is compared against.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figure {
    /// The issue's id of this figure, when it is one of the issue's rows.
    pub id: Option<&'static str>,
    /// What is measured ("hint changes applied").
    pub measure: String,
    /// Our value.
    pub ours: f64,
    /// What the baseline is ("serde_json parse of the same frames").
    pub baseline_name: String,
    /// The baseline's value, measured in the same run.
    pub baseline: f64,
    /// The unit of both values.
    pub unit: Unit,
    /// With several runs: the least and the most ratio over them (this figure is the run
    /// with the median ratio).
    pub spread: Option<(f64, f64)>,
}

impl Figure {
    /// Ours divided by the baseline. For rates more is better; for times and sizes less is.
    pub fn ratio(&self) -> f64 {
        self.ours / self.baseline.max(f64::MIN_POSITIVE)
    }

    /// This figure under the issue's id `id`.
    pub fn with_id(mut self, id: &'static str) -> Self {
        self.id = Some(id);
        self
    }

    /// The figure's goal: its id's, or [`Goal::Report`] without an id.
    pub fn goal(&self) -> Goal {
        self.id.map_or(Goal::Report, goal_of)
    }
}

/// What came of one row.
#[derive(Debug, Clone, PartialEq)]
pub enum RowOutcome {
    /// Measured: its figures.
    Measured(Vec<Figure>),
    /// Not measured, and why (a part not built yet, a feature left out of this build, a
    /// platform without the needed probe). Never shown with a number.
    Skipped(String),
    /// The measurement failed; the message says how.
    Failed(String),
}

/// One row of the results table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The row number (1 to 9).
    pub number: u8,
    /// The row's title ("controller throughput").
    pub title: &'static str,
    /// Its outcome.
    pub outcome: RowOutcome,
}

/// The machine a run was on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Machine {
    /// CPUs available to this process.
    pub cpus: usize,
    /// The CPU model (from `/proc/cpuinfo`), or the architecture.
    pub model: String,
    /// The 1-minute load average when the run started (Linux), a hint of how busy the
    /// machine was.
    pub load: Option<f64>,
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} CPUs, {}", self.cpus, self.model)?;
        if let Some(load) = self.load {
            write!(f, ", load {load:.2} at start")?;
        }
        Ok(())
    }
}

/// Everything one `mcpl bench` run found (or the medians of several).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Whether this was a `--quick` run (scaled down; numbers are noisier).
    pub quick: bool,
    /// How many runs the figures are the medians of.
    pub runs: usize,
    /// The machine it ran on.
    pub machine: Machine,
    /// The rows, in order.
    pub rows: Vec<Row>,
    /// Row 1's comparison as an SVG bar chart, when row 1 was measured.
    pub chart: Option<String>,
    /// The growth curves measured (change cost against open instances and tools per
    /// instance, server memory against principals).
    pub curves: Vec<Curve>,
}

impl Report {
    /// The results as one Markdown table: row, id, measure, ours, baseline, ratio, goal.
    pub fn table(&self) -> String {
        let mut out = String::new();
        out.push_str("| row | id | measure | ours | baseline | ratio | goal |\n");
        out.push_str("|---|---|---|---:|---|---:|---|\n");
        for row in &self.rows {
            let head = format!("{} {}", row.number, row.title);
            match &row.outcome {
                RowOutcome::Measured(figures) => {
                    for f in figures {
                        let id = f.id.map_or_else(|| "–".to_owned(), |i| format!("`{i}`"));
                        let ratio = match f.spread {
                            Some((lo, hi)) => format!("{:.2} ({lo:.2}–{hi:.2})", f.ratio()),
                            None => format!("{:.2}", f.ratio()),
                        };
                        let goal = match f.id {
                            None => "–".to_owned(),
                            Some(_) => {
                                let goal = f.goal();
                                match goal.met(f) {
                                    Some(true) => format!("{}: met", goal.text()),
                                    Some(false) => format!("{}: **not met**", goal.text()),
                                    None => goal.text(),
                                }
                            }
                        };
                        let _ = writeln!(
                            out,
                            "| {head} | {id} | {} | {} | {} ({}) | {ratio} | {goal} |",
                            f.measure,
                            f.unit.show(f.ours),
                            f.unit.show(f.baseline),
                            f.baseline_name,
                        );
                    }
                }
                RowOutcome::Skipped(why) => {
                    let _ = writeln!(out, "| {head} | – | not measured: {why} | – | – | – | – |");
                }
                RowOutcome::Failed(why) => {
                    let _ = writeln!(out, "| {head} | – | FAILED: {why} | – | – | – | – |");
                }
            }
        }
        out
    }

    /// The whole report as Markdown: the machine, the kind of run, the table, how to read it.
    pub fn markdown(&self) -> String {
        let kind = if self.quick {
            "quick run (scaled down, for CI; numbers are noisy)"
        } else {
            "full run"
        };
        let runs = if self.runs > 1 {
            format!(
                " Each figure is the run with the median ratio of {} runs; the range of the \
                 ratio over the runs is in brackets.",
                self.runs
            )
        } else {
            String::new()
        };
        format!(
            "Machine: {}. {kind}.{runs}\n\n{}\nRatio = ours / baseline, both measured in the same \
             run. For rates more is better; for times and sizes less is better.\n",
            self.machine,
            self.table()
        )
    }

    /// The issue's rows as JSON: `{"machine": {...}, "rows": [...], "failed": [...]}`, one
    /// row per id of [`IDS`], in that order. A row that was not measured has `null` values and
    /// says why; `failed` names every bench row that failed (those without an id too), so a
    /// reader of the JSON alone sees why `mcpl bench` exited with failure.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = IDS
            .iter()
            .map(|(id, number, goal)| self.json_row(id, *number, *goal))
            .collect();
        let failed: Vec<Value> = self
            .rows
            .iter()
            .filter_map(|r| match &r.outcome {
                RowOutcome::Failed(why) => {
                    Some(json!({"row": r.number, "title": r.title, "why": why}))
                }
                _ => None,
            })
            .collect();
        json!({
            "failed": failed,
            "machine": {
                "cpus": self.machine.cpus,
                "model": self.machine.model,
                "load": self.machine.load,
                "quick": self.quick,
                "runs": self.runs.max(1),
            },
            "rows": rows,
        })
    }

    fn json_row(&self, id: &str, number: u8, goal: Goal) -> Value {
        let row = self.rows.iter().find(|r| r.number == number);
        let figure = row.and_then(|r| match &r.outcome {
            RowOutcome::Measured(figures) => figures.iter().find(|f| f.id == Some(id)),
            _ => None,
        });
        match figure {
            Some(f) => json!({
                "id": id,
                "measure": f.measure,
                "ours": finite(f.ours),
                "baseline": finite(f.baseline),
                "baseline_measure": f.baseline_name,
                "ratio": finite(f.ratio()),
                "unit": f.unit.name(),
                "goal": goal.text(),
                "met": goal.met(f),
                "range": f.spread.map(|(lo, hi)| json!([finite(lo), finite(hi)])),
            }),
            None => {
                let why = match row.map(|r| &r.outcome) {
                    Some(RowOutcome::Skipped(why)) => format!("not measured: {why}"),
                    Some(RowOutcome::Failed(why)) => format!("failed: {why}"),
                    Some(RowOutcome::Measured(_)) => "not among the row's figures".to_owned(),
                    None => "the row did not run".to_owned(),
                };
                json!({
                    "id": id, "measure": why, "ours": null, "baseline": null,
                    "ratio": null, "unit": null, "goal": goal.text(), "met": null,
                })
            }
        }
    }

    /// True when no row failed.
    pub fn ok(&self) -> bool {
        !self
            .rows
            .iter()
            .any(|r| matches!(r.outcome, RowOutcome::Failed(_)))
    }

    /// The medians of several runs of the same rows: each figure is taken from the run whose
    /// ratio for it is the median (the lower median for an even count), so ours, baseline and
    /// ratio stay one consistent measurement, and it carries the least and most ratio over
    /// the runs. A row failed in some runs takes the runs that measured it; a row measured in
    /// none keeps the first run's outcome. Curves and the chart are the last run's.
    pub fn median(mut reports: Vec<Report>) -> Report {
        let runs = reports.len();
        let Some(last) = reports.pop() else {
            return Report::default();
        };
        reports.push(last.clone());
        let mut merged = Report {
            runs,
            rows: Vec::new(),
            ..last
        };
        if let Some(first) = reports.first() {
            merged.machine = first.machine.clone();
        }
        let numbers: Vec<u8> = reports[0].rows.iter().map(|r| r.number).collect();
        for number in numbers {
            let rows: Vec<&Row> = reports
                .iter()
                .filter_map(|r| r.rows.iter().find(|row| row.number == number))
                .collect();
            let measured: Vec<&Vec<Figure>> = rows
                .iter()
                .filter_map(|r| match &r.outcome {
                    RowOutcome::Measured(f) => Some(f),
                    _ => None,
                })
                .collect();
            let outcome = if measured.is_empty() {
                rows[0].outcome.clone()
            } else {
                let count = measured.iter().map(|f| f.len()).min().unwrap_or(0);
                RowOutcome::Measured(
                    (0..count)
                        .map(|i| median_figure(measured.iter().map(|f| &f[i]).collect()))
                        .collect(),
                )
            };
            merged.rows.push(Row {
                number,
                title: rows[0].title,
                outcome,
            });
        }
        merged
    }
}

/// The figure with the median ratio of `figures`, carrying the range of their ratios.
pub fn median_figure(mut figures: Vec<&Figure>) -> Figure {
    figures.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let lo = figures.first().map_or(0.0, |f| f.ratio());
    let hi = figures.last().map_or(0.0, |f| f.ratio());
    let mut median = figures[(figures.len() - 1) / 2].clone();
    if figures.len() > 1 {
        median.spread = Some((lo, hi));
    }
    median
}

/// A JSON number, or `null` for NaN and infinities (which JSON cannot carry).
fn finite(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// This machine: its CPU count, model name (from `/proc/cpuinfo` where there is one) and
/// 1-minute load average (from `/proc/loadavg`).
pub fn machine() -> Machine {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().and_then(|x| x.parse().ok()));
    Machine { cpus, model, load }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(id: Option<&'static str>, ours: f64, baseline: f64) -> Figure {
        Figure {
            id,
            measure: "hint changes applied".into(),
            ours,
            baseline_name: "parse only".into(),
            baseline,
            unit: Unit::PerSecond,
            spread: None,
        }
    }

    fn report(rows: Vec<Row>) -> Report {
        Report {
            quick: true,
            runs: 1,
            machine: Machine {
                cpus: 2,
                model: "test".into(),
                load: None,
            },
            rows,
            chart: None,
            curves: Vec::new(),
        }
    }

    #[test]
    fn the_table_has_a_line_per_figure_with_its_goal_and_marks_skipped_rows() {
        let report = report(vec![
            Row {
                number: 2,
                title: "controller throughput",
                outcome: RowOutcome::Measured(vec![figure(
                    Some("controller_vs_parse"),
                    250_000.0,
                    1_000_000.0,
                )]),
            },
            Row {
                number: 1,
                title: "cache stability",
                outcome: RowOutcome::Skipped("the surface host is not built yet".into()),
            },
        ]);
        let table = report.table();
        assert!(
            table.contains(
                "| 2 controller throughput | `controller_vs_parse` | hint changes applied | 250.0 k/s | 1.00 M/s (parse only) | 0.25 | ratio ≥ 0.5: **not met** |"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "| 1 cache stability | – | not measured: the surface host is not built yet"
            ),
            "{table}"
        );
        assert!(report.ok());
        assert!(
            report
                .markdown()
                .starts_with("Machine: 2 CPUs, test. quick run")
        );
    }

    /// The JSON has one row per id of the issue, in order; `ratio` is ours / baseline; a row
    /// not measured has nulls and says why.
    #[test]
    fn json_rows_are_the_issue_ids_with_ratio_ours_over_baseline() {
        let report = report(vec![
            Row {
                number: 2,
                title: "controller throughput",
                outcome: RowOutcome::Measured(vec![figure(
                    Some("controller_vs_parse"),
                    300.0,
                    400.0,
                )]),
            },
            Row {
                number: 5,
                title: "peer comparison",
                outcome: RowOutcome::Skipped("no rmcp".into()),
            },
        ]);
        let json = report.json();
        let ids: Vec<&str> = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = IDS.iter().map(|(id, _, _)| *id).collect();
        assert_eq!(ids, expected);
        let row = &json["rows"][1];
        assert_eq!(row["ours"], 300.0);
        assert_eq!(row["baseline"], 400.0);
        assert_eq!(row["ratio"], 0.75);
        assert_eq!(row["unit"], "per_second");
        assert_eq!(row["goal"], "ratio ≥ 0.5");
        assert_eq!(row["met"], true);
        let rmcp = &json["rows"][4];
        assert_eq!(rmcp["id"], "calls_vs_rmcp");
        assert!(rmcp["ratio"].is_null());
        assert!(rmcp["measure"].as_str().unwrap().contains("no rmcp"));
        assert_eq!(json["machine"]["cpus"], 2);
    }

    /// With several runs each figure is the run with the median ratio (ours and baseline
    /// from that same run), carrying the range of the ratios.
    #[test]
    fn runs_take_the_median_ratio_figure_and_keep_the_range() {
        let run = |ours: f64, baseline: f64| {
            report(vec![Row {
                number: 2,
                title: "controller throughput",
                outcome: RowOutcome::Measured(vec![figure(
                    Some("controller_vs_parse"),
                    ours,
                    baseline,
                )]),
            }])
        };
        let merged = Report::median(vec![run(10.0, 100.0), run(90.0, 100.0), run(40.0, 80.0)]);
        assert_eq!(merged.runs, 3);
        let RowOutcome::Measured(figures) = &merged.rows[0].outcome else {
            panic!("measured");
        };
        assert_eq!(figures[0].ours, 40.0);
        assert_eq!(figures[0].baseline, 80.0);
        assert_eq!(figures[0].ratio(), 0.5);
        assert_eq!(figures[0].spread, Some((0.1, 0.9)));
        // A failed run is left out; the others still give a median.
        let failed = Report {
            rows: vec![Row {
                number: 2,
                title: "controller throughput",
                outcome: RowOutcome::Failed("boom".into()),
            }],
            ..run(0.0, 1.0)
        };
        let merged = Report::median(vec![failed, run(30.0, 100.0), run(20.0, 100.0)]);
        let RowOutcome::Measured(figures) = &merged.rows[0].outcome else {
            panic!("measured");
        };
        assert_eq!(figures[0].ours, 20.0, "lower median of two");
        assert_eq!(merged.json()["rows"][1]["range"], json!([0.2, 0.3]));
    }

    /// A failed row shows in the JSON even when it has no id of its own, with why, and the
    /// report is then not ok (the exit status); a measured one is not listed.
    #[test]
    fn json_names_every_failed_row_with_why() {
        let rep = report(vec![
            Row {
                number: 2,
                title: "controller throughput",
                outcome: RowOutcome::Measured(vec![figure(Some("controller_vs_parse"), 1.0, 2.0)]),
            },
            Row {
                number: 7,
                title: "handshake timeout",
                outcome: RowOutcome::Failed("connect refused".into()),
            },
        ]);
        assert!(!rep.ok());
        assert_eq!(
            rep.json()["failed"],
            json!([{"row": 7, "title": "handshake timeout", "why": "connect refused"}])
        );
        let fine = report(vec![]);
        assert!(fine.ok());
        assert_eq!(fine.json()["failed"], json!([]));
    }

    #[test]
    fn goals_compare_the_ratio_or_our_value() {
        let f = figure(Some("ws_kib_per_connection"), 12.0, 160.0);
        assert_eq!(f.goal(), Goal::OursAtMost(16.0));
        assert_eq!(f.goal().met(&f), Some(true));
        let f = figure(Some("surface_p50_vs_relay"), 130.0, 100.0);
        assert_eq!(f.goal().met(&f), Some(false));
        let f = figure(Some("cache_list_changes"), 0.0, 350.0);
        assert_eq!(f.goal().text(), "ours = 0");
        assert_eq!(f.goal().met(&f), Some(true));
        assert_eq!(
            figure(None, 1.0, 1.0).goal().met(&figure(None, 1.0, 1.0)),
            None
        );
    }

    #[test]
    fn units_pick_a_readable_magnitude() {
        assert_eq!(Unit::Micros.show(1500.0), "1.50 ms");
        assert_eq!(Unit::Micros.show(42.0), "42 µs");
        assert_eq!(Unit::Micros.show(4.25), "4.25 µs");
        assert_eq!(Unit::Bytes.show(2048.0), "2.0 KiB");
        assert_eq!(Unit::Kib.show(15.96), "16.0 KiB");
        assert_eq!(Unit::PerSecond.show(12.0), "12/s");
    }
}
