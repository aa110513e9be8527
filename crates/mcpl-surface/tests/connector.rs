//! The standard connector (docs/SURFACE.md): a Streamable HTTP server that
//! is down is named unreachable, with the cause, when the surface connects, not later as a
//! server error (Streamable HTTP itself connects lazily).

use mcpl_host::ServerName;
use mcpl_surface::{ConnectError, Connector, ServerSpec, StandardConnector, Target};

#[tokio::test]
async fn a_streamable_http_server_that_is_down_is_unreachable_at_connect() {
    // A port nothing listens on: bound by this test, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let spec = ServerSpec::new(
        ServerName::parse("down").expect("a name"),
        Target::Http(url.clone()),
    );
    let Err(err) = StandardConnector.connect(&spec).await else {
        panic!("connected to a port nothing listens on")
    };
    let ConnectError::Unreachable { url: named, why } = &err else {
        panic!("not named unreachable: {err:?}")
    };
    assert_eq!(named, &url);
    assert!(!why.is_empty(), "no cause given: {err}");
    assert_eq!(err.to_string(), format!("cannot connect to {url}: {why}"));
}

fn spec(target: Target) -> ServerSpec {
    ServerSpec::new(ServerName::parse("s").expect("a name"), target)
}

#[tokio::test]
async fn a_missing_program_path_is_named_with_the_os_reason_without_its_error_number() {
    let spec = spec(Target::Exec {
        program: "/nonexistent/mcpl-server".into(),
        args: vec![],
    });
    let Err(err) = StandardConnector.connect(&spec).await else {
        panic!("started a program that does not exist")
    };
    assert_eq!(
        err.to_string(),
        "cannot start \"/nonexistent/mcpl-server\": No such file or directory"
    );
}

#[tokio::test]
async fn a_plain_command_line_starts_its_program_directly_so_a_missing_one_is_named() {
    let spec = spec(Target::Command("no-such-mcpl-program --flag x".into()));
    let Err(err) = StandardConnector.connect(&spec).await else {
        panic!("started a program that is on no PATH directory")
    };
    assert_eq!(
        err.to_string(),
        "cannot start \"no-such-mcpl-program\": not found on PATH"
    );
    // A program that is there starts (as a child, talking over its stdio).
    let spec = self::spec(Target::Command("cat".into()));
    assert!(StandardConnector.connect(&spec).await.is_ok());
}

#[tokio::test]
async fn a_command_is_found_on_the_path_its_entry_sets() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("mcpl-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("mcpl-test-echo");
    std::fs::write(&program, "#!/bin/sh\nexec cat\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut spec = spec(Target::Command("mcpl-test-echo".into()));
    spec.env = vec![
        ("OTHER".to_owned(), "/nonexistent".to_owned()),
        ("PATH".to_owned(), dir.display().to_string()),
    ];
    let started = StandardConnector.connect(&spec).await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(err) = started {
        panic!("the entry's own PATH was not searched: {err}");
    }
}

#[tokio::test]
async fn a_streamable_http_url_with_an_ipv6_host_is_reached_at_that_address() {
    let listener = std::net::TcpListener::bind("[::1]:0").expect("the IPv6 loopback");
    let port = listener.local_addr().expect("its address").port();
    let spec = spec(Target::Http(format!("http://[::1]:{port}/mcp")));
    if let Err(err) = StandardConnector.connect(&spec).await {
        panic!("a listening IPv6 address was not reached: {err}")
    }
}

#[tokio::test]
async fn a_url_targets_headers_are_sent_with_its_requests() {
    use mcpl_rpc::transport::http::{HttpServerConfig, router};
    let (app, mut sessions) = router("/mcp", HttpServerConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("its address").port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut spec = spec(Target::Http(format!("http://127.0.0.1:{port}/mcp")));
    spec.headers = vec![("Authorization".into(), "Bearer s3cret".into())];
    let transport = StandardConnector.connect(&spec).await.expect("connects");
    let (peer, _events) = mcpl_rpc::Peer::start(transport, mcpl_rpc::PeerConfig::default());
    let asking = peer.start_request(
        "initialize",
        Some(
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}),
        ),
        mcpl_rpc::RequestOptions::default(),
    );
    assert!(asking.is_ok());
    let session = sessions.recv().await.expect("a session");
    assert_eq!(session.headers["authorization"], "Bearer s3cret");
}

#[tokio::test]
async fn a_url_without_a_port_is_reached_on_the_schemes_port() {
    // Port 80 of the IPv6 loopback, where nothing listens here: refused, not a bad address.
    let spec = spec(Target::Http("http://[::1]/mcp".into()));
    let Err(err) = StandardConnector.connect(&spec).await else {
        panic!("something listens on [::1]:80")
    };
    assert_eq!(
        err.to_string(),
        "cannot connect to http://[::1]/mcp: Connection refused"
    );
}
