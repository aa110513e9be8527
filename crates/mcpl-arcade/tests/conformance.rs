//! `start_conformance`: the arcade with the conformance fixture contract beside its games
//! passes every server vector of RFC-014 §13, and plain `start` declares what it always did.

use std::collections::BTreeSet;
use std::sync::Arc;

use mcpl_arcade::{ArcadeConfig, ArcadeServer, start, start_conformance};
use mcpl_conformance::{Options, Outcome, ServerTarget, run_server_suite};
use mcpl_conformance_fixture as cf;

/// The vectors that need two connections of one principal.
const SHARED: [&str; 3] = ["v09", "v14", "v32"];

fn names(server: &ArcadeServer) -> (BTreeSet<String>, BTreeSet<String>) {
    let catalog = server.runtime().handle().server().catalog();
    let tools = catalog.tool_names().map(str::to_owned).collect();
    let toolsets = catalog
        .toolset_names()
        .map(|t| t.as_str().to_owned())
        .collect();
    (tools, toolsets)
}

#[tokio::test]
async fn the_fixture_is_added_beside_the_games_and_only_on_request() {
    let (plain_tools, plain_sets) = names(&start(ArcadeConfig::default()).expect("starts"));
    assert!(
        plain_tools.iter().all(|t| !cf::owns_tool(t)),
        "{plain_tools:?}"
    );
    assert!(
        plain_sets.iter().all(|t| !cf::owns_toolset(t)),
        "{plain_sets:?}"
    );

    let (tools, sets) = names(&start_conformance(ArcadeConfig::default()).expect("starts"));
    assert!(plain_tools.is_subset(&tools) && plain_sets.is_subset(&sets));
    let added: Vec<_> = tools.difference(&plain_tools).collect();
    assert!(added.iter().all(|t| cf::owns_tool(t)), "{added:?}");
    for name in [
        cf::ECHO,
        cf::FINISH,
        cf::FLAT_TOOL,
        cf::REVEAL,
        cf::LATER,
        cf::GROUPED,
    ] {
        assert!(tools.contains(name), "{name} missing");
    }
    for toolset in [cf::INSTANCED, cf::FLAT, cf::DEFAULT_OPEN] {
        assert!(sets.contains(toolset), "{toolset} missing");
    }
}

#[tokio::test(start_paused = true)]
async fn s13_the_arcade_with_the_fixture_passes_every_server_vector() {
    let mut failures = Vec::new();
    for shared in [false, true] {
        let server = start_conformance(ArcadeConfig::default()).expect("starts");
        let only = if shared {
            SHARED.map(String::from).to_vec()
        } else {
            Vec::new()
        };
        let options = Options {
            only,
            ..Options::default()
        };
        let runtime = server.runtime().clone();
        let fixture = cf::InProcess::new(runtime, shared, "arcade --conformance");
        let target = ServerTarget::Connector(Arc::new(fixture));
        let report = run_server_suite(target, options).await;
        for c in &report.checks {
            let not_applicable = !shared && SHARED.contains(&c.id.as_str());
            match &c.outcome {
                Outcome::Pass if !not_applicable => {}
                Outcome::NotApplicable { .. } if not_applicable => {}
                other => failures.push(format!("{} (shared: {shared}): {other:?}", c.id)),
            }
        }
        if !failures.is_empty() {
            println!("{}", mcpl_conformance::render::table(&report));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
