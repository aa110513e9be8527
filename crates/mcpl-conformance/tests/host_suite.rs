//! The host suite against the in-process test host: the correct host passes every host check
//! the suite runs, and each broken host fails the check for the rule it breaks.

mod common;

use common::host::{HostFaults, TestHost};
use mcpl_conformance::{HostTarget, Options, Outcome, Report, run_host_suite};
use std::sync::Arc;
use std::time::Duration;

/// Runs the host suite against the test host. `wait` bounds what must happen; a broken host
/// fails whatever it is, so its runs use a short one, while a correct host on a loaded machine
/// gets a generous one (it finishes as soon as the host acts).
async fn run_with(faults: HostFaults, only: &[&str], wait: Duration) -> Report {
    let options = Options {
        only: only.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(10),
        wait,
        // How long a check listens for what must NOT come (a second telling, a stray open);
        // generous, because on a loaded machine a broken host's second message can be late.
        quiet: Duration::from_millis(600),
    };
    run_host_suite(HostTarget::Launcher(Arc::new(TestHost { faults })), options).await
}

async fn run(faults: HostFaults, only: &[&str]) -> Report {
    run_with(faults, only, Duration::from_secs(1)).await
}

/// The host checks the suite runs (the rest are skipped with a reason).
const RUN: [&str; 21] = [
    "v04", "v05", "v09", "v10", "v11", "v12", "v13", "v14", "v20", "v21", "v29", "v31", "v35",
    "v37", "h01", "h12", "h18", "h25", "h28", "h29", "h59",
];

#[tokio::test]
async fn s13_correct_host_passes_every_host_check() {
    let report = run_with(HostFaults::default(), &[], Duration::from_secs(4)).await;
    assert_eq!(report.checks.len(), 38 + 8);
    for c in &report.checks {
        let ran = RUN.contains(&c.id.as_str()) || c.id == "h64";
        match &c.outcome {
            Outcome::Pass => assert!(ran, "{} passed without being run", c.id),
            Outcome::Skipped { reason } => assert!(!ran, "{} skipped: {reason}", c.id),
            Outcome::Fail { reason, .. } => panic!(
                "{} failed: {reason}\n{}",
                c.id,
                mcpl_conformance::render::table(&report)
            ),
        }
    }
}

async fn assert_caught(faults: HostFaults, checks: &[&str]) {
    let report = run(faults, checks).await;
    for id in checks {
        let c = report.get(id).unwrap();
        assert!(
            matches!(c.outcome, Outcome::Fail { .. }),
            "{id} should fail against {faults:?}: {:?}",
            c.outcome
        );
    }
}

#[tokio::test]
async fn v09_catches_a_host_that_reopens_after_reconnect() {
    assert_caught(
        HostFaults {
            reopen_after_reconnect: true,
            ..HostFaults::default()
        },
        &["v09"],
    )
    .await;
}

#[tokio::test]
async fn v04_catches_a_host_that_applies_a_stale_rev() {
    assert_caught(
        HostFaults {
            apply_stale_rev: true,
            ..HostFaults::default()
        },
        &["v04"],
    )
    .await;
}

#[tokio::test]
async fn v13_catches_a_host_that_tells_an_ended_id_twice() {
    assert_caught(
        HostFaults {
            tell_ended_twice: true,
            ..HostFaults::default()
        },
        &["v13"],
    )
    .await;
}

#[tokio::test]
async fn s13_every_host_check_fails_against_its_broken_host() {
    let d = HostFaults::default;
    let cases: Vec<(HostFaults, &[&str])> = vec![
        (
            HostFaults {
                no_recovery: true,
                ..d()
            },
            &["v12", "v29", "h18"],
        ),
        (
            HostFaults {
                open_undeclared: true,
                ..d()
            },
            &["v10", "h29"],
        ),
        (
            HostFaults {
                no_instance_meta: true,
                ..d()
            },
            &["h64", "v05"],
        ),
        (
            HostFaults {
                skip_tools_list: true,
                ..d()
            },
            &["h28"],
        ),
        (
            HostFaults {
                first_page_only: true,
                ..d()
            },
            &["h01"],
        ),
        (
            HostFaults {
                ignore_server_hints_flag: true,
                ..d()
            },
            &["h12"],
        ),
        (
            HostFaults {
                no_proposed_name: true,
                ..d()
            },
            &["h59"],
        ),
        (
            HostFaults {
                take_definition_name: true,
                ..d()
            },
            &["v20"],
        ),
        (
            HostFaults {
                trust_static_claim: true,
                ..d()
            },
            &["v21"],
        ),
        (
            HostFaults {
                ignore_push_hints: true,
                ..d()
            },
            &["v11"],
        ),
        (
            HostFaults {
                give_up_recovery: true,
                ..d()
            },
            &["h25"],
        ),
    ];
    for (faults, checks) in cases {
        assert_caught(faults, checks).await;
    }
}
