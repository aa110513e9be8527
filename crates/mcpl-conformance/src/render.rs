//! Renderers for a [`Report`]: a table for people, JSON for programs, JUnit XML for CI.

use crate::report::{Outcome, Report};
use std::fmt::Write;

/// The report as a plain-text table, one row per check, failures' reasons and transcripts
/// below it, and a summary line.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "RFC-014 conformance: {} `{}`",
        report.side, report.target
    );
    let width = report
        .checks
        .iter()
        .map(|c| c.title.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(out, "{:<5} {:<width$} {:<7} note", "id", "check", "result");
    for c in &report.checks {
        let note = match &c.outcome {
            Outcome::Pass => String::new(),
            other => first_line(other.reason().unwrap_or("")),
        };
        let _ = writeln!(
            out,
            "{:<5} {:<width$} {:<7} {note}",
            c.id,
            c.title,
            c.outcome.label()
        );
    }
    for c in &report.checks {
        if let Outcome::Fail { reason, transcript } = &c.outcome {
            let _ = writeln!(out, "\n--- {} failed: {}", c.id, c.title);
            let _ = writeln!(out, "rule: {}", c.rfc);
            let _ = writeln!(out, "why:  {reason}");
            for entry in transcript {
                let _ = writeln!(out, "  {}", entry.line());
            }
        }
    }
    let c = report.counts();
    let _ = writeln!(
        out,
        "\n{} passed, {} failed; counted apart: {} not applicable",
        c.passed, c.failed, c.not_applicable
    );
    out
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// The report as pretty JSON: `{side, target, checks: [{id, title, rfc, result, reason?,
/// transcript?, duration_ms}], summary: {passed, failed, not_applicable}}`.
pub fn json(report: &Report) -> String {
    let counts = report.counts();
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.insert(
            "summary".into(),
            serde_json::to_value(counts).unwrap_or_default(),
        );
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// The report as JUnit XML: one `<testsuite>`, one `<testcase>` per check, `<failure>` with the
/// transcript, `<skipped>` with the reason for a check not applicable.
pub fn junit(report: &Report) -> String {
    let counts = report.counts();
    let (failed, skipped) = (counts.failed, counts.not_applicable);
    let total_ms: u64 = report.checks.iter().map(|c| c.duration_ms).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let suite = format!("rfc014-conformance-{}", report.side);
    let _ = writeln!(
        out,
        "<testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\">",
        escape(&suite),
        report.checks.len(),
        seconds(total_ms)
    );
    let _ = writeln!(
        out,
        "  <properties><property name=\"target\" value=\"{}\"/></properties>",
        escape(&report.target)
    );
    for c in &report.checks {
        let name = format!("{} {}", c.id, c.title);
        let _ = write!(
            out,
            "  <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
            escape(&suite),
            escape(&name),
            seconds(c.duration_ms)
        );
        match &c.outcome {
            Outcome::Pass => out.push_str("/>\n"),
            Outcome::NotApplicable { reason } => {
                let _ = writeln!(
                    out,
                    ">\n    <skipped message=\"{}: {}\"/>\n  </testcase>",
                    c.outcome.label(),
                    escape(reason)
                );
            }
            Outcome::Fail { reason, transcript } => {
                let mut body = format!("rule: {}\n", c.rfc);
                for entry in transcript {
                    body.push_str(&entry.line());
                    body.push('\n');
                }
                let _ = writeln!(
                    out,
                    ">\n    <failure message=\"{}\">{}</failure>\n  </testcase>",
                    escape(reason),
                    escape(&body)
                );
            }
        }
    }
    out.push_str("</testsuite>\n");
    out
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Escapes text for an XML attribute or element. Characters XML 1.0 cannot hold at all
/// (most C0 controls) become `?`, so a peer's bytes can never make the file unreadable.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Side, VECTORS};
    use crate::report::CheckResult;
    use crate::transcript::{Direction, Entry};
    use serde_json::json;

    fn sample() -> Report {
        let mut r = Report::new(Side::Server, "mcpl arcade <&>");
        r.checks
            .push(CheckResult::new(&VECTORS[0], Outcome::Pass, 3));
        r.checks.push(CheckResult::new(
            &VECTORS[1],
            Outcome::Fail {
                reason: "a push \"followed\" <rev 3> & more\u{1}".into(),
                transcript: vec![Entry {
                    at_ms: 5,
                    conn: "A".into(),
                    from: Direction::Peer,
                    message: json!({"method": "tools/hints", "params": {"rev": 3}}),
                }],
            },
            7,
        ));
        r.checks.push(CheckResult::new(
            &VECTORS[8],
            Outcome::NotApplicable {
                reason: "needs two connections".into(),
            },
            0,
        ));
        r
    }

    #[test]
    fn junit_escapes_every_special_character() {
        let xml = junit(&sample());
        assert!(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        assert!(xml.contains("value=\"mcpl arcade &lt;&amp;&gt;\""));
        assert!(xml.contains("a push &quot;followed&quot; &lt;rev 3&gt; &amp; more?"));
        assert!(xml.contains("<skipped message=\"n/a: needs two connections\"/>"));
        assert!(xml.contains("&quot;tools/hints&quot;"));
        // Nothing unescaped from the peer's text survives inside the failure body.
        let body = xml.split("<failure").nth(1).unwrap();
        let inner = body.split('>').skip(1).collect::<Vec<_>>().join(">");
        assert!(!inner.split("</failure").next().unwrap().contains('<'));
    }

    #[test]
    fn json_has_a_summary_and_flattened_results() {
        let v: serde_json::Value = serde_json::from_str(&json(&sample())).unwrap();
        assert_eq!(
            v["summary"],
            json!({"passed": 1, "failed": 1, "not_applicable": 1})
        );
        assert_eq!(v["checks"][1]["result"], "fail");
        assert_eq!(v["checks"][1]["transcript"][0]["conn"], "A");
        assert_eq!(v["checks"][2]["reason"], "needs two connections");
    }

    #[test]
    fn table_lists_every_check_and_the_failing_transcript() {
        let t = table(&sample());
        assert!(t.contains("v01"));
        assert!(t.contains("--- v02 failed"));
        assert!(t.contains("peer>  {\"method\":\"tools/hints\""));
        assert!(t.contains("1 passed, 1 failed; counted apart: 1 not applicable"));
    }
}
