//! The surface's plain-MCP front: arbitrary lines from a plain MCP client (before and after
//! `initialize`) against a surface with no servers. It never panics and answers every line
//! it can read an id from, or drops it; the connection survives every line, and a ping after
//! them is answered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpl_rpc::{Peer, PeerConfig, RequestOptions, Transport};
use mcpl_surface::{StandardConnector, Surface, SurfaceConfig};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(async {
        let surface = Arc::new(
            Surface::start(SurfaceConfig::new(Vec::new()), Arc::new(StandardConnector))
                .expect("a surface with no servers starts"),
        );
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let serving = {
            let surface = surface.clone();
            tokio::spawn(async move { surface.serve(Transport::stdio(sr, sw)).await })
        };
        let (cr, mut cw) = tokio::io::split(client_io);
        // The fuzzer's bytes go on the wire as they are, then a well-formed ping.
        let _ = cw.write_all(data).await;
        let _ = cw.write_all(b"\n").await;
        let (peer, _events) = Peer::start(Transport::stdio(cr, cw), PeerConfig::default());
        let pong = peer
            .request_value("ping", None, RequestOptions::timeout(Duration::from_secs(5)))
            .await;
        // Any answer shows the surface alive: the fuzzer's own requests may still hold the
        // ping's id, and then the answer is an "id already in use" error.
        assert!(
            matches!(pong, Ok(_) | Err(mcpl_rpc::RpcError::Remote { .. })),
            "the surface stopped answering: {pong:?}"
        );
        peer.close().await;
        let _ = tokio::time::timeout(Duration::from_secs(5), serving).await;
    });
});
