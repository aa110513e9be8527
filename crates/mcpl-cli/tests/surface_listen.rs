//! `mcpl surface --listen http://ADDR`: plain clients over Streamable HTTP, each session its
//! own agent, every request checked against `--token` and, on loopback, its `Host`.

use std::process::Stdio;
use std::time::Duration;

use mcpl_rpc::transport::http;
use mcpl_rpc::{Limits, Peer, PeerConfig, RequestOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// A plain MCP client of the surface over Streamable HTTP.
struct Session(Peer);

impl Session {
    async fn start(url: &str, token: Option<&str>) -> Result<Session, String> {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        let transport =
            http::connect(url, &headers, Limits::default()).map_err(|e| e.to_string())?;
        let (peer, _events) = Peer::start(transport, PeerConfig::default());
        let s = Session(peer);
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await?;
        let _ = s.0.notify_value("notifications/initialized", None);
        Ok(s)
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        self.0
            .request_value(
                method,
                Some(params),
                RequestOptions::timeout(Duration::from_secs(30)),
            )
            .await
            .map(|a| a.value)
            .map_err(|e| e.to_string())
    }

    async fn call(&self, name: &str, args: Value) -> String {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await
            .expect("an answer");
        assert_ne!(r["isError"], json!(true), "{r}");
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s8_6_listen_serves_http_sessions_as_separate_agents_behind_a_token() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args([
            "surface",
            "--listen",
            "http://127.0.0.1:0",
            "--token",
            "t0ken",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcpl runs");
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the surface says where it listens")
            .expect("stderr")
            .expect("a line");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_owned();
        }
    };

    // Without the token nothing is served.
    assert!(Session::start(&url, None).await.is_err());
    assert!(Session::start(&url, Some("wrong")).await.is_err());
    // DNS rebinding: a request naming another host gets 403, even with the token.
    let rebound = reqwest::Client::new()
        .post(&url)
        .header("host", "evil.example")
        .header("authorization", "Bearer t0ken")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await
        .expect("an answer");
    assert_eq!(rebound.status().as_u16(), 403);
    let body = rebound.text().await.unwrap_or_default();
    assert!(
        body.contains("host `evil.example` is not allowed"),
        "{body}"
    );

    let a = Session::start(&url, Some("t0ken"))
        .await
        .expect("session a");
    let b = Session::start(&url, Some("t0ken"))
        .await
        .expect("session b");
    let tools = a.request("tools/list", json!({})).await.expect("list");
    assert!(
        tools["tools"].as_array().is_some_and(|t| t.len() == 5),
        "{tools}"
    );
    let opened = a
        .call(
            "toolsets_open",
            json!({"toolset": "go", "instance": "a", "options": {"size": 9}}),
        )
        .await;
    assert!(opened.contains("- `go`/`a` is open"), "{opened}");
    // Session b is its own agent: the open is news to it, told once; a does not hear it again.
    let mut told = String::new();
    for _ in 0..100 {
        told.push_str(&b.call("toolsets_look", json!({"toolset": "lobby"})).await);
        if told.contains("`go`/`a` is open") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(told.matches("`go`/`a` is open").count(), 1, "{told}");
    let again = a.call("toolsets_look", json!({"toolset": "lobby"})).await;
    assert!(!again.contains("`go`/`a` is open"), "{again}");
    let _ = child.kill().await;
}

#[test]
fn listening_off_loopback_without_a_token_is_refused() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args(["surface", "--listen", "http://0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .expect("mcpl runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs --token"), "{err}");
}
