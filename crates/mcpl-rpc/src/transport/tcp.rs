//! TCP connections: how every one this crate and the server accept or open is set up.

/// Readies a TCP connection that carries JSON-RPC: Nagle's algorithm off, so a message (or
/// the last frame of a long one) leaves when it is written instead of waiting until the peer
/// has acknowledged what went before, which a peer delaying its acknowledgements can hold
/// back for tens of milliseconds. Every TCP connection this crate and the server accept or
/// open goes through it.
pub fn ready_tcp(stream: &tokio::net::TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY not set: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::ready_tcp;

    #[tokio::test]
    async fn a_readied_connection_writes_without_waiting_for_acknowledgements() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        let (client, (server, _)) = (client.unwrap(), accepted.unwrap());
        assert!(!server.nodelay().unwrap(), "Nagle is on by default");
        ready_tcp(&server);
        ready_tcp(&client);
        assert!(server.nodelay().unwrap() && client.nodelay().unwrap());
    }
}
