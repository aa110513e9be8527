//! The surface host end to end, in process: a plain MCP client over the stdio framing, the
//! surface, and cells servers built on the server SDK.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{Client, Cutter, client_of, fast_timing, surface, surface_for};
use mcpl_rpc::Event;
use serde_json::{Value, json};

/// Calls look until `needle` shows up (a push arrives on its own time), bounded.
async fn look_until(client: &Client, needle: &str, before: &str) -> String {
    let mut seen = before.to_owned();
    if seen.contains(needle) {
        return seen;
    }
    for _ in 0..200 {
        let (text, _) = client.call("toolsets_look", json!({})).await;
        seen.push_str(&text);
        if seen.contains(needle) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("`{needle}` never showed up; saw:\n{seen}");
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn s8_6_tool_list_never_changes_while_toolsets_open_act_and_close() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, client) = surface(&cutter, &["cells"]).await;
    let first = client.tools().await;
    assert_eq!(
        names(&first),
        [
            "hello",
            "toolsets_open",
            "toolsets_look",
            "toolsets_act",
            "toolsets_close"
        ]
    );

    let (text, err) = client
        .call(
            "toolsets_open",
            json!({"toolset": "game", "options": {"size": 4}}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("opened `game`/`game-1`"), "{text}");
    assert!(
        text.contains("`play` in `game`/`game-1` is available: cells says \"Take a free cell.\""),
        "{text}"
    );
    assert_eq!(client.tools().await, first);

    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c2"}}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("You took c2."), "{text}");
    let news = look_until(&client, "Rival took c0.", &text).await;
    assert!(
        news.contains("event from cells in `game`/`game-1`: cells says \"Rival took c0.\""),
        "{news}"
    );
    assert_eq!(client.tools().await, first);

    // The legal-move enum is the instance's own: a taken cell is refused before sending.
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c2"}}),
        )
        .await;
    assert!(err && text.contains("/cell"), "{text}");

    let (text, err) = client
        .call("toolsets_close", json!({"toolset": "game"}))
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("closed `game`/`game-1`"), "{text}");
    assert_eq!(client.tools().await, first);

    let report = surface.cache_report();
    assert_eq!(report.surface_changes, 0);
    assert_eq!(report.surface_lists, 4);
    assert!(report.plain.changes > 0, "{report:?}");
    assert!(report.groups.changes > 0, "{report:?}");
}

#[tokio::test]
async fn v6_two_open_instances_need_a_name_and_the_refusal_names_them() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    for name in ["left", "right"] {
        let (text, err) = client
            .call(
                "toolsets_open",
                json!({"toolset": "game", "instance": name}),
            )
            .await;
        assert!(!err, "{text}");
    }
    let (text, err) = client
        .call("toolsets_act", json!({"tool": "board", "args": {}}))
        .await;
    assert!(err);
    assert!(
        text.contains(
            "`game` has several open instances: `left`, `right`; name one with `instance`"
        ),
        "{text}"
    );
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "board", "instance": "right", "args": {}}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(
        text.contains("free: Some([\"c0\", \"c1\", \"c2\", \"c3\"])"),
        "{text}"
    );
}

