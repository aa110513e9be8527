//! Row 2, controller throughput: `tools/hints` frames applied per second by the host
//! controller (decode under the frame limits, `handle_message`, drain every effect), against
//! `serde_json` parsing the same bytes into a `Value` and nothing else: how close the
//! controller comes to the parse limit.
//!
//! The frames are what the arcade sends after each move: `play` and `pass` of one game
//! turning visible or invisible, with `play`'s per-instance definition listing the legal
//! moves of a 9x9 board as an enum (§5.5).

use crate::error::BenchError;
use crate::report::{Figure, Unit};
use crate::stats::{rate, timed};
use mcpl_host::controller::Effect;
use mcpl_host::{Controller, ControllerConfig};
use mcpl_protocol::frame::{self, Limits};
use mcpl_protocol::jsonrpc::{Message, Response};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How many frames and how long each timed pass may take.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Frames per pass.
    pub frames: usize,
    /// Passes of each side; the best pass counts (the least disturbed by other processes).
    pub passes: usize,
    /// The most one pass may take.
    pub budget: Duration,
}

/// The toolset and instance the frames change.
const TOOLSET: &str = "go";
const INSTANCE: &str = "g1";

fn manifest() -> Value {
    json!({"version": "0.5", "toolHints": true, "pushEvents": true,
        "toolsets": {TOOLSET: {"title": "Go", "default": "closed", "instances": true}}})
}

fn listed_tools() -> Value {
    let meta = json!({"mcpl/toolset": TOOLSET, "mcpl/visible": false});
    json!({"tools": [
        {"name": "play", "description": "Play a move.", "_meta": meta,
         "inputSchema": {"type": "object", "required": ["move"],
                         "properties": {"move": {"type": "string"}}}},
        {"name": "pass", "description": "Pass.", "inputSchema": {"type": "object"}, "_meta": meta},
    ], "_meta": {"mcpl/rev": 0}})
}

/// The full statement that opens instance `g1` at rev 1.
fn statement() -> Value {
    json!({"open": [{"toolset": TOOLSET, "instance": INSTANCE, "title": "Go 9x9"}],
           "ended": [],
           "_meta": {"mcpl/hints": {"rev": 1, "tools": [
               {"name": "play", "instance": INSTANCE, "visible": true},
               {"name": "pass", "instance": INSTANCE, "visible": true}]}}})
}

/// The frames: `tools/hints` with revs 2, 3, ...; even revs hide `play` and `pass`, odd revs
/// show them again with a fresh list of legal moves.
pub fn frames(count: usize) -> Vec<Vec<u8>> {
    let columns = "ABCDEFGHJ";
    (0..count)
        .map(|i| {
            let rev = i as u64 + 2;
            let visible = rev % 2 == 1;
            let mut play = json!({"name": "play", "instance": INSTANCE, "visible": visible});
            if visible {
                // A stone lands somewhere each move: drop one point from the legal moves.
                let legal: Vec<String> = columns
                    .chars()
                    .flat_map(|c| (1..=9).map(move |r| format!("{c}{r}")))
                    .enumerate()
                    .filter(|(n, _)| *n != i % 81)
                    .map(|(_, m)| m)
                    .collect();
                play["definition"] = json!({"name": "play", "description": "Play a move.",
                    "inputSchema": {"type": "object", "required": ["move"],
                        "properties": {"move": {"type": "string", "enum": legal}}}});
            }
            let pass = json!({"name": "pass", "instance": INSTANCE, "visible": visible});
            let msg = json!({"jsonrpc": "2.0", "method": "tools/hints",
                "params": {"rev": rev, "tools": [play, pass]}});
            serde_json::to_vec(&msg).expect("a json value serializes")
        })
        .collect()
}

/// A controller past its connect reads, with instance `g1` open at rev 1.
pub fn ready_controller(now: Instant) -> Result<Controller, BenchError> {
    ready_with(now, listed_tools(), statement())
}

