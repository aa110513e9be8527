//! `Effect::Committed` and `Context::after_commit`: app code learns when its call is finished,
//! so follow-up work (a bot's reply) takes the rev after the call's (§6.1, §6.2). Also
//! `Context::is_cancelled` for calls the host cancelled.

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, RequestId};
use mcpl_server::{Call, Effect, Error, OpenReply, Outcome, Reply};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Opens `vs-bot` on a fresh hinted connection of ada, then starts a `play` whose app call
/// is held. Returns the world, the connection, the request id and the held call.
fn held_play() -> (World, usize, RequestId, Call) {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "vs-bot"}),
    )
    .expect("the open succeeds");
    w.take(h);
    w.hold_calls = true;
    let id = w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
               "_meta": {"mcpl/instance": "vs-bot"}}),
    );
    w.drive();
    let (_, call) = w.held.remove(0);
    (w, h, id, call)
}

/// Runs the fixture app for `call` with a hook that counts into `fired`, hands the outcome to
/// the session and returns every effect it queued, in order (hooks not run; the write of the
/// principal's state is served, not returned).
fn finish(w: &mut World, h: usize, mut call: Call, fired: &Arc<AtomicUsize>) -> Vec<Effect> {
    let fired = fired.clone();
    call.context.after_commit(move || {
        fired.fetch_add(1, Ordering::SeqCst);
    });
    let reply = run_app(&mut call);
    let outcome = Outcome {
        context: call.context,
        reply,
    };
    let now = w.now;
    w.conns[h]
        .session
        .handle_call_done(now, call.id, outcome)
        .expect("the outcome fits");
    drain(w, h)
}

/// Every effect connection `h` queued, in order, serving its writes.
fn drain(w: &mut World, h: usize) -> Vec<Effect> {
    let mut effects = Vec::new();
    while let Some(effect) = w.conns[h].session.poll_effect() {
        match effect {
            Effect::Write(write) => w.write(h, &write),
            other => effects.push(other),
        }
    }
    effects
}

#[test]
fn s6_1_committed_comes_after_the_results_send_and_names_the_call() {
    let (mut w, h, id, call) = held_play();
    let call_id = call.id;
    let fired = Arc::new(AtomicUsize::new(0));
    let effects = finish(&mut w, h, call, &fired);

    let result_at = effects
        .iter()
        .position(|e| matches!(e, Effect::Send(Message::Response(r)) if r.id.as_ref() == Some(&id)))
        .expect("the result is queued");
    let Effect::Send(Message::Response(r)) = &effects[result_at] else {
        unreachable!("matched above")
    };
    let result = r.outcome.as_ref().expect("a result");
    assert_eq!(result["_meta"]["mcpl/hints"]["rev"], json!(2));
    let last = effects.last().expect("effects were queued");
    let Effect::Committed { call, hooks } = last else {
        panic!("the last effect is Committed, got {last:?}");
    };
    assert_eq!(*call, call_id);
    assert_eq!(hooks.len(), 1);
    assert!(result_at < effects.len() - 1);
    assert_eq!(
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Committed { .. }))
            .count(),
        1,
        "exactly one Committed per call"
    );

    // The hook has not run yet: the driver runs it, after writing the result.
    assert_eq!(fired.load(Ordering::SeqCst), 0);
    let Some(Effect::Committed { hooks, .. }) = effects.into_iter().last() else {
        unreachable!("checked above")
    };
    hooks.run();
    assert_eq!(fired.load(Ordering::SeqCst), 1);
}

