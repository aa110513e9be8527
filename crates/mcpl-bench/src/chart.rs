//! Small standalone SVG charts: a horizontal bar chart (the cache-stability comparison) and a
//! line chart on a logarithmic x axis (the growth curves).

use std::fmt::Write as _;

/// One bar: its label, its value and the text printed after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The label left of the bar.
    pub label: String,
    /// The bar's length, in the chart's unit.
    pub value: f64,
    /// The text right of the bar ("12.3 KiB, 41 changes").
    pub note: String,
}

const WIDTH: f64 = 720.0;
const LABEL: f64 = 190.0;
const NOTE: f64 = 170.0;
const ROW: f64 = 34.0;
const TOP: f64 = 44.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders `bars` under `title`. Bars are scaled to the largest value; a zero value draws a
/// hairline so it is visibly there.
pub fn bar_chart(title: &str, bars: &[Bar]) -> String {
    let height = TOP + ROW * bars.len() as f64 + 16.0;
    let max = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let span = WIDTH - LABEL - NOTE;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="12" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let len = if max > 0.0 {
            (bar.value / max * span).max(1.0)
        } else {
            1.0
        };
        let _ = writeln!(
            svg,
            r#"<text x="{x}" y="{ty}" text-anchor="end">{label}</text>"#,
            x = LABEL - 8.0,
            ty = y + 17.0,
            label = escape(&bar.label)
        );
        let fill = if i == 0 { "#2a9d8f" } else { "#e76f51" };
        let _ = writeln!(
            svg,
            r#"<rect x="{LABEL}" y="{y}" width="{len:.1}" height="24" fill="{fill}"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="{x:.1}" y="{ty}">{note}</text>"#,
            x = LABEL + len + 6.0,
            ty = y + 17.0,
            note = escape(&bar.note)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// One growth curve: a named series of `(x, y)` points, drawn by [`line_chart`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Curve {
    /// The file name the chart is written to (`change-cost-instances.svg`).
    pub file: String,
    /// The chart's title.
    pub title: String,
    /// What x counts ("open instances").
    pub x_label: String,
    /// What y is, with its unit ("µs per change").
    pub y_label: String,
    /// The points, by increasing x (x > 0: the axis is logarithmic).
    pub points: Vec<(f64, f64)>,
}

const PLOT_LEFT: f64 = 80.0;
const PLOT_TOP: f64 = 44.0;
const PLOT_WIDTH: f64 = 600.0;
const PLOT_HEIGHT: f64 = 260.0;

/// Renders `curve` as a line chart: x on a base-10 logarithmic axis (growth from 1 to 1,000
/// reads evenly), y linear from zero, each point marked and labelled with its value.
pub fn line_chart(curve: &Curve) -> String {
    let width = PLOT_LEFT + PLOT_WIDTH + 40.0;
    let height = PLOT_TOP + PLOT_HEIGHT + 56.0;
    let lx = |x: f64| x.max(1e-9).log10();
    let (x0, x1) = curve
        .points
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), (x, _)| {
            (lo.min(lx(*x)), hi.max(lx(*x)))
        });
    let x_span = if x1 > x0 { x1 - x0 } else { 1.0 };
    let y_max = curve.points.iter().map(|p| p.1).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let px = |x: f64| PLOT_LEFT + (lx(x) - x0) / x_span * PLOT_WIDTH;
    let py = |y: f64| PLOT_TOP + PLOT_HEIGHT - (y.max(0.0) / y_max) * PLOT_HEIGHT;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="12" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(&curve.title)
    );
    // Axes.
    let bottom = PLOT_TOP + PLOT_HEIGHT;
    let _ = writeln!(
        svg,
        r##"<path d="M{PLOT_LEFT} {PLOT_TOP} V{bottom} H{right}" stroke="#333" fill="none"/>"##,
        right = PLOT_LEFT + PLOT_WIDTH
    );
    for i in 0..=4 {
        let y = y_max * f64::from(i) / 4.0;
        let _ = writeln!(
            svg,
            r##"<text x="{x}" y="{ty:.1}" text-anchor="end" fill="#555">{label}</text>"##,
            x = PLOT_LEFT - 6.0,
            ty = py(y) + 4.0,
            label = short(y)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="14" y="{y:.1}" transform="rotate(-90 14 {y:.1})" text-anchor="middle">{}</text>"#,
        escape(&curve.y_label),
        y = PLOT_TOP + PLOT_HEIGHT / 2.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="{x:.1}" y="{y}" text-anchor="middle">{}</text>"#,
        escape(&curve.x_label),
        x = PLOT_LEFT + PLOT_WIDTH / 2.0,
        y = bottom + 40.0
    );
    // The line and its points.
    let path: Vec<String> = curve
        .points
        .iter()
        .enumerate()
        .map(|(i, (x, y))| {
            format!(
                "{}{:.1} {:.1}",
                if i == 0 { "M" } else { "L" },
                px(*x),
                py(*y)
            )
        })
        .collect();
    let _ = writeln!(
        svg,
        r##"<path d="{}" stroke="#2a9d8f" stroke-width="2" fill="none"/>"##,
        path.join(" ")
    );
    for (x, y) in &curve.points {
        let _ = writeln!(
            svg,
            r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="#2a9d8f"/>"##,
            px(*x),
            py(*y)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#333">{}</text>"##,
            px(*x),
            py(*y) - 8.0,
            short(*y)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            px(*x),
            bottom + 18.0,
            short(*x)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// A number in a few characters: "0.85", "12.3", "1000", whole numbers without decimals.
fn short(v: f64) -> String {
    if v.fract() == 0.0 || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_and_zero_is_a_hairline() {
        let svg = bar_chart(
            "bytes <re-sent>",
            &[
                Bar {
                    label: "surface".into(),
                    value: 0.0,
                    note: "0 B".into(),
                },
                Bar {
                    label: "plain".into(),
                    value: 100.0,
                    note: "100 B".into(),
                },
            ],
        );
        assert!(svg.starts_with("<svg "), "{svg}");
        assert!(svg.contains("bytes &lt;re-sent&gt;"), "{svg}");
        assert!(
            svg.contains(r#"width="1.0""#),
            "the zero bar is a hairline: {svg}"
        );
        assert!(
            svg.contains(&format!(r#"width="{:.1}""#, WIDTH - LABEL - NOTE)),
            "{svg}"
        );
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn line_charts_mark_every_point_on_a_log_axis() {
        let curve = Curve {
            file: "c.svg".into(),
            title: "cost <per> change".into(),
            x_label: "open instances".into(),
            y_label: "µs".into(),
            points: vec![(1.0, 2.0), (10.0, 2.5), (1000.0, 3.0)],
        };
        let svg = line_chart(&curve);
        assert!(svg.starts_with("<svg "), "{svg}");
        assert!(svg.contains("cost &lt;per&gt; change"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        // Log x: 10 sits a third of the way from 1 to 1,000.
        let third = PLOT_LEFT + PLOT_WIDTH / 3.0;
        assert!(svg.contains(&format!("L{third:.1} ")), "{svg}");
        assert!(svg.contains(">1000<"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
