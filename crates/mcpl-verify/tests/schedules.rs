//! The fault schedules' own rules: the checks fail a schedule when a rule breaks, a seed
//! replays exactly, and the end-during-open race (the finding of the first 10,000 run) is
//! told as §5.3 and H48 say.

use mcpl_server::Update;
use mcpl_verify::schedule::{self, check};
use mcpl_verify::world::{Violation, World};

/// How many times `tag` was told through connection `server`.
fn told(w: &World, server: &str, tag: &str) -> usize {
    w.told
        .iter()
        .filter(|(s, text)| s == server && text.contains(tag))
        .count()
}

/// A world with both connections' connect reads done and nothing else.
fn settled() -> World {
    let mut w = World::new();
    w.quiesce();
    w
}

#[test]
fn h48_an_end_during_an_open_is_owed_once_a_list_reports_it() {
    let mut w = settled();
    // Connection 0 opens `b`; the app's open handler is still running when the server ends
    // `b` (a timer, the other player).
    w.open(0, "game", Some("b"));
    let at = w.links[0].to_server.len() - 1;
    w.deliver_to_server(0, at, true);
    assert_eq!(w.held.len(), 1, "the open handler is held");
    let mut u = Update::new();
    u.instance("game", "b").end("ended-r1");
    w.server_update(u);
    w.quiesce();
    // The open failed ("ended while it was being opened") and the closing hint named an
    // instance neither picture held: nothing to tell yet, and no list reported the record.
    assert_eq!(told(&w, "v0", "ended-r1"), 0);
    assert_eq!(told(&w, "v1", "ended-r1"), 0);
    assert!(w.listed[0].is_empty());
    // A reconnect reads `toolsets/list`, which reports the record: now it is owed, once.
    w.disconnect(0);
    w.quiesce();
    assert_eq!(w.listed[0].len(), 1);
    assert_eq!(told(&w, "v0", "ended-r1"), 1);
    // Another reconnect reads it again and tells nothing new (H48).
    w.disconnect(0);
    w.quiesce();
    assert_eq!(told(&w, "v0", "ended-r1"), 1);
    check(&mut w);
    assert_eq!(w.violations, Vec::<Violation>::new());
}

#[test]
fn h48_a_listed_record_never_told_fails_the_schedule() {
    let mut w = settled();
    w.listed[1].insert("e-9".into(), Some("ended-r9".into()));
    check(&mut w);
    assert_eq!(w.violations.len(), 1, "{:?}", w.violations);
    assert!(w.violations[0].0.contains("e-9"));
}

#[test]
fn h41_a_notice_told_twice_through_one_connection_fails_the_schedule() {
    for tag in ["ended-r3", "closed-c4", "news-n5"] {
        let mut w = settled();
        let text = format!("Toolset update from v0:\n- something; reason: v0 says \"{tag}\"");
        w.told.push(("v0".into(), text.clone()));
        w.told.push(("v1".into(), text.clone()));
        check(&mut w);
        assert!(
            w.violations.is_empty(),
            "{tag} once per connection is right"
        );
        w.told.push(("v0".into(), text));
        check(&mut w);
        assert_eq!(w.violations.len(), 1, "{tag}: {:?}", w.violations);
        assert!(
            w.violations[0]
                .0
                .contains(&format!("{tag} told 2 times on v0"))
        );
    }
}

#[test]
fn h35_a_move_told_twice_fails_the_schedule() {
    let mut w = settled();
    let to_dynamic = "Toolset update from v1:\n- `clock` moved: reach it through toolsets--act";
    let to_static = "Toolset update from v1:\n- `clock` moved: call it by name as `v1__clock`";
    w.told.push(("v1".into(), to_dynamic.into()));
    w.told.push(("v1".into(), to_static.into()));
    w.told.push(("v1".into(), to_dynamic.into()));
    check(&mut w);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    w.told.push(("v1".into(), to_dynamic.into()));
    check(&mut w);
    assert_eq!(w.violations.len(), 1, "{:?}", w.violations);
}

#[test]
fn s6_1_a_picture_that_differs_from_the_servers_statement_fails_the_schedule() {
    let mut w = settled();
    // The server hides `board` in `a` while connection 1's wire loses everything, and
    // nothing follows that would show connection 1 the gap: its picture is stale.
    w.open(0, "game", Some("a"));
    w.quiesce();
    let mut u = Update::new();
    u.instance("game", "a").hide("board");
    w.server_update(u);
    w.links[1].to_host.clear();
    check(&mut w);
    assert!(
        w.violations
            .iter()
            .any(|v| v.0.starts_with("connection 1 does not converge")),
        "{:?}",
        w.violations
    );
}

#[test]
fn verify_a_seed_replays_exactly() {
    for seed in [0, 7, 344, 4182, 9_999] {
        let a = schedule::run(seed);
        let b = schedule::run(seed);
        assert_eq!(a.log, b.log, "seed {seed} replayed differently");
        assert_eq!(a.violations, b.violations);
        assert!(a.log.len() > 10, "seed {seed} did almost nothing");
    }
}

#[test]
fn s6_every_property_holds_on_the_first_schedules() {
    for seed in 0..40 {
        let r = schedule::run(seed);
        assert!(r.ok(), "seed {seed}: {:?}", r.violations);
    }
}

#[test]
fn verify_scripts_seed_replay_prints_the_same_run_twice() {
    let replay = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mcpl-verify"))
            .args(["--seed", "344"])
            .output()
            .expect("mcpl-verify runs")
    };
    let (a, b) = (replay(), replay());
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stdout));
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(text.contains("convergence: 1/1 schedules converge (seed 344)"));
    assert_eq!(a.stdout, b.stdout, "the replay printed two different runs");
}
