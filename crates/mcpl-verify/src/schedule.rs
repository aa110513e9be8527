//! Seeded random fault schedules over a [`World`], and the checks made once each quiesces.

use std::collections::BTreeMap;
use std::time::Duration;

use mcpl_protocol::rfc014::Presence;
use mcpl_server::{Event, Update};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::app::{FREE_TOOL, GAME_TOOLS, INSTANCES, play_def};
use crate::world::{NAMES, Violation, World, comparable, picture};

/// How many steps one schedule takes before it quiesces.
pub const STEPS: usize = 60;

/// What one schedule found.
#[derive(Debug)]
pub struct Report {
    /// The seed that replays it.
    pub seed: u64,
    /// Rules broken (empty when the schedule converged and told everything right).
    pub violations: Vec<Violation>,
    /// What happened, step by step.
    pub log: Vec<String>,
}

impl Report {
    /// Whether every check held.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Runs the schedule `seed` names and checks it.
pub fn run(seed: u64) -> Report {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut w = World::new();
    let mut n = Counters::default();
    for _ in 0..STEPS {
        step(&mut w, &mut rng, &mut n);
    }
    w.quiesce();
    // The agent's next turn: the presenter's list catches up with the last moves.
    w.rebuild();
    check(&mut w);
    Report {
        seed,
        violations: w.violations,
        log: w.log,
    }
}

fn inst(rng: &mut SmallRng) -> &'static str {
    INSTANCES[rng.random_range(0..INSTANCES.len())]
}

/// Numbers that make each end's reason and each event's text unique in a schedule, so that
/// a notice can be counted by its text.
#[derive(Default)]
struct Counters {
    ends: u32,
    news: u32,
}

fn step(w: &mut World, rng: &mut SmallRng, n: &mut Counters) {
    let c = rng.random_range(0..2usize);
    let http = c == 1;
    match rng.random_range(0..114u32) {
        // Host commands racing each other and the server.
        0..8 => w.open(c, "game", Some(inst(rng))),
        8..11 => w.open(c, "notes", None),
        11..16 => w.close(c, "game", Some(inst(rng))),
        16..18 => w.close(c, "notes", None),
        18..24 => {
            let tool = GAME_TOOLS[rng.random_range(0..GAME_TOOLS.len())];
            w.call(c, tool, Some(inst(rng)));
        }
        // Server-side changes outside any call.
        24..31 => {
            let tool = GAME_TOOLS[rng.random_range(0..GAME_TOOLS.len())];
            let i = inst(rng);
            let visible = rng.random_bool(0.5);
            let mut u = Update::new();
            u.instance("game", i).set_visible(tool, visible);
            w.server_update(u);
        }
        31..34 => {
            let n = rng.random_range(0..4u8);
            let mut u = Update::new();
            u.instance("game", inst(rng)).define(play_def(n));
            w.server_update(u);
        }
        34..37 => {
            n.ends += 1;
            let mut u = Update::new();
            u.instance("game", inst(rng))
                .end(format!("ended-r{}", n.ends));
            w.server_update(u);
        }
        37..39 => {
            let mut u = Update::new();
            u.toolset("notes").set_visible("note", rng.random_bool(0.5));
            w.server_update(u);
        }
        // The wire: deliveries (reordered on Streamable HTTP), duplicates, lost answers.
        39..62 => {
            let n = w.links[c].to_host.len();
            if n > 0 {
                let at = if http { rng.random_range(0..n) } else { 0 };
                w.deliver_to_host(c, at);
            }
        }
        62..80 => {
            let n = w.links[c].to_server.len();
            if n > 0 {
                let at = if http { rng.random_range(0..n) } else { 0 };
                let hold = rng.random_bool(0.3);
                w.deliver_to_server(c, at, hold);
            }
        }
        80..83 => {
            if http {
                w.duplicate_to_host(c);
            }
        }
        83..86 => {
            // A lost answer: the host times out and recovers.
            let answers: Vec<usize> = (0..w.links[c].to_host.len())
                .filter(|&k| {
                    matches!(
                        w.links[c].to_host[k],
                        mcpl_protocol::jsonrpc::Message::Response(_)
                    )
                })
                .collect();
            if !answers.is_empty() {
                let k = answers[rng.random_range(0..answers.len())];
                w.lose_to_host(c, k);
            }
        }
        // Late answers: held app calls finish later; the clock runs past request timeouts.
        86..91 => {
            if !w.held.is_empty() {
                let k = rng.random_range(0..w.held.len());
                let (i, call) = w.held.remove(k);
                w.complete(i, call);
                w.drive();
            }
        }
        91..94 => w.advance(Duration::from_secs(rng.random_range(1..40))),
        94..98 => w.disconnect(c),
        98..100 => w.restart(),
        // News: a push event about an instance, carrying a visibility change half the time.
        100..104 => {
            n.news += 1;
            let i = inst(rng);
            let mut u = Update::new();
            if rng.random_bool(0.5) {
                let tool = GAME_TOOLS[rng.random_range(0..GAME_TOOLS.len())];
                u.instance("game", i)
                    .set_visible(tool, rng.random_bool(0.5));
            }
            u.event(Event::text(format!("news-n{}", n.news)).about("game", Some(i)));
            w.server_update(u);
        }
        // Moves of the free tool between static and dynamic, racing everything else.
        104..107 => {
            let presence = if rng.random_bool(0.5) {
                Presence::Dynamic
            } else {
                Presence::Static
            };
            let mut u = Update::new();
            u.move_tool(FREE_TOOL, presence);
            if presence == Presence::Dynamic {
                u.tools().set_visible(FREE_TOOL, rng.random_bool(0.7));
            }
            w.server_update(u);
        }
        // A request lost on its way to the server.
        107..109 => {
            let n = w.links[c].to_server.len();
            if n > 0 {
                let at = rng.random_range(0..n);
                w.lose_to_server(c, at);
            }
        }
        // The agent's turn ends: the presenter rebuilds its list and tells the moves.
        109..112 => w.rebuild(),
        _ => w.call(c, FREE_TOOL, None),
    }
}

