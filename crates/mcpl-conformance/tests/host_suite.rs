//! The host suite's own mutation test, against the in-process test host
//! (`tests/common/host.rs`): the correct host passes every host check the suite executes, and
//! every broken host (each fault of `HostFaults`, behind its flag) fails at least one check,
//! the one for its class.

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
        quiet: Duration::from_millis(600),
        ..Options::default()
    };
    run_host_suite(HostTarget::Launcher(Arc::new(TestHost { faults })), options).await
}

#[tokio::test]
async fn s13_correct_host_passes_every_host_check() {
    let report = run_with(HostFaults::default(), &[], Duration::from_secs(4)).await;
    assert_eq!(report.checks.len(), 18 + 8);
    for c in &report.checks {
        match &c.outcome {
            Outcome::Pass => {}
            other => panic!(
                "{}: {other:?}\n{}",
                c.id,
                mcpl_conformance::render::table(&report)
            ),
        }
    }
}

/// At least 20 host faults, each a different defect.
#[test]
fn the_mutation_set_has_at_least_twenty_host_faults() {
    assert!(HostFaults::NAMES.len() >= 20, "{}", HostFaults::NAMES.len());
    let mut names = HostFaults::NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), HostFaults::NAMES.len());
}

/// Each broken host fails the checks for its class; every fault is in the table.
#[tokio::test]
async fn s13_every_host_fault_fails_the_checks_for_its_class() {
    let cases: &[(&str, &[&str])] = &[
        ("reopen_after_reconnect", &["v09"]),
        ("apply_stale_rev", &["v04"]),
        ("tell_ended_twice", &["v13"]),
        ("no_recovery", &["v12", "v29", "h18"]),
        ("open_undeclared", &["v10", "h29"]),
        ("no_instance_meta", &["h64", "v05"]),
        ("skip_tools_list", &["h28"]),
        ("first_page_only", &["h01"]),
        ("ignore_server_hints_flag", &["h12"]),
        ("no_proposed_name", &["h59"]),
        ("take_definition_name", &["v20"]),
        ("trust_static_claim", &["v21"]),
        ("ignore_push_hints", &["v11"]),
        ("give_up_recovery", &["h25"]),
        ("ignore_foreign_opens", &["v14"]),
        ("ignore_manifest_changed", &["v31"]),
        ("merge_statement", &["v37"]),
        ("drop_late_answers", &["v35"]),
        ("never_gate", &["v10", "v11", "v14", "v31", "v35"]),
        ("loose_instances", &["v14", "v35"]),
        ("never_reconnect", &["v09", "v13"]),
        ("ignore_tools_hints", &["v14"]),
        ("never_tell_ended", &["v13"]),
        ("recover_tools_only", &["v12"]),
        ("recover_on_early_rev", &["v36"]),
        ("defer_push_hints", &["v24"]),
        ("coalesce_hints", &["v19"]),
        ("gate_statement", &["v25"]),
    ];
    let mapped: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    for name in HostFaults::NAMES {
        assert!(mapped.contains(name), "{name} has no class in this table");
    }
    let mut missed = Vec::new();
    for (name, checks) in cases {
        let faults = HostFaults::default().with(name).expect("a known fault");
        let report = run_with(faults, checks, Duration::from_secs(1)).await;
        for id in *checks {
            let c = report.get(id).expect("the check ran");
            if !matches!(c.outcome, Outcome::Fail { .. }) {
                missed.push(format!("{id} vs {name}: {:?}", c.outcome));
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// Every host vector's expectations the checks read live in `conformance/vectors.json`
/// (`expect.host`): altering any one in a copy of the file makes the correct host fail that
/// vector, and every host vector has at least one.
#[tokio::test]
async fn s13_each_host_expectation_altered_in_a_copy_fails_the_correct_host() {
    use mcpl_conformance::data::{VectorFile, expectations, with_altered};
    let file = VectorFile::embedded();
    let cases = expectations(&file, "host");
    for v in &file.vectors {
        if v.sides.iter().any(|s| s == "host") {
            assert!(
                cases.iter().any(|(id, _)| id == &v.id),
                "{} has no host expectation in the file",
                v.id
            );
        }
    }
    let mut survivors = Vec::new();
    for (id, key) in cases {
        // The default timeout; the rest as `run_with` sets them.
        let options = Options {
            only: vec![id.clone()],
            wait: Duration::from_secs(2),
            quiet: Duration::from_millis(600),
            vectors: Some(Arc::new(with_altered(&file, &id, "host", &key))),
            ..Options::default()
        };
        let target = HostTarget::Launcher(Arc::new(TestHost {
            faults: HostFaults::default(),
        }));
        let report = run_host_suite(target, options).await;
        if !matches!(
            report.get(&id).map(|c| &c.outcome),
            Some(Outcome::Fail { .. })
        ) {
            survivors.push(format!(
                "{id} expect.host.{key}: {:?}",
                report.get(&id).map(|c| &c.outcome)
            ));
        }
    }
    assert!(
        survivors.is_empty(),
        "altered expectations the correct host still passes: {survivors:#?}"
    );
}
