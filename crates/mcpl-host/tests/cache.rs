//! DESIGN.md's cache report: toolsets open, close and change visibility 500 times, and the
//! model-facing tool list digest never changes.

mod common;

use common::*;
use mcpl_host::presenter::{META_ACT, META_CLOSE, META_OPEN, Presenter, PresenterConfig};
use serde_json::json;

#[test]
fn s8_1_five_hundred_opens_closes_and_visibility_changes_keep_the_digest() {
    let mut h = Host::new(vec![("arcade", arcade()), ("games", arcade())]);
    let digest = h.pres.digest().to_owned();
    let changes = h.pres.list_changes();
    let list = serde_json::to_string(h.pres.tool_list()).expect("json");
    for i in 0..500 {
        let inst = format!("g{}", i % 3);
        match i % 5 {
            0 => {
                h.call(
                    META_OPEN,
                    json!({"server": "arcade", "toolset": "game", "instance": inst}),
                );
            }
            1 => {
                h.pair("arcade")
                    .server
                    .borrow_mut()
                    .set_visible("play", Some(&inst), i % 2 == 0);
            }
            2 => {
                h.call(
                    META_ACT,
                    json!({"server": "arcade", "tool": "pass", "instance": inst, "args": {}}),
                );
            }
            3 => {
                h.call(META_OPEN, json!({"server": "games", "toolset": "cards"}));
                h.call(META_CLOSE, json!({"server": "games", "toolset": "cards"}));
            }
            _ => {
                h.call(
                    META_CLOSE,
                    json!({"server": "arcade", "toolset": "game", "instance": inst}),
                );
            }
        }
        h.notices();
        // A host rebuilds whenever it likes (every turn here); nothing above asks for it.
        assert!(!h.pres.needs_rebuild(), "step {i} asked for a rebuild");
        h.rebuild();
        assert_eq!(h.pres.digest(), digest, "the digest changed at step {i}");
    }
    assert_eq!(
        h.pres.list_changes(),
        changes,
        "the cache report counted a change"
    );
    assert_eq!(
        serde_json::to_string(h.pres.tool_list()).expect("json"),
        list
    );
    assert!(
        h.window.len() > 200,
        "the changes were told, not hidden: {}",
        h.window.len()
    );
}

#[test]
fn s8_4_projection_shows_dynamic_tools_under_namespaced_names_and_routes_them() {
    let cfg = PresenterConfig {
        projection: true,
        ..PresenterConfig::default()
    };
    let mut h = Host::with(vec![("arcade", arcade())], cfg);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "vs-ada"}));
    h.call(META_OPEN, json!({"toolset": "cards"}));
    // `lab` is a group the server never declared (§5.4): the host opens it, without instances.
    h.call(META_OPEN, json!({"toolset": "lab"}));
    assert!(h.pres.needs_rebuild());
    h.rebuild();
    let names = h.names();
    for projected in [
        "arcade__game__vs-ada__play",
        "arcade__cards__draw",
        "arcade__lab__probe",
    ] {
        assert!(names.contains(&projected.to_owned()), "{names:?}");
    }
    h.pair("arcade").clear();
    h.call("arcade__game__vs-ada__play", json!({"move": "A1"}));
    h.call("arcade__cards__draw", json!({}));
    h.call("arcade__lab__probe", json!({}));
    let sent = &h.pair("arcade").sent;
    assert_eq!(
        sent[0].params.as_ref().expect("p")["_meta"]["mcpl/instance"],
        "vs-ada"
    );
    assert_eq!(sent[0].params.as_ref().expect("p")["name"], "play");
    assert!(sent[1].params.as_ref().expect("p").get("_meta").is_none());
    assert_eq!(sent[2].params.as_ref().expect("p")["name"], "probe");
    assert!(sent[2].params.as_ref().expect("p").get("_meta").is_none());
}

#[test]
fn s8_1_the_cache_report_counts_each_rebuild_that_changed_the_list() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let base = h.pres.list_changes();
    // A new static tool really changes the list: one change, counted once.
    h.pair("arcade")
        .server
        .borrow_mut()
        .tools
        .push(tool("fresh", json!({})));
    let p = h.pair("arcade");
    p.host.resync(p.now);
    h.sync();
    assert!(h.pres.needs_rebuild());
    assert!(h.rebuild(), "the new tool did not change the list");
    assert!(h.names().contains(&"fresh".to_owned()));
    assert_eq!(h.pres.list_changes(), base + 1);
    // A rebuild that changes nothing is not counted.
    assert!(!h.rebuild());
    assert_eq!(h.pres.list_changes(), base + 1);
}

#[test]
fn s8_1_a_new_presenter_has_counted_no_list_change() {
    let mut pres = Presenter::new(PresenterConfig::default());
    assert_eq!(pres.list_changes(), 0);
    assert!(!pres.rebuild(), "nothing was added, so nothing changed");
    assert_eq!(pres.list_changes(), 0);
}

#[test]
fn s8_4_a_projection_already_published_asks_for_no_further_rebuild() {
    let cfg = PresenterConfig {
        projection: true,
        ..PresenterConfig::default()
    };
    let mut h = Host::with(vec![("arcade", arcade())], cfg);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "vs-ada"}));
    assert!(
        h.pres.needs_rebuild(),
        "a new projected tool went unnoticed"
    );
    h.rebuild();
    assert!(
        h.names().contains(&"arcade__game__vs-ada__play".to_owned()),
        "{:?}",
        h.names()
    );
    assert!(
        !h.pres.needs_rebuild(),
        "the published projection reads as stale"
    );
}

#[test]
fn s8_1_the_first_list_with_servers_is_the_first_publication_not_a_change() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    // The helper's first rebuild published the servers' list: nothing counted.
    assert_eq!(h.pres.list_changes(), 0);
    assert!(!h.rebuild());
    assert_eq!(h.pres.list_changes(), 0);
}
