//! The server suite against the in-memory fixture: the correct fixture passes every
//! server-side vector, and each broken fixture fails the vector it breaks.

use mcpl_conformance::reference::{Faults, ReferenceServer as Fixture};
use mcpl_conformance::{Options, Outcome, Report, ServerTarget, run_server_suite};
use std::sync::Arc;

async fn run(fixture: Arc<Fixture>, only: &[&str]) -> Report {
    let options = Options {
        only: only.iter().map(|s| s.to_string()).collect(),
        ..Options::default()
    };
    run_server_suite(ServerTarget::Connector(fixture), options).await
}

fn failed(report: &Report) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Fail { .. }))
        .map(|c| c.id.clone())
        .collect()
}

/// Vectors whose rule binds only the host; the server suite reports them skipped.
const HOST_ONLY: [&str; 8] = ["v12", "v19", "v20", "v21", "v24", "v25", "v35", "v36"];

#[tokio::test(start_paused = true)]
async fn s13_correct_fixture_passes_every_server_vector() {
    let report = run(Fixture::shared(Faults::default()), &[]).await;
    assert_eq!(report.checks.len(), 38);
    for c in &report.checks {
        match &c.outcome {
            Outcome::Pass => assert!(!HOST_ONLY.contains(&c.id.as_str()), "{} passed", c.id),
            Outcome::Skipped { reason } => {
                assert!(
                    HOST_ONLY.contains(&c.id.as_str()),
                    "{} skipped: {reason}",
                    c.id
                )
            }
            Outcome::Fail { reason, .. } => panic!(
                "{} failed: {reason}\n{}",
                c.id,
                mcpl_conformance::render::table(&report)
            ),
        }
    }
    assert!(!report.failed());
}

#[tokio::test(start_paused = true)]
async fn v09_v14_v32_are_skipped_with_a_reason_without_a_shared_principal() {
    let report = run(Fixture::separate(Faults::default()), &["v09", "v14", "v32"]).await;
    for c in &report.checks {
        let Outcome::Skipped { reason } = &c.outcome else {
            panic!("{} should be skipped: {:?}", c.id, c.outcome);
        };
        assert!(reason.contains("principal"), "{reason}");
    }
}

async fn assert_caught(faults: Faults, vectors: &[&str]) {
    let report = run(Fixture::shared(faults), vectors).await;
    let failed = failed(&report);
    for v in vectors {
        assert!(
            failed.iter().any(|f| f == v),
            "{v} should fail against {faults:?}\n{}",
            mcpl_conformance::render::table(&report)
        );
        let c = report.get(v).unwrap();
        if let Outcome::Fail { transcript, .. } = &c.outcome {
            assert!(
                !transcript.is_empty(),
                "{v}: a failure carries its transcript"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn v04_catches_a_reused_rev() {
    assert_caught(
        Faults {
            reuse_rev: true,
            ..Faults::default()
        },
        &["v04", "v27"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v04_catches_a_skipped_rev() {
    assert_caught(
        Faults {
            skip_rev: true,
            ..Faults::default()
        },
        &["v04", "v16", "v27"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v37_catches_a_statement_left_out_of_an_empty_list() {
    let faults = Faults {
        no_hints_on_empty_list: true,
        ..Faults::default()
    };
    assert_caught(faults, &["v37", "v27", "v30"]).await;
}

#[tokio::test(start_paused = true)]
async fn v18_catches_a_renamed_instance() {
    assert_caught(
        Faults {
            rename_instance: true,
            ..Faults::default()
        },
        &["v18"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v02_catches_a_call_whose_consequences_are_also_pushed() {
    assert_caught(
        Faults {
            push_own_consequences: true,
            ..Faults::default()
        },
        &["v02"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v08_v38_catch_hints_sent_to_a_hint_less_host() {
    assert_caught(
        Faults {
            hints_to_plain_hosts: true,
            ..Faults::default()
        },
        &["v08"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v13_v32_catch_missing_ended_records() {
    assert_caught(
        Faults {
            no_ended_records: true,
            ..Faults::default()
        },
        &["v13", "v32"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v34_catches_a_bad_name_accepted() {
    assert_caught(
        Faults {
            accept_bad_names: true,
            ..Faults::default()
        },
        &["v34"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v06_catches_a_guessed_instance() {
    assert_caught(
        Faults {
            guess_instance: true,
            ..Faults::default()
        },
        &["v06"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v03_catches_a_change_not_pushed() {
    assert_caught(
        Faults {
            never_push: true,
            ..Faults::default()
        },
        &["v03", "v11", "v29"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v28_catches_a_cancelled_call_whose_change_is_lost() {
    assert_caught(
        Faults {
            drop_cancelled: true,
            ..Faults::default()
        },
        &["v28"],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn v17_catches_a_reopen_that_does_not_adopt() {
    assert_caught(
        Faults {
            no_adoption: true,
            ..Faults::default()
        },
        &["v17", "v22"],
    )
    .await;
}

/// One broken fixture per remaining server vector: each check fails against the fault that
/// breaks its rule.
#[tokio::test(start_paused = true)]
async fn s13_every_server_vector_fails_against_its_broken_fixture() {
    let d = Faults::default;
    let cases: Vec<(Faults, &[&str])> = vec![
        (
            Faults {
                hide_invisible: true,
                ..d()
            },
            &["v01"],
        ),
        (
            Faults {
                no_instance_in_result: true,
                ..d()
            },
            &["v05"],
        ),
        (
            Faults {
                list_changed_on_open: true,
                ..d()
            },
            &["v07"],
        ),
        (
            Faults {
                forget_on_disconnect: true,
                ..d()
            },
            &["v09"],
        ),
        (
            Faults {
                open_undeclared: true,
                ..d()
            },
            &["v10"],
        ),
        (
            Faults {
                restate_refused: true,
                ..d()
            },
            &["v11", "v29"],
        ),
        (
            Faults {
                no_fan_out: true,
                ..d()
            },
            &["v14"],
        ),
        (
            Faults {
                move_not_listed: true,
                ..d()
            },
            &["v15"],
        ),
        (
            Faults {
                close_without_hints: true,
                ..d()
            },
            &["v16"],
        ),
        (
            Faults {
                one_definition: true,
                ..d()
            },
            &["v23"],
        ),
        (
            Faults {
                choose_ignored: true,
                ..d()
            },
            &["v26"],
        ),
        (
            Faults {
                statement_without_loose_tools: true,
                ..d()
            },
            &["v30"],
        ),
        (
            Faults {
                silent_manifest_change: true,
                ..d()
            },
            &["v31"],
        ),
        (
            Faults {
                push_without_grant: true,
                ..d()
            },
            &["v33"],
        ),
        (
            Faults {
                plain_flat_closed: true,
                ..d()
            },
            &["v38"],
        ),
        (
            Faults {
                no_adoption: true,
                ..d()
            },
            &["v22"],
        ),
    ];
    for (faults, vectors) in cases {
        assert_caught(faults, vectors).await;
    }
}