/// A controller past its connect reads: `tools/list` answered with `listed`, then
/// `toolsets/list` with `statement` (which must take rev 1).
pub fn ready_with(now: Instant, listed: Value, statement: Value) -> Result<Controller, BenchError> {
    let mut config = ControllerConfig::new(mcpl_host::ServerName::sanitized("arcade"), "bench");
    config.manifest = Some(manifest());
    let mut controller = Controller::new(config, now);
    // Answer the connect reads as a server would: `tools/list`, then `toolsets/list`.
    for _ in 0..8 {
        let mut answers = Vec::new();
        while let Some(effect) = controller.poll_effect() {
            if let Effect::Send(Message::Request(req)) = effect {
                let result = match req.method.as_str() {
                    "tools/list" => listed.clone(),
                    "toolsets/list" => statement.clone(),
                    other => {
                        return Err(BenchError::Invalid(format!(
                            "the controller sent an unexpected `{other}` at connect"
                        )));
                    }
                };
                answers.push(Message::Response(Response::ok(req.id, result)));
            }
        }
        if answers.is_empty() {
            break;
        }
        for answer in answers {
            controller.handle_message(now, None, answer);
        }
    }
    let snap = controller.snapshot();
    if !snap.ready() || snap.applied().get() != 1 {
        return Err(BenchError::Invalid(format!(
            "the controller is not ready after its connect reads (ready {}, rev {})",
            snap.ready(),
            snap.applied().get()
        )));
    }
    Ok(controller)
}

/// Feeds `frames` (revs 2, 3, ... in order) to `controller`: decode under the default
/// limits, `handle_message`, drain every effect. Returns how many ran within `budget` and how
/// long they took; an error if any frame was refused, a recovery started or the applied rev
/// is not the last frame's.
pub fn apply_all(
    controller: &mut Controller,
    frames: &[Vec<u8>],
    budget: Duration,
    now: Instant,
) -> Result<(usize, Duration), BenchError> {
    let limits = Limits::default();
    let mut recoveries = Vec::new();
    let mut refused = 0usize;
    let (count, took) = timed(frames, budget, |bytes| {
        match frame::decode(bytes, &limits) {
            Ok(msg) => controller.handle_message(now, None, msg),
            Err(_) => refused += 1,
        }
        while let Some(effect) = controller.poll_effect() {
            match effect {
                Effect::Recovering(why) | Effect::RecoveryLimited { reason: why, .. } => {
                    recoveries.push(why)
                }
                _ => {}
            }
        }
    });
    let applied = controller.snapshot().applied().get();
    if refused > 0 || !recoveries.is_empty() || applied != count as u64 + 1 {
        return Err(BenchError::Invalid(format!(
            "the controller did not apply every frame in order \
             ({count} fed, rev {applied}, {refused} refused, recoveries {recoveries:?})"
        )));
    }
    Ok((count, took))
}

/// Measures row 2.
pub fn measure(settings: Settings) -> Result<Vec<Figure>, BenchError> {
    let frames = frames(settings.frames);
    let mut best_ours = 0.0f64;
    let mut best_parse = 0.0f64;
    for _ in 0..settings.passes.max(1) {
        // The baseline: parse only.
        let mut parsed = 0usize;
        let (count, took) = timed(&frames, settings.budget, |bytes| {
            if serde_json::from_slice::<Value>(bytes).is_ok() {
                parsed += 1;
            }
        });
        if parsed != count {
            return Err(BenchError::Invalid("a bench frame failed to parse".into()));
        }
        best_parse = best_parse.max(rate(count, took));

        // Ours: decode, apply, drain.
        let now = Instant::now();
        let mut controller = ready_controller(now)?;
        let (count, took) = apply_all(&mut controller, &frames, settings.budget, now)?;
        best_ours = best_ours.max(rate(count, took));
    }
    Ok(vec![Figure {
        id: Some("controller_vs_parse"),
        measure: "hint changes applied (decode, apply, drain)".into(),
        ours: best_ours,
        baseline_name: "serde_json parse of the same frames".into(),
        baseline: best_parse,
        unit: Unit::PerSecond,
        ..Default::default()
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_applies_in_rev_order_without_recovery() {
        let figures = measure(Settings {
            frames: 300,
            passes: 1,
            budget: Duration::from_secs(60),
        })
        .expect("a clean run");
        assert_eq!(figures.len(), 1);
        assert!(figures[0].ours > 0.0 && figures[0].baseline > 0.0);
    }

    #[test]
    fn frames_alternate_visibility_and_carry_the_legal_moves() {
        let f = frames(2);
        let first: Value = serde_json::from_slice(&f[0]).unwrap();
        let second: Value = serde_json::from_slice(&f[1]).unwrap();
        assert_eq!(first["params"]["rev"], 2);
        assert_eq!(first["params"]["tools"][0]["visible"], false);
        assert_eq!(second["params"]["tools"][0]["visible"], true);
        let legal = &second["params"]["tools"][0]["definition"]["inputSchema"]["properties"]["move"]
            ["enum"];
        assert_eq!(legal.as_array().map(Vec::len), Some(80));
    }
}