/// The notices that carry an identity of their own, by the tag their text holds: an end's
/// reason (`ended-rK`), a close's reason (`closed-cK`, the ended record a close leaves) and
/// an event's text (`news-nK`).
const TAGS: [&str; 3] = ["ended-r", "closed-c", "news-n"];

/// The tags `text` holds.
fn tags(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| TAGS.iter().any(|t| w.starts_with(t)))
}

/// The checks after quiescence (docs/VERIFICATION.md), each failing the schedule:
/// - each controller's picture equals the server's full statement (no resync was forced);
/// - every notice with an identity (an end, a close's record, an event) reaches the agent
///   at most once through each connection, and each move is told once (the move notices of a
///   tool alternate in direction);
/// - every ended record a `toolsets/list` read by a connection reported is told exactly once
///   through that connection (§5.3, H48; a record the host only heard of in hints for an
///   instance its picture did not hold is owed only once a list reports it).
///
/// Revs applied in order and calls only for tools the picture held visible are checked as
/// the schedule runs ([`World`]).
pub fn check(w: &mut World) {
    let (truth, held) = w.truth();
    for i in 0..w.links.len() {
        let mut got = picture(w.links[i].host.snapshot());
        let mut truth = truth.clone();
        comparable(&mut got, &mut truth);
        if got != truth {
            w.violations.push(Violation(format!(
                "connection {i} does not converge:\n  picture {got:?}\n  server  {truth:?}"
            )));
        }
    }
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut moves: BTreeMap<String, Vec<bool>> = BTreeMap::new();
    for (server, text) in &w.told {
        for tag in tags(text) {
            *counts.entry((server.clone(), tag.to_owned())).or_default() += 1;
        }
        for line in text.lines() {
            if line.contains(&format!("`{FREE_TOOL}` moved:")) {
                let now_static = line.contains("call it by name");
                moves.entry(server.clone()).or_default().push(now_static);
            }
        }
    }
    for ((server, tag), n) in &counts {
        if *n > 1 {
            w.violations
                .push(Violation(format!("{tag} told {n} times on {server}")));
        }
    }
    for (server, seq) in &moves {
        if seq.windows(2).any(|p| p[0] == p[1]) {
            w.violations.push(Violation(format!(
                "a move of `{FREE_TOOL}` told twice on {server} (directions told, true = static: {seq:?})"
            )));
        }
    }
    let mut owed = 0;
    for (i, name) in NAMES.iter().enumerate() {
        for (id, reason) in &w.listed[i] {
            let Some(tag) = reason.as_deref().and_then(|r| tags(r).next()) else {
                continue;
            };
            owed += 1;
            let n = counts
                .get(&((*name).to_owned(), tag.to_owned()))
                .copied()
                .unwrap_or(0);
            if n != 1 {
                w.violations.push(Violation(format!(
                    "ended record {id} ({tag}), reported by a list {name} read, told {n} times on {name}"
                )));
            }
        }
    }
    w.log.push(format!(
        "checked: {} ended records held now, {owed} reported to the hosts, {} notices told",
        held.len(),
        w.told.len()
    ));
}
