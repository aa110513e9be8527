//! Serving the network: WebSocket and Streamable HTTP listeners with the defences a public
//! endpoint needs, set by [`ListenOptions`].
//!
//! - **Identity.** A connection acts for the principal its `Authorization: Bearer TOKEN`
//!   names under the operator's [`Identity`] (401 otherwise); an HTTP session is bound to that
//!   principal, and a request naming it with other credentials gets 404 (logged).
//! - **Origin.** A request or upgrade whose `Origin` is not allowed gets 403; requests without
//!   one (programs, not pages) pass.
//! - **Host.** On loopback, a request or upgrade whose `Host` is not a loopback name (nor one
//!   the operator allowed) gets 403 (against DNS rebinding).
//! - **Limits.** Connections (WebSocket connections or HTTP sessions) per principal and in
//!   all; a handshake timeout for connections that never finish TLS, the upgrade or
//!   `initialize`; HTTP sessions end when idle.
//! - **TLS.** With [`ListenOptions::tls`], `wss://` and `https://` on rustls.

use crate::driver::{App, Runtime, bearer};
use crate::error::Error;
use crate::principal::{ConnectionId, Identity, Principal};
use mcpl_rpc::Limits;
use mcpl_rpc::transport::http;
use mcpl_rpc::transport::ws::{self, Handshake, Rejection};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_tungstenite::tungstenite::http::StatusCode;

pub use crate::listen_options::{DEFAULT_HANDSHAKE_TIMEOUT, ListenOptions};

/// Counts open connections per principal and in all.
#[derive(Debug, Default)]
struct Gate {
    open: Mutex<(usize, HashMap<String, usize>)>,
}

/// One admitted connection; leaving the gate when dropped.
#[derive(Debug)]
struct Ticket {
    gate: Arc<Gate>,
    principal: String,
}

impl Gate {
    fn enter(
        self: &Arc<Self>,
        principal: &Principal,
        options: &ListenOptions,
    ) -> Result<Ticket, String> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.0 >= options.max_connections {
            return Err(format!(
                "too many connections: the server's limit is {}",
                options.max_connections
            ));
        }
        let key = principal.id().to_owned();
        let mine = open.1.get(&key).copied().unwrap_or(0);
        if mine >= options.max_connections_per_principal {
            return Err(format!(
                "too many connections for principal `{key}`: the limit is {} per principal",
                options.max_connections_per_principal
            ));
        }
        open.0 += 1;
        *open.1.entry(key.clone()).or_default() += 1;
        Ok(Ticket {
            gate: self.clone(),
            principal: key,
        })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.gate.open.lock().unwrap_or_else(|p| p.into_inner());
        open.0 = open.0.saturating_sub(1);
        if let Some(n) = open.1.get_mut(&self.principal) {
            *n -= 1;
            if *n == 0 {
                open.1.remove(&self.principal);
            }
        }
    }
}