#[tokio::test]
async fn h57_two_servers_with_the_same_names_route_by_server_and_refuse_ambiguity() {
    let cutter = Cutter::with(&["east", "west"]);
    let (_surface, client) = surface(&cutter, &["east", "west"]).await;
    let tools = client.tools().await;
    assert_eq!(
        names(&tools),
        [
            "east__hello",
            "west__hello",
            "toolsets_open",
            "toolsets_look",
            "toolsets_act",
            "toolsets_close"
        ]
    );
    let (text, err) = client
        .call("toolsets_open", json!({"toolset": "game"}))
        .await;
    assert!(err);
    assert!(
        text.contains(
            "toolset `game` is on several servers: `east`, `west`; name one with `server`"
        ),
        "{text}"
    );

    let (text, err) = client
        .call(
            "toolsets_open",
            json!({"server": "west", "toolset": "game", "instance": "g"}),
        )
        .await;
    assert!(!err, "{text}");
    assert_eq!(cutter.app("west").opens.load(Ordering::SeqCst), 1);
    assert_eq!(cutter.app("east").opens.load(Ordering::SeqCst), 0);

    let (text, err) = client
        .call("toolsets_act", json!({"tool": "board", "args": {}}))
        .await;
    assert!(err);
    assert!(
        text.contains("tool `board` is on several servers: `east`, `west`; name one with `server`"),
        "{text}"
    );
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"server": "west", "tool": "board", "args": {}}),
        )
        .await;
    assert!(!err, "{text}");
    // East has the tool but no open game: the refusal says so.
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"server": "east", "tool": "board", "args": {}}),
        )
        .await;
    assert!(
        err && text.contains("`game` has no open instance; open one with toolsets_open"),
        "{text}"
    );

    // H56: a selector that is not a string is refused by name.
    let (text, err) = client.call("toolsets_look", json!({"server": 7})).await;
    assert!(err && text.contains("`server` must be a string"), "{text}");
    // H58: an unknown server is refused with the ones there are.
    let (text, err) = client
        .call("toolsets_look", json!({"server": "north"}))
        .await;
    assert!(
        err && text.contains("no server `north`; servers: `east`, `west`"),
        "{text}"
    );
    // Static tools are routed by their prefix.
    let (text, err) = client.call("west__hello", json!({})).await;
    assert!(
        !err && text.contains("hello from the cells server"),
        "{text}"
    );
    assert_eq!(client.tools().await, tools);
}

#[tokio::test]
async fn h28_a_lost_connection_recovers_mid_game_without_a_second_open() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, client) = surface(&cutter, &["cells"]).await;
    let tools = client.tools().await;
    let (text, err) = client
        .call(
            "toolsets_open",
            json!({"toolset": "game", "instance": "g", "options": {"size": 6}}),
        )
        .await;
    assert!(!err, "{text}");
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c5"}}),
        )
        .await;
    assert!(!err);
    look_until(&client, "Rival took c0.", &text).await;

    // The server stays up but the connection drops, and reconnects are refused for a while.
    cutter.refuse("cells", true);
    cutter.cut("cells");
    let mut refused = String::new();
    for _ in 0..200 {
        let (text, err) = client
            .call(
                "toolsets_act",
                json!({"tool": "play", "args": {"cell": "c1"}}),
            )
            .await;
        if err && text.contains("`cells` is") {
            refused = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        refused.contains("never sent") && refused.contains("try again shortly"),
        "refusal: {refused}"
    );
    assert!(
        refused.contains("down (") || refused.contains("connecting"),
        "{refused}"
    );

    cutter.refuse("cells", false);
    surface.wait_connected(&"cells".parse().unwrap(), 2).await;
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c1"}}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("You took c1."), "{text}");
    assert!(text.contains("reconnected"), "{text}");
    assert_eq!(
        cutter.app("cells").opens.load(Ordering::SeqCst),
        1,
        "the game was never re-opened"
    );
    assert_eq!(client.tools().await, tools);
}

#[tokio::test]
async fn h48_a_game_lost_in_a_crash_is_told_once() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    let (_, err) = client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    assert!(!err);
    cutter.crash("cells");
    surface.wait_connected(&"cells".parse().unwrap(), 2).await;
    let told = look_until(&client, "ended while the connection was down", "").await;
    assert_eq!(
        told.matches("`game`/`g` ended while the connection was down")
            .count(),
        1,
        "{told}"
    );
    let (again, _) = client.call("toolsets_look", json!({})).await;
    assert!(!again.contains("ended while"), "{again}");
    assert!(
        again.contains("`game` (cells calls it \"Cells\"): closed"),
        "{again}"
    );
    // Nothing was re-opened on the new server.
    assert_eq!(cutter.app("cells").opens.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn s8_6_ended_games_and_static_tools_are_reported() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    let (_, err) = client
        .call(
            "toolsets_open",
            json!({"toolset": "game", "instance": "g", "options": {"size": 2}}),
        )
        .await;
    assert!(!err);
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c0"}}),
        )
        .await;
    assert!(!err, "{text}");
    let told = look_until(&client, "Board full: a draw.", &text).await;
    assert_eq!(told.matches("Board full: a draw.").count(), 1, "{told}");
    let (text, err) = client
        .call("toolsets_act", json!({"tool": "hello", "args": {}}))
        .await;
    assert!(
        err && text.contains("`hello` is not a dynamic tool; call it by name as `hello`"),
        "{text}"
    );
    let (text, err) = client.call("hello", json!({})).await;
    assert!(!err && text.contains("hello from"), "{text}");
}

