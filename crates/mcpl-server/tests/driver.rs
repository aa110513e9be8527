//! The tokio driver over an in-memory stdio pair, with an `mcpl-rpc` peer as the host.

#![cfg(feature = "tokio")]

mod common;

use common::{ada, arcade};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_rpc::{Event as RpcEvent, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::driver::{App, Runtime};
use mcpl_server::{Context, Event, OpenReply, Server, ServerConfig, Update, WallClock};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant, UNIX_EPOCH};

struct Game;

impl App for Game {
    async fn open(&self, ctx: &mut Context) -> OpenReply {
        ctx.show("board").show("play").show("pass");
        OpenReply::text("New game.").title("Go vs bot")
    }

    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        if tool == "play" {
            ctx.hide("play");
        }
        if tool == "fortune" {
            match args.get("mode").and_then(Value::as_str) {
                // Waits until another call releases it.
                Some("hold") => {
                    held().notified().await;
                    return CallToolResult::text("released");
                }
                Some("release") => {
                    held().notify_one();
                    return CallToolResult::text("released the held call");
                }
                Some("late-panic") => {
                    tokio::task::yield_now().await;
                    panic!("the fortune teller fell over after a pause");
                }
                _ => panic!("the fortune teller fell over"),
            }
        }
        CallToolResult::text(format!("{tool} done"))
    }
}

/// What a held `fortune` call waits for.
fn held() -> &'static tokio::sync::Notify {
    static HELD: std::sync::OnceLock<tokio::sync::Notify> = std::sync::OnceLock::new();
    HELD.get_or_init(tokio::sync::Notify::new)
}

/// A runtime serving the arcade's contract with [`Game`], on the wall clock.
fn game_runtime() -> Runtime<Game> {
    let clock = WallClock::new(Instant::now(), UNIX_EPOCH);
    let server = Server::new(arcade().build().unwrap(), ServerConfig::new(clock));
    Runtime::from_server(server, Game)
}

/// `runtime` serving ada on one in-memory connection; the host's peer, its events and the
/// serving task.
fn serve_ada_in_memory(
    runtime: &Runtime<Game>,
) -> (
    Peer,
    mcpl_rpc::Events,
    tokio::task::JoinHandle<Result<(), mcpl_server::Error>>,
) {
    let (host_side, server_side) = Transport::memory_pair();
    let runtime = runtime.clone();
    let connection = runtime.next_connection();
    let serving = tokio::spawn(async move { runtime.serve(server_side, ada(), connection).await });
    let (host, events) = Peer::start(host_side, PeerConfig::default());
    (host, events, serving)
}

/// How a token test reaches the runtime.
enum Listen {
    WebSocket,
    StreamableHttp,
}

/// `runtime` served on a free local port with the token `t-ada` for ada; the URL (`ws://...`
/// or `http://.../mcp`) and the serving task.
async fn serve_ada_token(
    runtime: &Runtime<Game>,
    listen: Listen,
) -> (
    String,
    tokio::task::JoinHandle<Result<(), mcpl_server::Error>>,
) {
    use mcpl_server::{Identity, TokenMap};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let identity = Identity::Tokens(TokenMap::new().with("t-ada", "ada"));
    let runtime = runtime.clone();
    match listen {
        Listen::WebSocket => (
            format!("ws://{addr}"),
            tokio::spawn(async move { runtime.serve_ws(listener, identity).await }),
        ),
        Listen::StreamableHttp => (
            format!("http://{addr}/mcp"),
            tokio::spawn(async move { runtime.serve_http(listener, "/mcp", identity).await }),
        ),
    }
}

async fn ask(peer: &Peer, method: &str, params: Value) -> Value {
    let options = RequestOptions::timeout(Duration::from_secs(30));
    peer.request_value(method, Some(params), options)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
        .value
}

#[tokio::test]
async fn s6_1_driver_writes_results_and_pushes_in_rev_order() {
    let runtime = game_runtime();
    let (host, mut events, serving) = serve_ada_in_memory(&runtime);
    ask(
        &host,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
            "pushEvents": true}}},
        "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    ask(
        &host,
        "featureSets/update",
        json!({"effectiveCapabilities": ["pushEvents"]}),
    )
    .await;
    let open = ask(
        &host,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(1));
    let call = ask(
        &host,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
        "_meta": {"mcpl/instance": "g1"}}),
    )
    .await;
    assert_eq!(call["_meta"]["mcpl/hints"]["rev"], json!(2));

    let mut bot = Update::new();
    bot.instance("game", "g1").show("play");
    bot.event(Event::text("White played E5.").about("game", Some("g1")));
    runtime.apply(&ada(), bot).unwrap();
    let push = loop {
        match events.recv().await.expect("the push arrives") {
            RpcEvent::Request {
                request, responder, ..
            } => {
                responder.respond(json!({"accepted": true})).unwrap();
                break request;
            }
            _ => continue,
        }
    };
    assert_eq!(push.method, "push/event");
    let params = push.params.unwrap();
    assert_eq!(params["hints"]["rev"], json!(3));
    assert_eq!(params["instance"], json!("g1"));

    host.close().await;
    let served = tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serve ends when the host hangs up");
    assert!(served.unwrap().is_ok());
}

