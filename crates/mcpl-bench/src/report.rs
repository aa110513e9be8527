//! The results: one row per measurement, each figure ours against its baseline.

use std::fmt::Write as _;

/// The unit of a figure's two values, which decides how they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Things per second (more is better).
    PerSecond,
    /// A duration in microseconds (less is better).
    Micros,
    /// A size in bytes (less is better).
    Bytes,
    /// A count of events (less is better).
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
            Unit::Micros => format!("{value:.0} µs"),
            Unit::Bytes if value >= 1024.0 * 1024.0 => {
                format!("{:.1} MiB", value / (1024.0 * 1024.0))
            }
            Unit::Bytes if value >= 1024.0 => format!("{:.1} KiB", value / 1024.0),
            Unit::Bytes => format!("{value:.0} B"),
            Unit::Count => format!("{value:.0}"),
        }
    }
}

/// One measured figure and the baseline it is compared against.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
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
}

impl Figure {
    /// Ours divided by the baseline. For rates more is better; for times and sizes less is.
    pub fn ratio(&self) -> f64 {
        self.ours / self.baseline.max(f64::MIN_POSITIVE)
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
    /// The row number (1 to 7).
    pub number: u8,
    /// The row's title ("controller throughput").
    pub title: &'static str,
    /// Its outcome.
    pub outcome: RowOutcome,
}

/// Everything one `mcpl bench` run found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Whether this was a `--quick` run (scaled down; numbers are noisier).
    pub quick: bool,
    /// The machine it ran on ("2 CPUs, Intel(R) Xeon(R) Processor").
    pub machine: String,
    /// The rows, in order.
    pub rows: Vec<Row>,
    /// Row 1's comparison as an SVG bar chart, when row 1 was measured.
    pub chart: Option<String>,
}

impl Report {
    /// The results as one Markdown table: row, measure, ours, baseline, ratio.
    pub fn table(&self) -> String {
        let mut out = String::new();
        out.push_str("| row | measure | ours | baseline | ratio |\n");
        out.push_str("|---|---|---:|---|---:|\n");
        for row in &self.rows {
            let head = format!("{} {}", row.number, row.title);
            match &row.outcome {
                RowOutcome::Measured(figures) => {
                    for f in figures {
                        let _ = writeln!(
                            out,
                            "| {head} | {} | {} | {} ({}) | {:.2} |",
                            f.measure,
                            f.unit.show(f.ours),
                            f.unit.show(f.baseline),
                            f.baseline_name,
                            f.ratio()
                        );
                    }
                }
                RowOutcome::Skipped(why) => {
                    let _ = writeln!(out, "| {head} | not measured: {why} | – | – | – |");
                }
                RowOutcome::Failed(why) => {
                    let _ = writeln!(out, "| {head} | FAILED: {why} | – | – | – |");
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
        format!(
            "Machine: {}. {kind}.\n\n{}\nRatio = ours / baseline, both measured in this run. \
             For rates more is better; for times and sizes less is better.\n",
            self.machine,
            self.table()
        )
    }

    /// True when no row failed.
    pub fn ok(&self) -> bool {
        !self
            .rows
            .iter()
            .any(|r| matches!(r.outcome, RowOutcome::Failed(_)))
    }
}

/// This machine: its CPU count and model name (from `/proc/cpuinfo` where there is one).
pub fn machine() -> String {
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
    format!("{cpus} CPUs, {model}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_line_per_figure_and_marks_skipped_rows() {
        let report = Report {
            quick: true,
            machine: "2 CPUs".into(),
            chart: None,
            rows: vec![
                Row {
                    number: 2,
                    title: "controller throughput",
                    outcome: RowOutcome::Measured(vec![Figure {
                        measure: "hint changes applied".into(),
                        ours: 250_000.0,
                        baseline_name: "parse only".into(),
                        baseline: 1_000_000.0,
                        unit: Unit::PerSecond,
                    }]),
                },
                Row {
                    number: 1,
                    title: "cache stability",
                    outcome: RowOutcome::Skipped("the surface host is not built yet".into()),
                },
            ],
        };
        let table = report.table();
        assert!(
            table.contains(
                "| 2 controller throughput | hint changes applied | 250.0 k/s | 1.00 M/s (parse only) | 0.25 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| 1 cache stability | not measured: the surface host is not built yet"),
            "{table}"
        );
        assert!(report.ok());
        assert!(report.markdown().starts_with("Machine: 2 CPUs. quick run"));
    }

    #[test]
    fn units_pick_a_readable_magnitude() {
        assert_eq!(Unit::Micros.show(1500.0), "1.50 ms");
        assert_eq!(Unit::Micros.show(42.0), "42 µs");
        assert_eq!(Unit::Bytes.show(2048.0), "2.0 KiB");
        assert_eq!(Unit::PerSecond.show(12.0), "12/s");
    }
}
