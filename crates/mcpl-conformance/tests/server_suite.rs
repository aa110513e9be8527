//! The server suite's own mutation test: the correct reference fixture passes every server
//! vector, and every broken fixture (each fault of `reference::Faults`, behind its flag) fails
//! at least one check, with the check's transcript. Run against the in-memory fixture with
//! tokio's clock paused, so the whole suite runs once per fault in well under a second.

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

/// The vectors whose rule binds only the host, which the server suite does not report.
const HOST_ONLY: [&str; 8] = ["v12", "v19", "v20", "v21", "v24", "v25", "v35", "v36"];

#[tokio::test(start_paused = true)]
async fn s13_correct_fixture_passes_every_server_vector() {
    let report = run(Fixture::shared(Faults::default()), &[]).await;
    assert_eq!(report.checks.len(), 38 - HOST_ONLY.len());
    for c in &report.checks {
        assert!(!HOST_ONLY.contains(&c.id.as_str()), "{} reported", c.id);
        assert!(
            matches!(c.outcome, Outcome::Pass),
            "{}: {:?}\n{}",
            c.id,
            c.outcome,
            mcpl_conformance::render::table(&report)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn v09_v14_v32_are_not_applicable_without_a_shared_principal_and_counted_apart() {
    let report = run(Fixture::separate(Faults::default()), &["v09", "v14", "v32"]).await;
    for c in &report.checks {
        let Outcome::NotApplicable { reason } = &c.outcome else {
            panic!("{} should be not applicable: {:?}", c.id, c.outcome);
        };
        assert!(reason.contains("principal"), "{reason}");
    }
    let counts = report.counts();
    assert_eq!((counts.passed, counts.not_applicable), (0, 3));
    assert!(!report.failed());
}

/// At least 40 server faults, each a different defect.
#[test]
fn the_mutation_set_has_at_least_forty_server_faults() {
    assert!(Faults::NAMES.len() >= 40, "{}", Faults::NAMES.len());
    let mut names = Faults::NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Faults::NAMES.len());
    assert!(Faults::default().with("no_such_fault").is_none());
}

#[tokio::test(start_paused = true)]
async fn s13_every_server_fault_fails_at_least_one_check() {
    let mut survivors = Vec::new();
    for name in Faults::NAMES {
        let faults = Faults::default().with(name).expect("a known fault");
        let report = run(Fixture::shared(faults), &[]).await;
        let failed = failed(&report);
        if failed.is_empty() {
            survivors.push(*name);
            continue;
        }
        for id in &failed {
            if let Some(Outcome::Fail { transcript, .. }) = report.get(id).map(|c| &c.outcome) {
                assert!(
                    !transcript.is_empty(),
                    "{name}: {id}'s failure carries its transcript"
                );
            }
        }
    }
    assert!(
        survivors.is_empty(),
        "broken fixtures no check caught: {survivors:?}"
    );
}

/// Each fault is caught by the check for its class, not only by some check.
#[tokio::test(start_paused = true)]
async fn s13_each_fault_is_caught_where_its_rule_is_checked() {
    let cases: &[(&str, &[&str])] = &[
        ("reuse_rev", &["v04", "v27"]),
        ("skip_rev", &["v04", "v16", "v27"]),
        ("no_hints_on_empty_list", &["v37", "v27"]),
        ("rename_instance", &["v18"]),
        ("lowercase_names", &["v18"]),
        ("truncate_names", &["v18"]),
        ("accept_bad_names", &["v34"]),
        ("accept_leading_underscore", &["v34"]),
        ("accept_dotted_names", &["v34"]),
        ("flat_tool_static", &["v01"]),
        ("opened_tool_unlisted", &["v01"]),
        ("hide_invisible", &["v01"]),
        ("statement_omits_oldest", &["v37"]),
        ("statement_omits_newest", &["v37"]),
        ("statement_shows_closed", &["v37"]),
        ("no_ended_records", &["v13", "v32"]),
        ("duplicate_ended", &["v13"]),
        ("reuse_ended_id", &["v13"]),
        ("close_without_ended_id", &["v13"]),
        ("ended_expires_at_once", &["v13"]),
        ("double_response", &["v05", "v17"]),
        ("wrong_response_id", &["v05", "v16"]),
        ("string_response_id", &["v05", "v23"]),
        ("null_result", &["v16"]),
        ("push_own_consequences", &["v02"]),
        ("hints_to_plain_hosts", &["v08"]),
        ("guess_instance", &["v06"]),
        ("never_push", &["v03", "v11", "v29"]),
        ("drop_cancelled", &["v28"]),
        ("no_adoption", &["v17", "v22"]),
        ("no_instance_in_result", &["v05"]),
        ("list_changed_on_open", &["v07"]),
        ("forget_on_disconnect", &["v09"]),
        ("open_undeclared", &["v10"]),
        ("restate_refused", &["v11", "v29"]),
        ("no_fan_out", &["v14"]),
        ("move_not_listed", &["v15"]),
        ("close_without_hints", &["v16"]),
        ("one_definition", &["v23"]),
        ("choose_ignored", &["v26"]),
        ("statement_without_loose_tools", &["v30"]),
        ("silent_manifest_change", &["v31"]),
        ("push_without_grant", &["v33"]),
        ("plain_flat_closed", &["v38"]),
    ];
    let mapped: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    for name in Faults::NAMES {
        assert!(mapped.contains(name), "{name} has no class in this table");
    }
    for (name, vectors) in cases {
        let faults = Faults::default().with(name).expect("a known fault");
        let report = run(Fixture::shared(faults), vectors).await;
        let failed = failed(&report);
        for v in *vectors {
            assert!(
                failed.iter().any(|f| f == v),
                "{v} should fail against {name}\n{}",
                mcpl_conformance::render::table(&report)
            );
        }
    }
}

/// A malformed answer fails the check as soon as it is read, naming the frame, not at the
/// suite's timeout.
#[tokio::test(start_paused = true)]
async fn wrong_ids_and_second_responses_fail_when_read_naming_the_frame() {
    for (name, vector, says) in [
        ("wrong_response_id", "v16", "answers no request in flight"),
        ("string_response_id", "v23", "answers no request in flight"),
        ("double_response", "v17", "answers no request in flight"),
        ("null_result", "v16", "not an object"),
    ] {
        let faults = Faults::default().with(name).expect("a known fault");
        let report = run(Fixture::shared(faults), &[vector]).await;
        let c = report.get(vector).expect("ran");
        let Outcome::Fail { reason, .. } = &c.outcome else {
            panic!("{name}: {vector} passed");
        };
        assert!(reason.contains(says), "{name}: {reason}");
        assert!(!reason.contains("did not finish"), "{name}: {reason}");
    }
}

/// Expectations live in `conformance/vectors.json`: one changed in a copy of the file makes
/// the unbroken fixture fail, naming the file and the step.
#[tokio::test(start_paused = true)]
async fn v17_an_expectation_changed_in_a_copy_of_the_vector_file_fails_the_good_fixture() {
    let text = include_str!("../../../conformance/vectors.json");
    let mut doc: serde_json::Value = serde_json::from_str(text).expect("the file is JSON");
    let v17 = doc["vectors"]
        .as_array_mut()
        .and_then(|v| v.iter_mut().find(|v| v["id"] == "v17"))
        .expect("v17 is in the file");
    let adopted = v17["steps"]
        .as_array_mut()
        .and_then(|steps| {
            steps
                .iter_mut()
                .flat_map(|s| s["expect"].as_array_mut())
                .flatten()
                .find(|m| m["path"] == "/result/adopted")
        })
        .expect("v17 expects adopted");
    adopted["equals"] = serde_json::json!(false);
    let altered = mcpl_conformance::data::VectorFile::parse(&doc.to_string()).expect("parses");
    let options = Options {
        only: vec!["v17".into()],
        vectors: Some(Arc::new(altered)),
        ..Options::default()
    };
    let report = run_server_suite(
        ServerTarget::Connector(Fixture::shared(Faults::default())),
        options,
    )
    .await;
    let Some(Outcome::Fail { reason, .. }) = report.get("v17").map(|c| &c.outcome) else {
        panic!(
            "v17 should fail with the altered file: {:?}",
            report.get("v17")
        );
    };
    assert!(
        reason.contains("conformance/vectors.json v17 step"),
        "{reason}"
    );
    // The same run with the file as shipped passes.
    let report = run(Fixture::shared(Faults::default()), &["v17"]).await;
    assert!(matches!(
        report.get("v17").map(|c| &c.outcome),
        Some(Outcome::Pass)
    ));
}

/// Every server vector's expectations live in `conformance/vectors.json`: altering any one of
/// them in a copy of the file (each `expect.server` value the coded check reads, and the
/// first matcher of its scripted steps) makes the unbroken fixture fail that vector. Every
/// server vector has at least one such expectation.
#[tokio::test(start_paused = true)]
async fn s13_each_server_expectation_altered_in_a_copy_fails_the_good_fixture() {
    use mcpl_conformance::data::{VectorFile, altered, expectations, with_altered};
    let file = VectorFile::embedded();
    let mut copies: Vec<(String, String, VectorFile)> = expectations(&file, "server")
        .into_iter()
        .map(|(id, key)| {
            let copy = with_altered(&file, &id, "server", &key);
            (id, format!("expect.server.{key}"), copy)
        })
        .collect();
    for v in &file.vectors {
        let mut copy = file.clone();
        let Some(matcher) = copy
            .vectors
            .iter_mut()
            .find(|c| c.id == v.id)
            .into_iter()
            .flat_map(|c| c.steps.iter_mut())
            .flat_map(|s| s.get_mut("expect").and_then(|e| e.as_array_mut()))
            .flatten()
            .find(|m| {
                ["equals", "contains", "exists"]
                    .iter()
                    .any(|k| m.get(k).is_some())
            })
        else {
            continue;
        };
        for k in ["equals", "contains", "exists"] {
            if let Some(value) = matcher.get_mut(k) {
                *value = altered(value);
                break;
            }
        }
        copies.push((v.id.clone(), "its first step matcher".into(), copy));
    }
    let covered: std::collections::BTreeSet<&str> =
        copies.iter().map(|(id, _, _)| id.as_str()).collect();
    for v in &file.vectors {
        if v.sides.iter().any(|s| s == "server") {
            assert!(
                covered.contains(v.id.as_str()),
                "{} has no server expectation in the file",
                v.id
            );
        }
    }
    let mut survivors = Vec::new();
    for (id, what, copy) in copies {
        let options = Options {
            only: vec![id.clone()],
            vectors: Some(Arc::new(copy)),
            ..Options::default()
        };
        let report = run_server_suite(
            ServerTarget::Connector(Fixture::shared(Faults::default())),
            options,
        )
        .await;
        if !matches!(
            report.get(&id).map(|c| &c.outcome),
            Some(Outcome::Fail { .. })
        ) {
            survivors.push(format!(
                "{id} {what}: {:?}",
                report.get(&id).map(|c| &c.outcome)
            ));
        }
    }
    assert!(
        survivors.is_empty(),
        "altered expectations the good fixture still passes: {survivors:#?}"
    );
}