#[test]
fn s6_1_committed_follows_the_tools_hints_of_a_cancelled_call() {
    let (mut w, h, id, call) = held_play();
    let call_id = call.id;
    assert!(!call.context.is_cancelled());
    let flag_seen_by_app = {
        w.notify(h, "notifications/cancelled", Some(json!({"requestId": id})));
        call.context.is_cancelled()
    };
    assert!(flag_seen_by_app, "app code sees the cancellation");
    let fired = Arc::new(AtomicUsize::new(0));
    let effects = finish(&mut w, h, call, &fired);

    let kinds: Vec<String> = effects
        .iter()
        .map(|e| match e {
            Effect::Send(Message::Notification(n)) => n.method.clone(),
            Effect::Send(Message::Response(_)) => "response".into(),
            Effect::Send(_) => "other send".into(),
            Effect::Committed { .. } => "committed".into(),
            Effect::Publish(_) => "publish".into(),
            _ => "other".into(),
        })
        .collect();
    assert!(
        !kinds.contains(&"response".to_owned()),
        "no result: {kinds:?}"
    );
    let hints_at = kinds.iter().position(|k| k == "tools/hints");
    let committed_at = kinds.iter().position(|k| k == "committed");
    assert!(
        hints_at.is_some() && hints_at < committed_at,
        "tools/hints first, then Committed: {kinds:?}"
    );
    assert!(matches!(effects.last(), Some(Effect::Committed { call, .. }) if *call == call_id));
}

#[test]
fn s6_1_committed_fires_for_opens_and_after_a_disconnect() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let (id, call) = w.open_held(h, "g1");
    let fired = Arc::new(AtomicUsize::new(0));
    let effects = finish(&mut w, h, call, &fired);
    let result_at = effects.iter().position(
        |e| matches!(e, Effect::Send(Message::Response(r)) if r.id.as_ref() == Some(&id)),
    );
    assert!(result_at.is_some());
    assert!(matches!(effects.last(), Some(Effect::Committed { .. })));

    // A call still in flight when the transport closes: nothing is written, the hook fires.
    let id = w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
               "_meta": {"mcpl/instance": "g1"}}),
    );
    w.drive();
    let (_, call) = w.held.remove(0);
    let now = w.now;
    w.conns[h].session.handle_disconnect(now);
    let effects = finish(&mut w, h, call, &fired);
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Send(_))),
        "nothing is written after a disconnect (request {id})"
    );
    let Some(Effect::Committed { hooks, .. }) = effects.into_iter().last() else {
        panic!("Committed still comes");
    };
    hooks.run();
    assert_eq!(fired.load(Ordering::SeqCst), 1, "the disconnect's hook ran");
}

/// Hands `call` a reply of the wrong kind (an open reply to a tool call).
fn finish_wrongly(w: &mut World, h: usize, call: Call) -> Result<(), Error> {
    let outcome = Outcome {
        context: call.context,
        reply: Reply::Open(OpenReply::text("opened")),
    };
    let now = w.now;
    let r = w.conns[h].session.handle_call_done(now, call.id, outcome);
    w.drive();
    r
}

#[test]
fn a_wrong_reply_is_an_internal_error_to_the_host_and_misuse_to_the_app() {
    let (mut w, h, id, call) = held_play();
    let call_id = call.id;
    let err = finish_wrongly(&mut w, h, call).unwrap_err();
    assert!(
        matches!(err, Error::WrongReply { call, expected: "tool" } if call == call_id),
        "{err}"
    );
    let answer = w.response(h, &id).expect("the request is answered");
    let err = answer.unwrap_err();
    assert_eq!(err.code, -32603);
    assert_eq!(err.message, "the server's app answered a tool call wrongly");
    assert_eq!(w.conns[h].session.calls_in_flight(), 0);
}

#[test]
fn a_wrong_reply_to_a_cancelled_call_writes_nothing() {
    // MCP: a cancelled request gets no response, not even an error.
    let (mut w, h, id, call) = held_play();
    w.notify(h, "notifications/cancelled", Some(json!({"requestId": id})));
    w.take(h);
    let err = finish_wrongly(&mut w, h, call).unwrap_err();
    assert!(matches!(err, Error::WrongReply { .. }), "{err}");
    assert!(w.response(h, &id).is_none());
    assert!(w.take(h).is_empty());
}
