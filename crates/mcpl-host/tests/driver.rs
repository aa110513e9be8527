//! The async driver over in-memory mcpl-rpc peers, with paused time.
#![cfg(feature = "tokio")]

mod common;

use std::sync::{Arc, Mutex};

use common::arcade;
use mcpl_host::ControllerConfig;
use mcpl_host::driver::{Agent, Asked, Host, HostPolicy};
use mcpl_host::presenter::{PresenterConfig, WindowItem};
use mcpl_protocol::jsonrpc::{Message, Notification};
use mcpl_rpc::{Event, Peer, PeerConfig, Transport};
use serde_json::json;

#[derive(Clone, Default)]
struct Window(Arc<Mutex<Vec<String>>>);

impl Agent for Window {
    fn notice(&mut self, item: &WindowItem) -> bool {
        self.0.lock().expect("lock").push(item.text.clone());
        true
    }
}

/// Serves the scripted arcade on a peer; returns the server's peer for pushing.
fn serve(transport: Transport) -> Peer {
    serve_this(transport, arcade())
}

/// Serves `server` on a peer; returns the server's peer for pushing.
fn serve_this(transport: Transport, mut server: common::Server) -> Peer {
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let out = peer.clone();
    tokio::spawn(async move {
        server.add_conn();
        while let Some(ev) = events.recv().await {
            if let Event::Request {
                request, responder, ..
            } = ev
            {
                responder.disarm();
                let resp = if request.method == "featureSets/update" {
                    mcpl_protocol::jsonrpc::Response::ok(
                        request.id.clone(),
                        json!({"accepted": true}),
                    )
                } else {
                    server.answer(0, &request)
                };
                let _ = out.send(Message::Response(resp));
                for m in server.conns[0].outbox.drain(..) {
                    let _ = out.send(m);
                }
            }
        }
    });
    peer
}

#[tokio::test(start_paused = true)]
async fn driver_connects_opens_tells_and_keeps_the_digest() {
    let (a, b) = Transport::memory_pair();
    let server = serve(b);
    let (peer, events) = Peer::start(a, PeerConfig::default());
    let window = Window::default();
    let host = Host::spawn(
        PresenterConfig::default(),
        HostPolicy::default(),
        window.clone(),
    );
    let mut cfg = ControllerConfig::new(mcpl_host::ServerName::parse("arcade").unwrap(), "alice");
    cfg.manifest = Some(arcade().manifest);
    host.add_server(cfg, peer, events).await.expect("added");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let (_, digest) = host.rebuild().await.expect("rebuild");
    let (tools, _) = host.tool_list().await.expect("tools");
    assert!(
        tools.iter().any(|t| t.name == "challenge"),
        "the connect reads did not finish"
    );
    let text = host
        .call(
            "toolsets_open",
            json!({"toolset": "game", "instance": "g1"}),
        )
        .await
        .expect("call");
    assert!(
        text.contains("opened `game`/`g1`") && text.contains("`play`"),
        "{text}"
    );
    // Something else's consequence arrives as tools/hints (rev 3 on this connection).
    let hint = json!({"rev": 3, "tools": [{"name": "board", "instance": "g1", "visible": false}]});
    server
        .send(Message::Notification(Notification::new(
            "tools/hints",
            Some(hint),
        )))
        .expect("send");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let told = window.0.lock().expect("lock").join("\n");
    assert!(told.contains("`board`"), "{told}");
    assert!(!host.needs_rebuild().await.expect("ask"));
    let (changed, again) = host.rebuild().await.expect("rebuild");
    assert!(
        !changed && again == digest,
        "changed {changed}: {digest} -> {again}"
    );
    let text = host
        .call("toolsets_act", json!({"tool": "pass", "args": {}}))
        .await
        .expect("act");
    assert_eq!(text, "ok");
}