/// Waits for the client's next event matching `want`, bounded.
async fn next_event(client: &mut Client, want: impl Fn(&Event) -> bool) -> Event {
    let wait = async {
        loop {
            match client.events.recv().await {
                Some(e) if want(&e) => return e,
                Some(_) => {}
                None => panic!("the surface closed"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the event arrives")
}

#[tokio::test]
async fn s8_6_a_plain_client_gets_pushes_as_log_messages() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, mut client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c3"}}),
        )
        .await;
    let e = next_event(&mut client, |e| matches!(e, Event::Notification { notification, .. } if notification.method == "notifications/message")).await;
    let Event::Notification { notification, .. } = e else {
        unreachable!()
    };
    let params = notification.params.unwrap();
    assert_eq!(params["logger"], "cells");
    assert_eq!(
        params["data"],
        "event from cells in `game`/`g`: cells says \"Rival took c0.\""
    );
}

/// A surface over `cells` and an MCPL client of it granted `pushEvents` (MCPL §5.3: by the
/// client's policy request), with the tools listed and game `g` open.
async fn pushed_client_with_game_open(
    cutter: &Cutter,
) -> (std::sync::Arc<mcpl_surface::Surface>, Client) {
    let caps = json!({"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}});
    let (surface, client) = surface_for(cutter, &["cells"], caps).await;
    let receipt = client
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"]}),
        )
        .await;
    assert_eq!(receipt["accepted"], true, "{receipt}");
    client.tools().await;
    client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    (surface, client)
}

#[tokio::test]
async fn s8_6_an_mcpl_client_with_push_events_gets_push_event() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, mut client) = pushed_client_with_game_open(&cutter).await;
    client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c3"}}),
        )
        .await;
    let e = next_event(
        &mut client,
        |e| matches!(e, Event::Request { request, .. } if request.method == "push/event"),
    )
    .await;
    let Event::Request {
        request, responder, ..
    } = e
    else {
        unreachable!()
    };
    let params = request.params.unwrap();
    assert_eq!(params["payload"]["content"][0]["text"], "Rival took c0.");
    assert_eq!(params["origin"]["server"], "cells");
    // The hints are the surface's to apply, not the client's.
    assert!(params.get("hints").is_none(), "{params}");
    // MCPL §9.2, §9.4: in the surface's own name, with its own id from the injected source.
    assert_eq!(params["featureSet"], "surface.events", "{params}");
    assert_eq!(params["eventId"], "surface-t-1", "{params}");
    assert!(params.get("toolset").is_none(), "{params}");
    assert_eq!(params["origin"]["toolset"], "game", "{params}");
    responder.respond(json!({"accepted": true})).unwrap();
    // Told once: the event is not news in the next answer as well.
    let (look, _) = client.call("toolsets_look", json!({})).await;
    assert!(!look.contains("Rival took c0."), "{look}");
}

#[tokio::test]
async fn s8_1_only_a_static_definition_change_changes_the_list_and_the_client_is_told() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, mut client) = surface(&cutter, &["cells"]).await;
    let first = client.tools().await;
    let (text, err) = client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    assert!(!err, "{text}");
    assert_eq!(client.tools().await, first);

    cutter.add_static("cells", "wave");
    next_event(&mut client, |e| {
        matches!(e, Event::Notification { notification, .. }
            if notification.method == "notifications/tools/list_changed")
    })
    .await;
    let second = client.tools().await;
    assert!(names(&second).contains(&"wave".to_owned()), "{second}");
    let report = surface.cache_report();
    assert_eq!(report.surface_changes, 1, "{report:?}");
    // The game survived the catalog change.
    let (text, err) = client
        .call("toolsets_act", json!({"tool": "board", "args": {}}))
        .await;
    assert!(!err, "{text}");
}

