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