async fn handshake(peer: &Peer) {
    ask(
        peer,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
        "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
}

#[tokio::test]
async fn s5_6_websocket_tokens_name_principals_and_connections_share_state() {
    use mcpl_rpc::Limits;
    use mcpl_rpc::transport::ws;

    let runtime = game_runtime();
    let (url, accepting) = serve_ada_token(&runtime, Listen::WebSocket).await;
    let refused = ws::connect(&url, &[("Authorization", "Bearer nope")], Limits::default()).await;
    assert!(
        refused.is_err(),
        "an unknown token is refused at the handshake"
    );

    let auth = [("Authorization", "Bearer t-ada")];
    let a = ws::connect(&url, &auth, Limits::default()).await.unwrap();
    let b = ws::connect(&url, &auth, Limits::default()).await.unwrap();
    let (a, _a_events) = Peer::start(a, PeerConfig::default());
    let (b, mut b_events) = Peer::start(b, PeerConfig::default());
    handshake(&a).await;
    handshake(&b).await;
    ask(
        &a,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    let hints = loop {
        match b_events.recv().await.expect("b hears of the open") {
            RpcEvent::Notification { notification, .. } if notification.method == "tools/hints" => {
                break notification.params.unwrap();
            }
            _ => continue,
        }
    };
    assert_eq!(hints["rev"], json!(1), "b's own first rev");
    assert_eq!(hints["toolsets"][0]["instance"], json!("g1"));
    let list = ask(&b, "toolsets/list", json!({})).await;
    assert_eq!(list["open"][0]["instance"], json!("g1"));
    a.close().await;
    b.close().await;
    accepting.abort();
}

#[tokio::test]
async fn s5_6_streamable_http_sessions_act_for_the_token_principal() {
    use mcpl_rpc::Limits;
    use mcpl_rpc::transport::http;

    let runtime = game_runtime();
    let (url, serving) = serve_ada_token(&runtime, Listen::StreamableHttp).await;
    let bad = http::connect(&url, &[("Authorization", "Bearer nope")], Limits::default()).unwrap();
    let (bad, _events) = Peer::start(bad, PeerConfig::default());
    let options = RequestOptions::timeout(Duration::from_secs(30));
    let refused = bad
        .request_value(
            "initialize",
            Some(json!({"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})),
            options,
        )
        .await;
    assert!(refused.is_err(), "an unknown token gets no session");

    let good = http::connect(
        &url,
        &[("Authorization", "Bearer t-ada")],
        Limits::default(),
    )
    .unwrap();
    let (good, _events) = Peer::start(good, PeerConfig::default());
    handshake(&good).await;
    let open = ask(
        &good,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(1));
    let state = runtime.state(&ada()).await.expect("the store answers");
    assert_eq!(
        state.instances_of("game").len(),
        1,
        "the session acted for ada"
    );
    good.close().await;
    serving.abort();
}

#[tokio::test]
async fn app_code_that_panics_still_answers_and_changes_nothing() {
    let runtime = game_runtime();
    let (host, _events, serving) = serve_ada_in_memory(&runtime);
    handshake(&host).await;
    let r = ask(
        &host,
        "tools/call",
        json!({"name": "fortune", "arguments": {}}),
    )
    .await;
    assert_eq!(r["isError"], json!(true));
    assert_eq!(
        r["content"][0]["text"],
        json!("tool `fortune` failed inside the server")
    );
    let r = ask(&host, "tools/call", json!({"name": "tip", "arguments": {}})).await;
    assert_eq!(
        r["content"][0]["text"],
        json!("tip done"),
        "the connection goes on"
    );
    host.close().await;
    let _ = tokio::time::timeout(Duration::from_secs(30), serving).await;
}

#[tokio::test]
async fn app_code_that_waits_runs_on_while_the_connection_serves_other_calls() {
    let runtime = game_runtime();
    let (host, _events, serving) = serve_ada_in_memory(&runtime);
    handshake(&host).await;
    let options = RequestOptions::timeout(Duration::from_secs(30));
    // Its first poll does not finish, so it goes on in a task of its own...
    let hold = host
        .start_request(
            "tools/call",
            Some(json!({"name": "fortune", "arguments": {"mode": "hold"}})),
            options,
        )
        .unwrap();
    // ...while this call, which finishes at once, is answered on the connection's task.
    let r = ask(
        &host,
        "tools/call",
        json!({"name": "fortune", "arguments": {"mode": "release"}}),
    )
    .await;
    assert_eq!(r["content"][0]["text"], json!("released the held call"));
    let held = hold.wait().await.unwrap().value;
    assert_eq!(held["content"][0]["text"], json!("released"));
    // A call that panics after waiting is answered too.
    let r = ask(
        &host,
        "tools/call",
        json!({"name": "fortune", "arguments": {"mode": "late-panic"}}),
    )
    .await;
    assert_eq!(r["isError"], json!(true));
    assert_eq!(
        r["content"][0]["text"],
        json!("tool `fortune` failed inside the server")
    );
    host.close().await;
    let _ = tokio::time::timeout(Duration::from_secs(30), serving).await;
}

/// A runtime serving one in-memory connection of ada within `timeout`; the host's peer.
fn serve_one(timeout: Duration) -> (Peer, mcpl_rpc::Events, tokio::task::JoinHandle<()>) {
    let runtime = game_runtime();
    let (host_side, server_side) = Transport::memory_pair();
    let serving = tokio::spawn(async move {
        let connection = runtime.next_connection();
        let _ = runtime
            .serve_within(server_side, ada(), connection, timeout)
            .await;
    });
    let (host, events) = Peer::start(host_side, PeerConfig::default());
    (host, events, serving)
}

#[tokio::test]
async fn lifecycle_only_ping_is_served_before_initialize_and_nothing_changes() {
    let (host, _events, _serving) = serve_one(Duration::from_secs(60));
    let options = RequestOptions::timeout(Duration::from_secs(30));
    for (method, params) in [
        ("tools/call", json!({"name": "play", "arguments": {}})),
        (
            "toolsets/open",
            json!({"toolset": "game", "instance": "g1"}),
        ),
        ("tools/list", json!({})),
    ] {
        let err = host
            .request_value(method, Some(params), options.clone())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("-32600"), "{method}: {err}");
        assert!(err.contains("before `initialize`"), "{method}: {err}");
    }
    // A long method name is quoted cut, not whole.
    let long = "m".repeat(10_000);
    let err = host.request_value(&long, None, options.clone()).await;
    let Err(mcpl_rpc::RpcError::Remote { error, .. }) = err else {
        panic!("{err:?}")
    };
    assert!(error.message.len() < 250, "{} bytes", error.message.len());
    assert!(
        error.message.contains(&format!("`{}...`", "m".repeat(128))),
        "{}",
        error.message
    );
    assert_eq!(ask(&host, "ping", json!({})).await, json!({}));
    handshake(&host).await;
    // Nothing was opened before: the first open is the first instance.
    let open = ask(
        &host,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(1), "{open}");
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_never_initializes_is_closed_by_the_handshake_timeout() {
    let (host, mut events, serving) = serve_one(Duration::from_secs(10));
    assert_eq!(ask(&host, "ping", json!({})).await, json!({}));
    serving.await.unwrap();
    loop {
        match events.recv().await {
            Some(RpcEvent::Closed { .. }) | None => break,
            Some(_) => continue,
        }
    }
    // One that initializes in time stays.
    let (host, _events, serving) = serve_one(Duration::from_secs(10));
    handshake(&host).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(!serving.is_finished());
    assert_eq!(ask(&host, "ping", json!({})).await, json!({}));
}

#[tokio::test]
async fn bounded_errors_a_megabyte_tool_name_is_quoted_cut() {
    let (host, _events, _serving) = serve_one(Duration::from_secs(60));
    handshake(&host).await;
    let name = "n".repeat(1_000_000);
    let answer = host
        .request_value(
            "tools/call",
            Some(json!({"name": name, "arguments": {}})),
            RequestOptions::timeout(Duration::from_secs(30)),
        )
        .await;
    let text = match answer {
        Err(mcpl_rpc::RpcError::Remote { error, .. }) => error.message,
        Ok(result) => result.value.to_string(),
        Err(e) => panic!("{e}"),
    };
    assert!(text.len() < 700, "{} bytes quoted", text.len());
    assert!(text.contains(&format!("{}...", "n".repeat(128))), "{text}");
}
