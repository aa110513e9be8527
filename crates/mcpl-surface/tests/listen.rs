//! `--listen` (docs/SURFACE.md): the surface served over Streamable HTTP answers a client that
//! sends no `Origin` (an agent framework) and refuses a foreign web page's origin.

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

#[tokio::test]
async fn listening_answers_a_client_without_origin_and_refuses_a_foreign_origin() {
    let cutter = Cutter::with(&["cells"]);
    let (surface, _stdio_client) = surface(&cutter, &["cells"]).await;
    // A free loopback port: bound by the test, then released for the surface.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    let config = ListenConfig::parse(&format!("http://127.0.0.1:{port}"), None).unwrap();
    tokio::spawn(serve(surface, config));
    let mut listening = false;
    for _ in 0..500 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            listening = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(listening, "the surface never listened on {port}");
    let url = format!("http://127.0.0.1:{port}/mcp");

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
    let cutter = Cutter::with(&["cells"]);
    let (surface, _stdio_client) = surface(&cutter, &["cells"]).await;
    let port = std::net::TcpListener::bind("127.0.0.5:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    let config = ListenConfig::parse(&format!("http://127.0.0.5:{port}"), None).unwrap();
    tokio::spawn(serve(surface, config));
    let mut listening = false;
    for _ in 0..500 {
        if tokio::net::TcpStream::connect(("127.0.0.5", port))
            .await
            .is_ok()
        {
            listening = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(listening, "the surface never listened on 127.0.0.5:{port}");
    let url = format!("http://127.0.0.5:{port}/mcp");
    let answer = initialize(&url, &ClientOptions::new()).await.unwrap();
    assert_eq!(answer["protocolVersion"], "2025-11-25");
}
