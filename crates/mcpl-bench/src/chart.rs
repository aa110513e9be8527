//! A small horizontal bar chart as standalone SVG, for the cache-stability comparison.

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
}
