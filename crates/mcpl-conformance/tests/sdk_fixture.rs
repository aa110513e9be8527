//! The fixture contract written on the project's server SDK (`mcpl_conformance_fixture`,
//! the module `mcpl arcade --conformance` uses too), run through the server suite: every
//! server vector passes.

use mcpl_conformance::{BoxFuture, Connector, Options, Outcome, ServerTarget, run_server_suite};
use mcpl_conformance_fixture::{self as cf, Fixture};
use mcpl_rpc::Transport;
use mcpl_server::driver::{Handle, Runtime};
use mcpl_server::{Declarations, Principal, Server, ServerConfig, WallClock};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Connections to one in-process SDK server; `shared` makes them one principal.
struct SdkFixture {
    runtime: Runtime<Fixture>,
    shared: bool,
}

impl SdkFixture {
    fn new(shared: bool) -> Arc<SdkFixture> {
        let base = Declarations::new("cf-sdk", "0").event_feature_set("cf");
        let catalog = Fixture::catalog(&base, true).expect("the fixture declarations are valid");
        let clock = WallClock::new(Instant::now(), SystemTime::now());
        let handle = Handle::new(Server::new(catalog, ServerConfig::new(clock)));
        let runtime = Runtime::new(handle.clone(), Fixture::new(base, handle));
        Arc::new(SdkFixture { runtime, shared })
    }
}

impl Connector for SdkFixture {
    fn connect(&self) -> BoxFuture<'_, Result<Transport, String>> {
        Box::pin(async move {
            let (ours, theirs) = Transport::memory_pair();
            let connection = self.runtime.next_connection();
            let principal = if self.shared {
                Principal::authenticated("cf")
            } else {
                Principal::of_connection(connection)
            };
            let runtime = self.runtime.clone();
            tokio::spawn(async move {
                let _ = runtime.serve(ours, principal, connection).await;
            });
            Ok(theirs)
        })
    }

    fn shares_principal(&self) -> bool {
        self.shared
    }

    fn describe(&self) -> String {
        format!("mcpl-server fixture (shared principal: {})", self.shared)
    }
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
        let report =
            run_server_suite(ServerTarget::Connector(SdkFixture::new(shared)), options).await;
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

/// The SDK module spells every name of the contract as the suite does.
#[test]
fn s13_the_sdk_module_uses_the_suite_fixture_names() {
    use mcpl_conformance::fixture as suite;
    let pairs = [
        (cf::INSTANCED, suite::INSTANCED),
        (cf::FLAT, suite::FLAT),
        (cf::DEFAULT_OPEN, suite::DEFAULT_OPEN),
        (cf::GROUP, suite::GROUP),
        (cf::ECHO, suite::ECHO),
        (cf::FINISH, suite::FINISH),
        (cf::FLAT_TOOL, suite::FLAT_TOOL),
        (cf::OPENED_TOOL, suite::OPENED_TOOL),
        (cf::GROUPED, suite::GROUPED),
        (cf::REVEALED, suite::REVEALED),
        (cf::REVEAL, suite::REVEAL),
        (cf::LATER, suite::LATER),
        (cf::MOVE, suite::MOVE),
        (cf::MOVER, suite::MOVER),
        (cf::UNDECLARE, suite::UNDECLARE),
    ];
    for (ours, theirs) in pairs {
        assert_eq!(ours, theirs);
    }
}