#[tokio::test]
async fn s8_1_a_static_tool_added_or_dropped_is_routed_before_the_client_lists_again() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, mut client) = surface(&cutter, &["cells"]).await;
    let first = client.tools().await;
    assert!(!names(&first).contains(&"wave".to_owned()), "{first}");
    cutter.add_static("cells", "wave");
    next_event(&mut client, |e| {
        matches!(e, Event::Notification { notification, .. }
            if notification.method == "notifications/tools/list_changed")
    })
    .await;
    // Told the list changed, the client calls the new tool by name without listing first.
    let (text, err) = client.call("wave", json!({})).await;
    assert!(!err, "{text}");
    assert_eq!(text, "a wave from the cells server");
    // The server drops it again; the client, not yet listing again, still calls it.
    client.tools().await;
    cutter.set_statics("cells", &[]);
    next_event(&mut client, |e| {
        matches!(e, Event::Notification { notification, .. }
            if notification.method == "notifications/tools/list_changed")
    })
    .await;
    // Listed when the client last asked, so it is the surface's to answer: gone now, said as
    // the tool's result, not refused as a name the client never saw.
    let (text, err) = client.call("wave", json!({})).await;
    assert!(err, "{text}");
    assert_eq!(text, "`wave` is not available now in `cells`");
}

#[tokio::test]
async fn s8_6_an_mcpl_client_that_never_grants_push_events_gets_log_messages() {
    let cutter = Cutter::with(&["cells"]);
    let caps = json!({"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}});
    let (_surface, mut client) = surface_for(&cutter, &["cells"], caps).await;
    // A policy that grants nothing.
    client
        .request("featureSets/update", json!({"effectiveCapabilities": []}))
        .await;
    client.tools().await;
    client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c3"}}),
        )
        .await;
    let e = next_event(&mut client, |e| match e {
        Event::Request { request, .. } => request.method == "push/event",
        Event::Notification { notification, .. } => notification.method == "notifications/message",
        _ => false,
    })
    .await;
    assert!(matches!(e, Event::Notification { .. }), "{e:?}");
}

#[tokio::test]
async fn h61_h82_a_call_in_flight_at_a_cut_is_told_unknown_and_never_sent_again() {
    let cutter = Cutter::with(&["cells"]);
    cutter.add_static("cells", "stall");
    let (surface, client) = surface(&cutter, &["cells"]).await;
    let call = tokio::spawn({
        let peer = client.peer.clone();
        async move {
            peer.request_value(
                "tools/call",
                Some(json!({"name": "stall", "arguments": {}})),
                mcpl_rpc::RequestOptions::timeout(Duration::from_secs(20)),
            )
            .await
            .expect("an answer")
            .value
        }
    });
    while cutter.app("cells").stalls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cutter.cut("cells");
    let answer = call.await.expect("the call task");
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(answer["isError"], json!(true), "{answer}");
    assert!(
        text.contains("outcome unknown: the call was sent to `cells` but no answer came; check the state with toolsets_look"),
        "{text}"
    );
    surface.wait_connected(&"cells".parse().unwrap(), 2).await;
    let (text, _) = client.call("toolsets_look", json!({})).await;
    assert!(text.contains("`cells` reconnected"), "{text}");
    // Nothing sent it again on its own.
    assert_eq!(cutter.app("cells").stalls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn h83_a_static_tool_result_keeps_its_blocks_and_structured_content_with_news_last() {
    let cutter = Cutter::with(&["cells"]);
    cutter.add_static("cells", "picture");
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    // Something owed: the rival's move after ours comes as a push no call claims.
    let (text, err) = client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    assert!(!err, "{text}");
    let (text, err) = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"cell": "c3"}}),
        )
        .await;
    assert!(!err, "{text}");
    while !cutter.app("cells").rival_moved("g") {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let r = client
        .request("tools/call", json!({"name": "picture", "arguments": {}}))
        .await;
    let blocks = r["content"].as_array().expect("content");
    assert_eq!(blocks[0]["text"], "a picture of the board", "{r}");
    assert_eq!(blocks[1]["type"], "image", "{r}");
    assert_eq!(blocks[1]["mimeType"], "image/png", "{r}");
    assert_eq!(r["structuredContent"], json!({"cells": 4}), "{r}");
    // The news owed so far rides as the last block, after the server's own blocks.
    let last = blocks.last().expect("a block")["text"]
        .as_str()
        .unwrap_or_default();
    assert!(last.contains("Rival took c0."), "{r}");
    assert!(r.get("_meta").is_none(), "{r}");
}

/// Sends `tools/call` for `name` without waiting for its answer.
fn start_call(client: &Client, name: &str, args: Value) -> mcpl_rpc::PendingRequest {
    client
        .peer
        .start_request(
            "tools/call",
            Some(json!({"name": name, "arguments": args})),
            mcpl_rpc::RequestOptions::timeout(Duration::from_secs(20)),
        )
        .expect("sent")
}

