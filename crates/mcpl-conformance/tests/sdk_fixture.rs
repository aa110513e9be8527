//! The fixture contract written on the project's server SDK (`mcpl_conformance_fixture`,
//! the module `mcpl arcade --conformance` uses too), run through the server suite: every
//! server vector passes.

use mcpl_conformance::{Options, Outcome, ServerTarget, run_server_suite};
use mcpl_conformance_fixture::{Fixture, InProcess};
use mcpl_server::driver::{Handle, Runtime};
use mcpl_server::{Declarations, Server, ServerConfig, WallClock};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Connections to one in-process SDK server with the fixture; `shared` makes them one
/// principal.
fn sdk_fixture(shared: bool) -> Arc<InProcess<Fixture>> {
    let base = Declarations::new("cf-sdk", "0").event_feature_set("cf");
    let catalog = Fixture::catalog(&base, true).expect("the fixture declarations are valid");
    let clock = WallClock::new(Instant::now(), SystemTime::now());
    let handle = Handle::new(Server::new(catalog, ServerConfig::new(clock)));
    let runtime = Runtime::new(handle.clone(), Fixture::new(base, handle));
    Arc::new(InProcess::new(runtime, shared, "mcpl-server fixture"))
}

#[tokio::test(start_paused = true)]
async fn s13_the_server_sdk_passes_every_server_vector() {
    let mut failures = Vec::new();
    for shared in [false, true] {
        let only: Vec<String> = if shared {
            vec!["v09".into(), "v14".into(), "v32".into()]
        } else {
            Vec::new()
        };
        let options = Options {
            only,
            ..Options::default()
        };
        let report = run_server_suite(ServerTarget::Connector(sdk_fixture(shared)), options).await;
        for c in &report.checks {
            let not_applicable = !shared && ["v09", "v14", "v32"].contains(&c.id.as_str());
            match &c.outcome {
                Outcome::Pass if !not_applicable => {}
                Outcome::NotApplicable { .. } if not_applicable => {}
                other => failures.push(format!("{} ({shared}): {other:?}", c.id)),
            }
        }
        if !failures.is_empty() {
            println!("{}", mcpl_conformance::render::table(&report));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
