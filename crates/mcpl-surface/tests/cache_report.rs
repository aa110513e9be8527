//! The cache report's ratios (printed by `mcpl demo`, docs/SURFACE.md): when the surface re-sent no
//! list, a baseline that re-sent none reads "same" and one that re-sent some reads infinite.

use mcpl_surface::{BaselineTally, CacheReport};

fn tally(resent_bytes: u64) -> BaselineTally {
    let mut t = BaselineTally::default();
    t.changes = u64::from(resent_bytes > 0);
    t.resent_bytes = resent_bytes;
    t
}

#[test]
fn a_ratio_over_nothing_re_sent_is_same_or_infinite() {
    let report = CacheReport {
        surface_bytes: 100,
        plain: tally(0),
        groups: tally(300),
        ..CacheReport::default()
    };
    let text = report.render();
    let line = |label: &str| {
        text.lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no `{label}` line in {text}"))
            .to_owned()
    };
    let plain = line("plain MCP host");
    assert!(plain.ends_with("same"), "{plain}");
    let groups = line("dynamic-toolsets host");
    assert!(
        groups.contains("∞ (the surface re-sent nothing)"),
        "{groups}"
    );
    assert!(!groups.contains("same"), "{groups}");
}

#[test]
fn the_plain_to_dynamic_toolsets_ratio_is_shown_only_when_the_latter_re_sent_something() {
    let report = CacheReport {
        surface_bytes: 100,
        plain: tally(600),
        groups: tally(300),
        ..CacheReport::default()
    };
    assert!(
        report
            .render()
            .contains("  plain / dynamic-toolsets: 2.0x the bytes\n"),
        "{}",
        report.render()
    );
    let report = CacheReport {
        groups: tally(0),
        ..report
    };
    assert!(
        !report.render().contains("plain / dynamic-toolsets"),
        "{}",
        report.render()
    );
}

#[test]
fn a_baseline_is_measured_against_the_surfaces_whole_list_only_when_there_is_one() {
    let report = CacheReport {
        surface_bytes: 100,
        plain: tally(600),
        groups: tally(300),
        ..CacheReport::default()
    };
    let text = report.render();
    assert!(text.contains("(= 6.0x the surface's whole list)"), "{text}");
    assert!(text.contains("(= 3.0x the surface's whole list)"), "{text}");
    let report = CacheReport {
        surface_bytes: 0,
        ..report
    };
    let text = report.render();
    assert!(!text.contains("the surface's whole list"), "{text}");
}
