//! The suite end to end through real processes and sockets: the reference fixture as a child
//! process on stdio (a command target) and as a WebSocket server with a shared principal.

use mcpl_conformance::{Options, Outcome, ServerTarget, run_server_suite};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

const FIXTURE: &str = env!("CARGO_BIN_EXE_mcpl-conformance-fixture");

fn options(only: &[&str]) -> Options {
    Options {
        only: only.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(10),
        wait: Duration::from_secs(2),
        quiet: Duration::from_millis(100),
        ..Options::default()
    }
}

#[tokio::test]
async fn s13_command_target_runs_the_fixture_per_connection() {
    let target = ServerTarget::Command(vec![FIXTURE.to_owned()]);
    let report = run_server_suite(target, options(&["v01", "v04", "v09", "v27", "v37"])).await;
    for c in &report.checks {
        match (&c.id[..], &c.outcome) {
            ("v09", Outcome::NotApplicable { .. }) => {}
            (_, Outcome::Pass) => {}
            (id, other) => panic!(
                "{id}: {other:?}\n{}",
                mcpl_conformance::render::table(&report)
            ),
        }
    }
}

#[tokio::test]
async fn s13_command_target_catches_a_skipped_rev() {
    let target = ServerTarget::Command(vec![FIXTURE.into(), "--fault".into(), "skip_rev".into()]);
    let report = run_server_suite(target, options(&["v04"])).await;
    assert!(
        report.failed(),
        "{}",
        mcpl_conformance::render::table(&report)
    );
}

#[tokio::test]
async fn v14_url_target_with_a_token_shares_the_principal() {
    let mut child = tokio::process::Command::new(FIXTURE)
        .args(["--listen", "127.0.0.1:0", "--token", "alice"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the fixture binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let url = tokio::io::BufReader::new(stdout)
        .lines()
        .next_line()
        .await
        .expect("reads the fixture's stdout")
        .expect("the fixture prints its URL");
    let target = ServerTarget::Url {
        url,
        token: Some("alice".into()),
        headers: Vec::new(),
    };
    let report = run_server_suite(target, options(&["v09", "v14", "v32"])).await;
    for c in &report.checks {
        assert!(
            matches!(c.outcome, Outcome::Pass),
            "{}: {:?}\n{}",
            c.id,
            c.outcome,
            mcpl_conformance::render::table(&report)
        );
    }
    let _ = child.kill().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_fails_every_check_at_once() {
    let target = ServerTarget::Command(vec!["/nonexistent/mcpl-server-under-test".into()]);
    let report = run_server_suite(target, options(&[])).await;
    assert_eq!(report.checks.len(), 30);
    for c in &report.checks {
        let Outcome::Fail { reason, .. } = &c.outcome else {
            panic!("{}: {:?}", c.id, c.outcome);
        };
        assert!(reason.contains("could not be reached"), "{reason}");
    }
}

#[tokio::test]
async fn a_host_that_cannot_start_fails_every_check_at_once() {
    use mcpl_conformance::{HostTarget, run_host_suite};
    let target = HostTarget::Command(vec!["/nonexistent/mcpl-host-under-test".into()]);
    let report = run_host_suite(target, options(&[])).await;
    assert_eq!(report.checks.len(), 18 + 8);
    assert!(
        report
            .checks
            .iter()
            .all(|c| matches!(c.outcome, Outcome::Fail { .. }))
    );
}

/// A response with neither `result` nor `error` (a raw frame mcpl-rpc would never write) fails
/// the check as soon as it is read, naming the frame, not at the suite's timeout.
#[tokio::test]
async fn s13_a_response_without_result_or_error_fails_when_read() {
    let target = ServerTarget::Command(vec![
        FIXTURE.into(),
        "--fault".into(),
        "response_without_outcome".into(),
    ]);
    let report = run_server_suite(target, options(&["v02", "v03"])).await;
    assert_eq!(report.checks.len(), 2);
    for check in &report.checks {
        let Outcome::Fail { reason, .. } = &check.outcome else {
            panic!(
                "{} should fail: {}",
                check.id,
                mcpl_conformance::render::table(&report)
            );
        };
        assert!(
            reason.contains("not a JSON-RPC message") && reason.contains("`result`"),
            "{}: the reason should name the frame, not a timeout: {reason}",
            check.id
        );
    }
}
