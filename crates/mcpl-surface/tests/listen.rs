//! `--listen` (docs/SURFACE.md): the surface served over Streamable HTTP answers a client that
//! sends no `Origin` (an agent framework), refuses a foreign web page's origin, and with a
//! token refuses a client that does not bear it.

mod common;

use std::time::Duration;

use common::{Cutter, surface};
use mcpl_rpc::{ClientOptions, Peer, PeerConfig, RequestOptions, RpcError};
use mcpl_surface::listen::{ListenConfig, serve};
use serde_json::json;

/// Sends `initialize` to `url` with `options`; the answer or the error.
async fn initialize(url: &str, options: &ClientOptions) -> Result<serde_json::Value, RpcError> {
    let transport = mcpl_rpc::transport::http::connect_with(url, options)?;
    let (peer, _events) = Peer::start(transport, PeerConfig::default());
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}});
    let answer = peer
        .request_value(
            "initialize",
            Some(params),
            RequestOptions::timeout(Duration::from_secs(20)),
        )
        .await;
    peer.close().await;
    answer.map(|a| a.value)
}

/// Serves a surface over `cells` at `http://{ip}:PORT` (a free port), with `token` if given,
/// and returns its endpoint once it listens.
async fn listening(ip: &str, token: Option<&str>) -> String {
    let cutter = Cutter::with(&["cells"]);
    let (surface, _stdio_client) = surface(&cutter, &["cells"]).await;
    // A free port: bound by the test, then released for the surface.
    let port = std::net::TcpListener::bind((ip, 0))
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    let config =
        ListenConfig::parse(&format!("http://{ip}:{port}"), token.map(str::to_owned)).unwrap();
    tokio::spawn(serve(surface, config));
    for _ in 0..500 {
        if tokio::net::TcpStream::connect((ip, port)).await.is_ok() {
            return format!("http://{ip}:{port}/mcp");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the surface never listened on {ip}:{port}");
}

#[tokio::test]
async fn listening_answers_a_client_without_origin_and_refuses_a_foreign_origin() {
    let url = listening("127.0.0.1", None).await;
    let answer = initialize(&url, &ClientOptions::new()).await.unwrap();
    assert_eq!(answer["protocolVersion"], "2025-11-25");
    let answer = initialize(
        &url,
        &ClientOptions::new().header("origin", "http://localhost:3000"),
    )
    .await
    .unwrap();
    assert_eq!(answer["protocolVersion"], "2025-11-25");
    let refused = initialize(
        &url,
        &ClientOptions::new().header("origin", "https://evil.example"),
    )
    .await;
    assert!(refused.is_err(), "a foreign origin was served: {refused:?}");
}

#[tokio::test]
async fn listening_on_another_loopback_address_serves_requests_addressed_to_it() {
    // DNS rebinding: only loopback names pass by default; the address the surface is bound at
    // passes too, so a client that reaches 127.0.0.5 by its address is served.
    let url = listening("127.0.0.5", None).await;
    let answer = initialize(&url, &ClientOptions::new()).await.unwrap();
    assert_eq!(answer["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn listening_with_a_token_serves_only_a_client_bearing_it() {
    let url = listening("127.0.0.1", Some("s3cret")).await;
    for refused in [
        ClientOptions::new(),
        ClientOptions::new().header("authorization", "Bearer s3cre"),
        ClientOptions::new().header("authorization", "Bearer s3cret2"),
    ] {
        let answer = initialize(&url, &refused).await;
        assert!(answer.is_err(), "served without the token: {answer:?}");
    }
    let answer = initialize(
        &url,
        &ClientOptions::new().header("authorization", "Bearer s3cret"),
    )
    .await
    .unwrap();
    assert_eq!(answer["protocolVersion"], "2025-11-25");
}