/// The answer's text blocks, joined.
fn text_of(answer: &Value) -> String {
    answer["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Calls answered from inside the host task: many in flight at once, next to one that never
/// returns, each get their own answer (never another call's), and the stalled one blocks
/// none of them.
#[tokio::test]
async fn calls_in_flight_together_each_get_their_own_answer_and_a_stalled_one_blocks_none() {
    let cutter = Cutter::with(&["cells"]);
    cutter.add_static("cells", "stall");
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    for (instance, size) in [("small", 2), ("large", 6)] {
        let (text, err) = client
            .call(
                "toolsets_open",
                json!({"toolset": "game", "instance": instance, "options": {"size": size}}),
            )
            .await;
        assert!(!err, "{text}");
    }
    let stalled = start_call(&client, "stall", json!({}));
    let calls: Vec<(&str, mcpl_rpc::PendingRequest)> = (0..24)
        .map(|i| {
            let instance = if i % 3 == 0 { "small" } else { "large" };
            let args = json!({"tool": "board", "instance": instance, "args": {}});
            (instance, start_call(&client, "toolsets_act", args))
        })
        .collect();
    for (instance, call) in calls {
        let answer = call.wait().await.expect("an answer").value;
        let text = text_of(&answer);
        let want = match instance {
            "small" => r#"free: Some(["c0", "c1"])"#,
            _ => r#"free: Some(["c0", "c1", "c2", "c3", "c4", "c5"])"#,
        };
        assert_ne!(answer["isError"], json!(true), "{answer}");
        assert!(text.starts_with(want), "{instance}: {text}");
    }
    assert_eq!(cutter.app("cells").stalls.load(Ordering::SeqCst), 1);
    stalled.cancel("done");
}

/// A call the client cancelled while the server worked on it: when its outcome comes (here
/// the link is cut, so it is unknown), nothing is written for it, and the session goes on.
#[tokio::test]
async fn a_call_cancelled_in_flight_gets_no_answer_and_the_next_call_is_answered() {
    let cutter = Cutter::with(&["cells"]);
    cutter.add_static("cells", "stall");
    let (surface, mut client) = surface(&cutter, &["cells"]).await;
    client.tools().await;
    let stalled = start_call(&client, "stall", json!({}));
    while cutter.app("cells").stalls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stalled.cancel("the user gave up");
    let cancelled = stalled.wait().await;
    assert!(
        matches!(cancelled, Err(mcpl_rpc::RpcError::Cancelled { .. })),
        "{cancelled:?}"
    );
    // The host settles the call as unknown when the link goes; the client asked for no
    // answer, so none is written.
    cutter.cut("cells");
    surface.wait_connected(&"cells".parse().unwrap(), 2).await;
    let (text, err) = client.call("hello", json!({})).await;
    assert!(
        !err && text.starts_with("hello from the cells server"),
        "{text}"
    );
    // Anything written for the cancelled call would have come before that answer.
    while let Some(event) = client.events.try_recv() {
        match event {
            Event::LateResponse { id, .. } => panic!("an answer to {id} was written"),
            Event::Response { response, .. } => panic!("a stray answer: {response:?}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_call_of_a_name_no_server_has_is_refused_as_invalid_params_and_reaches_no_server() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    assert!(names(&client.tools().await).contains(&"hello".to_owned()));
    let err = client
        .peer
        .request_value(
            "tools/call",
            Some(json!({"name": "no_such_tool", "arguments": {}})),
            mcpl_rpc::RequestOptions::timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap_err();
    let mcpl_rpc::RpcError::Remote { error, .. } = err else {
        panic!("not refused by the surface: {err:?}")
    };
    assert_eq!(error.code, -32602);
    assert_eq!(error.message, "invalid params: unknown tool `no_such_tool`");
}

#[tokio::test]
async fn the_surfaces_push_event_requests_to_one_client_carry_distinct_ids() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, mut client) = pushed_client_with_game_open(&cutter).await;
    let mut ids = Vec::new();
    for cell in ["c3", "c2"] {
        client
            .call(
                "toolsets_act",
                json!({"tool": "play", "args": {"cell": cell}}),
            )
            .await;
        let e = next_event(
            &mut client,
            |e| matches!(e, Event::Request { request, .. } if request.method == "push/event"),
        )
        .await;
        let Event::Request {
            request, responder, ..
        } = e
        else {
            unreachable!()
        };
        ids.push(request.id.clone());
        responder.respond(json!({"accepted": true})).unwrap();
    }
    assert_ne!(ids[0], ids[1], "two pushes with one id: {ids:?}");
}

#[tokio::test]
async fn h84_the_configured_inline_cap_moves_a_change_that_does_not_fit_to_the_next_answer() {
    use mcpl_surface::{Surface, SurfaceConfig};
    use std::sync::Arc;
    let cutter = Cutter::with(&["cells"]);
    let mut cfg = SurfaceConfig::new(Cutter::specs(&["cells"]));
    cfg.timing = fast_timing();
    // Room for the open's own text, not for the change told with it.
    cfg.inline_cap = Some(40);
    let surface = Arc::new(Surface::start(cfg, Arc::new(cutter.clone())).expect("surface starts"));
    let client = client_of(&surface, json!({})).await;
    client.tools().await;

    let (text, err) = client
        .call("toolsets_open", json!({"toolset": "game", "instance": "g"}))
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("opened `game`/`g`"), "{text}");
    assert!(
        !text.contains("is available"),
        "the change was inline: {text}"
    );
    let (look, _) = client.call("toolsets_look", json!({})).await;
    assert!(look.contains("`play` in `game`/`g` is available"), "{look}");
}

/// Connects to `cutter` the first time and, after that, to a server that answers
/// `initialize` but never anything else (so it is never read).
#[derive(Clone)]
struct NeverReadAgain {
    cutter: Cutter,
    connects: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl mcpl_surface::Connector for NeverReadAgain {
    fn connect<'a>(
        &'a self,
        spec: &'a mcpl_surface::ServerSpec,
    ) -> mcpl_surface::BoxFuture<'a, Result<mcpl_rpc::Transport, mcpl_surface::ConnectError>> {
        if self.connects.fetch_add(1, Ordering::SeqCst) == 0 {
            return self.cutter.connect(spec);
        }
        Box::pin(async move {
            let (a, b) = mcpl_rpc::Transport::memory_pair();
            let (peer, mut events) = mcpl_rpc::Peer::start(b, mcpl_rpc::PeerConfig::default());
            tokio::spawn(async move {
                let _keep_open = peer;
                let mut unanswered = Vec::new();
                while let Some(event) = events.recv().await {
                    if let Event::Request {
                        request, responder, ..
                    } = event
                    {
                        if request.method == "initialize" {
                            let _ = responder.respond(json!({"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "slow", "version": "0"}}));
                        } else {
                            unanswered.push(responder);
                        }
                    }
                }
            });
            Ok(a)
        })
    }
}

#[tokio::test]
async fn wait_connected_waits_for_the_server_to_be_read_again_not_only_to_connect() {
    use mcpl_surface::{LinkTiming, Surface, SurfaceConfig};
    use std::sync::Arc;
    let cutter = Cutter::with(&["cells"]);
    let connector = NeverReadAgain {
        cutter: cutter.clone(),
        connects: Arc::default(),
    };
    let mut cfg = SurfaceConfig::new(Cutter::specs(&["cells"]));
    cfg.timing = LinkTiming {
        request_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_secs(30),
        ..fast_timing()
    };
    let surface = Surface::start(cfg, Arc::new(connector)).expect("surface starts");
    let cells: mcpl_host::ServerName = "cells".parse().unwrap();
    surface.wait_connected(&cells, 1).await;
    // Already connected and read: no wait at all.
    tokio::time::timeout(Duration::from_secs(20), surface.wait_connected(&cells, 1))
        .await
        .expect("a server connected and read before the call is not waited for");
    cutter.cut("cells");
    // The second connection answers `initialize`, so it counts, but never `tools/list`.
    tokio::time::timeout(Duration::from_secs(30), async {
        while surface.connects(&cells) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the surface reconnects");
    let waited = tokio::time::timeout(
        Duration::from_millis(300),
        surface.wait_connected(&cells, 2),
    )
    .await;
    assert!(
        waited.is_err(),
        "returned although the new connection's tools/list was never answered"
    );
}

/// Connects to a plain MCP server (no MCPL) that lists `tools` and answers nothing else.
struct PlainTools(&'static [&'static str]);

impl mcpl_surface::Connector for PlainTools {
    fn connect<'a>(
        &'a self,
        _spec: &'a mcpl_surface::ServerSpec,
    ) -> mcpl_surface::BoxFuture<'a, Result<mcpl_rpc::Transport, mcpl_surface::ConnectError>> {
        let tools: Vec<Value> = self
            .0
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
            .collect();
        Box::pin(async move {
            let (a, b) = mcpl_rpc::Transport::memory_pair();
            let (peer, mut events) = mcpl_rpc::Peer::start(b, mcpl_rpc::PeerConfig::default());
            tokio::spawn(async move {
                let _keep_open = peer;
                let mut unanswered = Vec::new();
                while let Some(event) = events.recv().await {
                    if let Event::Request {
                        request, responder, ..
                    } = event
                    {
                        match request.method.as_str() {
                            "initialize" => {
                                let _ = responder.respond(json!({"protocolVersion": "2025-11-25",
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "plain", "version": "0"}}));
                            }
                            "tools/list" => {
                                let _ = responder.respond(json!({"tools": tools}));
                            }
                            _ => unanswered.push(responder),
                        }
                    }
                }
            });
            Ok(a)
        })
    }
}

#[tokio::test]
async fn a_plain_server_with_more_tools_than_the_surfaces_static_limit_is_grouped() {
    use mcpl_surface::{ServerSpec, Surface, SurfaceConfig, Target};
    use std::sync::Arc;
    let name: mcpl_host::ServerName = "plain".parse().unwrap();
    let spec = ServerSpec::new(
        name.clone(),
        Target::Exec {
            program: "plain".into(),
            args: vec![],
        },
    );
    let mut cfg = SurfaceConfig::new(vec![spec]);
    // Three tools: static under the default limit (20), grouped over a limit of 2.
    cfg.static_limit = 2;
    let connector = PlainTools(&["git_log", "git_diff", "fs_read"]);
    let surface = Arc::new(Surface::start(cfg, Arc::new(connector)).expect("surface starts"));
    surface.wait_connected(&name, 1).await;
    let client = client_of(&surface, json!({})).await;
    let tools = client.tools().await;
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"toolsets_look"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("git_") || n.contains("fs_")),
        "the server's tools stayed static: {names:?}"
    );
    let (look, _) = client.call("toolsets_look", json!({})).await;
    assert!(look.contains("git"), "{look}");
}

#[tokio::test]
async fn a_call_after_the_host_task_stopped_is_an_error_result_that_says_so() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, client) = surface(&cutter, &["cells"]).await;
    surface.wait_connected(&"cells".parse().unwrap(), 1).await;
    // The next turn that changes something ends the host task (as a bug in it would).
    surface
        .host()
        .observe(|_| panic!("the host task stops here"))
        .expect("observer added");
    cutter.cut("cells");
    let mut last = (String::new(), false);
    for _ in 0..200 {
        last = client.call("toolsets_look", json!({})).await;
        if last.1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(last.1, "never an error result: {last:?}");
    assert!(last.0.contains("the surface host stopped"), "{}", last.0);
}