impl<A: App> Runtime<A> {
    /// Accepts WebSocket connections on `listener` until it fails, with the defences of
    /// `options` (see the [module](self)): each connection is served for the principal
    /// `identity` derives from its bearer token (401 without a known one), a foreign `Origin`
    /// or (on loopback) `Host` gets 403, a principal or the server over its connection limit gets 503, and a
    /// connection that does not finish TLS, the upgrade and `initialize` within the handshake
    /// timeout is closed.
    pub async fn serve_ws_with(
        &self,
        listener: tokio::net::TcpListener,
        identity: Identity,
        options: ListenOptions,
    ) -> Result<(), Error> {
        let identity = Arc::new(identity);
        let hosts = bound_hosts(&listener, &options)?;
        let options = Arc::new(options);
        let gate = Arc::new(Gate::default());
        loop {
            let (stream, addr) = listener
                .accept()
                .await
                .map_err(|e| Error::Transport(format!("accept: {e}")))?;
            mcpl_rpc::transport::tcp::ready_tcp(&stream);
            let runtime = self.clone();
            let (identity, options, gate) = (identity.clone(), options.clone(), gate.clone());
            let hosts = hosts.clone();
            tokio::spawn(async move {
                let connection = runtime.next_connection();
                let check = |hs: &Handshake| {
                    if !hs.host_permitted(&hosts) {
                        return Err(Rejection::forbidden_host(hs));
                    }
                    if !hs.origin_permitted(&options.origins) {
                        return Err(Rejection::forbidden_origin(hs));
                    }
                    let token = bearer(hs.headers.get("authorization"));
                    let principal =
                        identity
                            .resolve(connection, token)
                            .ok_or_else(|| Rejection {
                                status: StatusCode::UNAUTHORIZED,
                                message: "unknown or missing bearer token".to_owned(),
                            })?;
                    let ticket = gate.enter(&principal, &options).map_err(|why| {
                        tracing::warn!(%connection, "refused a websocket: {why}");
                        Rejection {
                            status: StatusCode::SERVICE_UNAVAILABLE,
                            message: why,
                        }
                    })?;
                    Ok((principal, ticket))
                };
                let handshake = async {
                    match &options.tls {
                        Some(tls) => {
                            let stream = tls.accept(stream, options.handshake_timeout).await?;
                            ws::accept_with(stream, Limits::default(), check).await
                        }
                        None => ws::accept_with(stream, Limits::default(), check).await,
                    }
                };
                // Boxed, so its buffers are freed once it is done instead of sizing the
                // connection's task for as long as the connection lives.
                let accepted = match tokio::time::timeout(
                    options.handshake_timeout,
                    Box::pin(handshake),
                )
                .await
                {
                    Ok(accepted) => accepted,
                    Err(_) => {
                        tracing::debug!(%addr, "closed a connection: no websocket handshake within {:?}", options.handshake_timeout);
                        return;
                    }
                };
                match accepted {
                    Ok((transport, (principal, _ticket))) => {
                        let served = runtime
                            .serve_within(
                                transport,
                                principal,
                                connection,
                                options.handshake_timeout,
                            )
                            .await;
                        if let Err(e) = served {
                            tracing::debug!(error = %e, %connection, "connection ended");
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "websocket handshake refused"),
                }
            });
        }
    }

    /// Serves Streamable HTTP at `path` on `listener` until it fails, with the defences of
    /// `options` (see the [module](self)): every request needs a bearer token `identity`
    /// knows under [`Identity::Tokens`] (401 otherwise); each session acts for the principal
    /// of its `initialize` POST and answers no other principal (404); a foreign `Origin` or
    /// (on loopback) `Host` gets 403; sessions are capped per principal and in all and end when idle.
    pub async fn serve_http_with(
        &self,
        listener: tokio::net::TcpListener,
        path: &str,
        identity: Identity,
        options: ListenOptions,
    ) -> Result<(), Error> {
        let identity = Arc::new(identity);
        let check = identity.clone();
        let authorize: http::Authorize = Arc::new(move |headers| {
            // Only token maps refuse; the other identities accept every connection.
            match check.resolve(ConnectionId(0), bearer(headers.get("authorization"))) {
                Some(_) => Ok(()),
                None => Err(StatusCode::UNAUTHORIZED),
            }
        });
        let owners = identity.clone();
        let owner: http::Owner = Arc::new(move |headers| {
            let token = bearer(headers.get("authorization"));
            match &*owners {
                // The principal, whichever of its tokens a request carries.
                Identity::Tokens(_) | Identity::Process(_) => owners
                    .resolve(ConnectionId(0), token)
                    .map(|p| format!("principal:{}", p.id()))
                    .unwrap_or_default(),
                // Each session is its own principal: bound to the credentials that opened it.
                Identity::PerConnection => headers
                    .get("authorization")
                    .map(|v| format!("credentials:{}", String::from_utf8_lossy(v.as_bytes())))
                    .unwrap_or_default(),
            }
        });
        let config = http::HttpServerConfig {
            authorize: Some(authorize),
            owner: Some(owner),
            origins: options.origins.clone(),
            hosts: bound_hosts(&listener, &options)?,
            max_sessions: options.max_connections,
            max_sessions_per_owner: options.max_connections_per_principal,
            idle_timeout: options.idle_timeout,
            ..http::HttpServerConfig::default()
        };
        let (router, mut sessions) = http::router(path, config);
        let serving = match &options.tls {
            Some(tls) => {
                let listener = tls.listener(listener, options.handshake_timeout);
                tokio::spawn(http::serve(listener, router))
            }
            None => tokio::spawn(http::serve_tcp(listener, router)),
        };
        while let Some(session) = sessions.recv().await {
            let connection = self.next_connection();
            let token = bearer(session.headers.get("authorization"));
            let Some(principal) = identity.resolve(connection, token) else {
                continue; // authorize refused it already; a race with a changed map
            };
            let runtime = self.clone();
            let timeout = options.handshake_timeout;
            tokio::spawn(async move {
                if let Err(e) = runtime
                    .serve_within(session.transport, principal, connection, timeout)
                    .await
                {
                    tracing::debug!(error = %e, %connection, "session ended");
                }
            });
        }
        serving.abort();
        Err(Error::Transport("the HTTP endpoint stopped".into()))
    }
}

/// The `Host` names `options` allow, for the address `listener` is bound at.
fn bound_hosts(
    listener: &tokio::net::TcpListener,
    options: &ListenOptions,
) -> Result<mcpl_rpc::transport::origin::AllowedHosts, Error> {
    let addr = listener
        .local_addr()
        .map_err(|e| Error::Transport(format!("no local address: {e}")))?;
    Ok(options.hosts.clone().bound_at(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_counts_per_principal_and_in_all_and_frees_on_drop() {
        let gate = Arc::new(Gate::default());
        let options = ListenOptions {
            max_connections: 3,
            max_connections_per_principal: 2,
            ..ListenOptions::default()
        };
        let ada = Principal::authenticated("ada");
        let bob = Principal::authenticated("bob");
        let a1 = gate.enter(&ada, &options).unwrap();
        let _a2 = gate.enter(&ada, &options).unwrap();
        let err = gate.enter(&ada, &options).unwrap_err();
        assert!(err.contains("2 per principal"), "{err}");
        let _b1 = gate.enter(&bob, &options).unwrap();
        let err = gate.enter(&bob, &options).unwrap_err();
        assert!(err.contains("limit is 3"), "{err}");
        drop(a1);
        gate.enter(&bob, &options).unwrap();
    }
}