#[tokio::test(start_paused = true)]
async fn driver_status_shows_revs_recovery_the_list_and_waiting_news_and_reads_change_nothing() {
    let (a, b) = Transport::memory_pair();
    let server = serve(b);
    let (peer, events) = Peer::start(a, PeerConfig::default());
    let host = Host::start(PresenterConfig::default(), HostPolicy::default());
    let agent = mcpl_host::AgentId::new("reader");
    host.add_agent(agent.clone(), ResultsOnly).expect("agent");
    let mut turns = host.turns().await.expect("turns");
    let mut cfg = ControllerConfig::new(mcpl_host::ServerName::parse("arcade").unwrap(), "alice");
    cfg.manifest = Some(arcade().manifest);
    host.add_server(cfg, peer, events).await.expect("added");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    host.rebuild().await.expect("rebuild");
    host.ask(
        &agent,
        "toolsets_open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await
    .expect("open");
    let hint = json!({"rev": 3, "tools": [{"name": "board", "instance": "g1", "visible": false}]});
    turns.borrow_and_update();
    server
        .send(Message::Notification(Notification::new(
            "tools/hints",
            Some(hint),
        )))
        .expect("send");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    assert!(turns.has_changed().expect("open"), "a frame is a turn");
    turns.borrow_and_update();

    let status = host.status().await.expect("status");
    let s = &status.servers[0];
    assert_eq!(s.name.as_str(), "arcade");
    assert!(s.connected && s.hinted && s.ready);
    assert_eq!(s.rev, mcpl_host::Rev(3));
    assert_eq!(
        s.recovery.map(|r| r.phase),
        Some(mcpl_host::controller::RecoveryPhase::Idle)
    );
    assert_eq!(s.open.len(), 1);
    assert_eq!(s.open[0].instance.as_deref(), Some("g1"));
    assert!(!s.open[0].visible.contains(&"board".to_owned()));
    assert!(s.open[0].visible.contains(&"play".to_owned()));
    assert_eq!(status.list_changes, 0);
    assert!(status.tools.contains(&"toolsets_open".to_owned()));
    assert!(!status.digest.is_empty());
    // A results-only agent is owed the hint until its next answer.
    let news = &status.agents[0];
    assert_eq!(news.id, agent);
    assert_eq!(news.waiting.len(), 1);
    assert!(news.waiting[0].text.contains("`board`"));

    // Reading the status is not a turn a watcher is woken for, and tells nobody anything.
    let again = host.status().await.expect("status");
    assert_eq!(again, status);
    assert!(!turns.has_changed().expect("open"));
}

/// An agent whose window is its results (a plain MCP client).
struct ResultsOnly;

impl Agent for ResultsOnly {
    fn notice(&mut self, _item: &WindowItem) -> bool {
        false
    }
    fn results_are_window(&self) -> bool {
        true
    }
}

/// A host over the scripted arcade whose every `tools/call` answers `{"score":3}` as
/// structured content alone, with `game`/`g1` open.
async fn structured_host() -> Host {
    let (a, b) = Transport::memory_pair();
    let mut server = arcade();
    server.call_result = Some(json!({"content": [], "structuredContent": {"score": 3}}));
    let _server = serve_this(b, server);
    let (peer, events) = Peer::start(a, PeerConfig::default());
    let host = Host::spawn(
        PresenterConfig::default(),
        HostPolicy::default(),
        Window::default(),
    );
    let mut cfg = ControllerConfig::new(mcpl_host::ServerName::parse("arcade").unwrap(), "alice");
    cfg.manifest = Some(arcade().manifest);
    host.add_server(cfg, peer, events).await.expect("added");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    host.rebuild().await.expect("rebuild");
    host.call(
        "toolsets_open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await
    .expect("open");
    host
}

#[tokio::test(start_paused = true)]
async fn h85_a_structured_only_result_reads_as_its_json_for_the_model_and_the_puppet() {
    let host = structured_host().await;
    // The puppet's call (the operator's) and the model's, through act and by name.
    let puppet = host
        .call("toolsets_act", json!({"tool": "pass", "args": {}}))
        .await
        .expect("act");
    assert_eq!(puppet, "{\"score\":3}");
    let agent = mcpl_host::presenter::AgentId::new("model");
    host.add_agent(agent.clone(), Window::default())
        .expect("agent");
    for (tool, args) in [
        ("toolsets_act", json!({"tool": "pass", "args": {}})),
        ("challenge", json!({})),
    ] {
        let answer = host.ask(&agent, tool, args).await.expect("ask");
        assert_eq!(answer.text, "{\"score\":3}", "{tool}");
        assert_eq!(answer.news, "", "{tool}");
        assert!(!answer.is_error, "{tool}");
        assert_eq!(
            answer.result,
            Some(json!({"content": [], "structuredContent": {"score": 3}})),
            "{tool}"
        );
    }
}

/// `ask_if` makes the call only when its gate holds for the presenter the host task has;
/// when it does not, nothing is called and the answer is `None`.
#[tokio::test(start_paused = true)]
async fn a_gated_call_is_declined_when_its_gate_fails_and_made_when_it_holds() {
    let host = structured_host().await;
    let agent = mcpl_host::presenter::AgentId::new("model");
    host.add_agent(agent.clone(), Window::default())
        .expect("agent");
    let declined = host
        .ask_if(&agent, "challenge", json!({}), |_| false)
        .await
        .expect("the host runs");
    assert_eq!(declined, None);
    let listed = |p: &mcpl_host::Presenter| p.tool_list().iter().any(|t| t.name == "challenge");
    let answer = host
        .ask_if(&agent, "challenge", json!({}), listed)
        .await
        .expect("the host runs")
        .expect("the gate held");
    assert_eq!(answer.text, "{\"score\":3}");
}

/// `ask_then` hands what became of a call to a callback run in the host task: the answer
/// when the gate holds, the arguments back, untouched and with nothing called, when it does
/// not.
#[tokio::test(start_paused = true)]
async fn a_call_answered_in_the_host_task_gets_its_answer_or_its_arguments_back() {
    let host = structured_host().await;
    let agent = mcpl_host::presenter::AgentId::new("model");
    host.add_agent(agent.clone(), Window::default())
        .expect("agent");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let then = |tx: tokio::sync::mpsc::UnboundedSender<Asked>| move |asked| tx.send(asked).is_ok();
    let args = json!({"tool": "pass", "args": {"note": "kept"}});
    host.ask_then(
        &agent,
        "toolsets_act",
        args.clone(),
        |_| true,
        then(tx.clone()),
    );
    host.ask_then(
        &agent,
        "toolsets_act",
        args.clone(),
        |_| false,
        then(tx.clone()),
    );
    // The declined call is told at once; the other when the server answered.
    assert_eq!(rx.recv().await, Some(Asked::Declined(args)));
    match rx.recv().await {
        Some(Asked::Answered(answer)) => {
            assert_eq!(answer.text, "{\"score\":3}");
            assert!(!answer.is_error);
        }
        other => panic!("not answered: {other:?}"),
    }
}

/// Not on paused time: a `wait_until` that never waits out its limit keeps the runtime busy,
/// and paused time then never moves, so the outer bound could not end the test.
#[tokio::test]
async fn wait_until_gives_up_after_its_limit_although_its_own_reads_are_turns_of_the_host() {
    let host = Host::start(PresenterConfig::default(), HostPolicy::default());
    let never = host.wait_until(|_| false, std::time::Duration::from_millis(20));
    let held = tokio::time::timeout(std::time::Duration::from_secs(20), never).await;
    assert_eq!(held, Ok(false), "gave up (false), within the outer bound");
    let always = host.wait_until(|_| true, std::time::Duration::from_millis(20));
    assert!(always.await, "a condition that holds is seen at once");
}