/// Hands out a connection whose far end is already gone, every time.
struct AlwaysGone;

impl mcpl_surface::Connector for AlwaysGone {
    fn connect<'a>(
        &'a self,
        _spec: &'a mcpl_surface::ServerSpec,
    ) -> mcpl_surface::BoxFuture<'a, Result<mcpl_rpc::Transport, mcpl_surface::ConnectError>> {
        Box::pin(async {
            let (near, far) = mcpl_rpc::Transport::memory_pair();
            drop(far);
            Ok(near)
        })
    }
}

#[tokio::test]
async fn a_server_that_keeps_failing_is_down_with_its_attempts_counted() {
    use mcpl_surface::{LinkStatus, LinkTiming, Surface, SurfaceConfig};
    use std::sync::Arc;
    let mut cfg = SurfaceConfig::new(Cutter::specs(&["cells"]));
    cfg.timing = LinkTiming {
        backoff_max: Duration::from_millis(20),
        ..fast_timing()
    };
    let surface = Surface::start(cfg, Arc::new(AlwaysGone)).expect("surface starts");
    let cells: mcpl_host::ServerName = "cells".parse().unwrap();
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(LinkStatus::Down { attempt, .. }) = surface.status(&cells)
                && seen.last() != Some(&attempt)
            {
                seen.push(attempt);
                if attempt >= 3 {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the attempts seen while down: {seen:?}"));
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    surface.shutdown().await;
}

#[tokio::test]
async fn the_surface_declares_its_capabilities_and_answers_ping_and_set_level() {
    let cutter = Cutter::with(&["cells"]);
    let (_surface, client) = surface(&cutter, &["cells"]).await;
    let init = &client.init;
    assert!(
        init["capabilities"]["logging"].is_object(),
        "MCP: a server that sends notifications/message declares logging: {init}"
    );
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    // And answers what those capabilities (and MCP's base) let a client ask.
    assert_eq!(client.request("ping", json!({})).await, json!({}));
    assert_eq!(
        client
            .request("logging/setLevel", json!({"level": "info"}))
            .await,
        json!({})
    );
}

/// Connects to `cutter`'s servers through a relay that passes every message on except the
/// host's `featureSets/update`, which it never answers.
#[derive(Clone)]
struct PolicyNeverAnswered {
    cutter: Cutter,
}

impl mcpl_surface::Connector for PolicyNeverAnswered {
    fn connect<'a>(
        &'a self,
        spec: &'a mcpl_surface::ServerSpec,
    ) -> mcpl_surface::BoxFuture<'a, Result<mcpl_rpc::Transport, mcpl_surface::ConnectError>> {
        use mcpl_rpc::{Peer, PeerConfig, RequestOptions, RpcError};
        Box::pin(async move {
            let inner = self.cutter.connect(spec).await?;
            let (near, far) = mcpl_rpc::Transport::memory_pair();
            let (front, mut from_host) = Peer::start(far, PeerConfig::default());
            let (back, mut from_server) = Peer::start(inner, PeerConfig::default());
            let ask = |to: Peer,
                       request: mcpl_protocol::jsonrpc::Request,
                       responder: mcpl_rpc::Responder| {
                tokio::spawn(async move {
                    let answer = to
                        .request_value(
                            &request.method,
                            request.params,
                            RequestOptions::timeout(Duration::from_secs(20)),
                        )
                        .await;
                    let _ = match answer {
                        Ok(a) => responder.respond(a.value),
                        Err(RpcError::Remote { error, .. }) => responder.error(*error),
                        Err(e) => responder.invalid_params(e),
                    };
                });
            };
            let (to_server, to_host) = (back.clone(), front.clone());
            tokio::spawn(async move {
                let mut unanswered = Vec::new();
                while let Some(event) = from_host.recv().await {
                    match event {
                        Event::Request {
                            request, responder, ..
                        } if request.method == "featureSets/update" => unanswered.push(responder),
                        Event::Request {
                            request, responder, ..
                        } => ask(to_server.clone(), request, responder),
                        Event::Notification { notification, .. } => {
                            let _ =
                                to_server.notify_value(&notification.method, notification.params);
                        }
                        _ => {}
                    }
                }
            });
            tokio::spawn(async move {
                while let Some(event) = from_server.recv().await {
                    match event {
                        Event::Request {
                            request, responder, ..
                        } => ask(to_host.clone(), request, responder),
                        Event::Notification { notification, .. } => {
                            let _ = to_host.notify_value(&notification.method, notification.params);
                        }
                        _ => {}
                    }
                }
            });
            Ok(near)
        })
    }
}

#[tokio::test]
async fn a_server_that_never_acknowledges_the_policy_is_used_after_the_request_timeout() {
    use mcpl_surface::{LinkTiming, Surface, SurfaceConfig};
    use std::sync::Arc;
    let cutter = Cutter::with(&["cells"]);
    let mut cfg = SurfaceConfig::new(Cutter::specs(&["cells"]));
    cfg.timing = LinkTiming {
        request_timeout: Duration::from_secs(1),
        ..fast_timing()
    };
    let connector = PolicyNeverAnswered { cutter };
    let surface = Surface::start(cfg, Arc::new(connector)).expect("surface starts");
    let cells: mcpl_host::ServerName = "cells".parse().unwrap();
    // The host's own default wait for the policy is 10 s; the surface's timing says 1 s.
    tokio::time::timeout(Duration::from_secs(6), surface.wait_connected(&cells, 1))
        .await
        .expect("the server is read once the policy request times out");
    surface.shutdown().await;
}
