//! Serving plain clients over Streamable HTTP (`mcpl surface --listen http://ADDR`), for agent
//! frameworks that do not spawn processes. Each HTTP session is its own agent, with its own
//! opens and news, in front of the same backends.
//!
//! Whoever reaches the endpoint acts with the backends' credentials, so off loopback a bearer
//! token is required ([`ListenConfig::check`]); every request must carry it. A request with
//! an `Origin` header is refused unless that origin is on loopback or names the address
//! served (a web page must not drive a local surface), and on loopback a request whose `Host`
//! is not a loopback name (DNS rebinding).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use mcpl_rpc::transport::http;
use mcpl_rpc::transport::origin::AllowedHosts;

use crate::error::Error;
use crate::surface::Surface;

/// Where and how the surface listens.
#[derive(Debug, Clone)]
pub struct ListenConfig {
    /// The address to bind.
    pub addr: SocketAddr,
    /// The bearer token every request must carry (`Authorization: Bearer TOKEN`).
    pub token: Option<String>,
}

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

impl ListenConfig {
    /// Parses `http://HOST:PORT` (a bare `HOST:PORT` too).
    pub fn parse(listen: &str, token: Option<String>) -> Result<ListenConfig, Error> {
        let bad = |why: &str| Error::BadSpec {
            spec: listen.to_owned(),
            why: why.to_owned(),
        };
        let rest = listen.strip_prefix("http://").unwrap_or(listen);
        if rest.contains("://") {
            return Err(bad("the surface listens on http://ADDR only"));
        }
        let rest = rest.trim_end_matches('/');
        let addr: SocketAddr = rest
            .parse()
            .map_err(|_| bad("expected http://IP:PORT, for example http://127.0.0.1:8765"))?;
        let cfg = ListenConfig { addr, token };
        cfg.check()?;
        Ok(cfg)
    }

    /// Off loopback a token is required: whoever reaches the surface acts with the backends'
    /// credentials.
    pub fn check(&self) -> Result<(), Error> {
        if !self.addr.ip().is_loopback() && self.token.as_deref().is_none_or(str::is_empty) {
            return Err(Error::BadSpec {
                spec: self.addr.to_string(),
                why: "listening off loopback needs --token: whoever reaches the surface acts with the backends' credentials".to_owned(),
            });
        }
        Ok(())
    }
}

/// Whether an `Origin` may use the endpoint: absent, on loopback, or the served host.
fn origin_ok(headers: &HeaderMap, served: &SocketAddr) -> bool {
    let Some(origin) = headers.get("origin") else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let host = origin
        .split_once("://")
        .map_or(origin, |(_, h)| h)
        .trim_end_matches('/');
    let name = host
        .rsplit_once(':')
        .map_or(host, |(h, _)| h)
        .trim_matches(['[', ']']);
    matches!(name, "localhost" | "127.0.0.1" | "::1") || host == served.to_string()
}

fn authorized(headers: &HeaderMap, token: Option<&str>) -> bool {
    let Some(token) = token else { return true };
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| same(t.as_bytes(), token.as_bytes()))
}

/// Compares two secrets in time that depends only on their lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Binds `config.addr` and serves HTTP sessions until the listener fails.
pub async fn serve(surface: Arc<Surface>, config: ListenConfig) -> Result<(), Error> {
    config.check()?;
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| Error::Transport(format!("cannot listen on {}: {e}", config.addr)))?;
    let served = listener.local_addr().unwrap_or(config.addr);
    let token = config.token.clone();
    let authorize: http::Authorize = Arc::new(move |headers| {
        if !origin_ok(headers, &served) {
            return Err(StatusCode::FORBIDDEN);
        }
        if !authorized(headers, token.as_deref()) {
            return Err(StatusCode::UNAUTHORIZED);
        }
        Ok(())
    });
    let http_config = http::HttpServerConfig {
        authorize: Some(authorize),
        hosts: AllowedHosts::default().bound_at(served),
        ..http::HttpServerConfig::default()
    };
    let (router, mut sessions) = http::router(PATH, http_config);
    let serving = tokio::spawn(async move {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| mcpl_rpc::transport::tcp::ready_tcp(tcp));
        axum::serve(listener, router).await
    });
    eprintln!("mcpl surface: serving MCP at http://{served}{PATH}");
    while let Some(session) = sessions.recv().await {
        let surface = surface.clone();
        tokio::spawn(async move {
            let _ = surface.serve(session.transport).await;
        });
    }
    serving.abort();
    Err(Error::Transport("the HTTP endpoint stopped".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_loopback_a_token_is_required() {
        let err = ListenConfig::parse("http://0.0.0.0:8765", None).unwrap_err();
        assert!(err.to_string().contains("needs --token"), "{err}");
        assert!(ListenConfig::parse("http://0.0.0.0:8765", Some("t".into())).is_ok());
        assert!(ListenConfig::parse("http://127.0.0.1:8765", None).is_ok());
        assert!(ListenConfig::parse("ws://127.0.0.1:8765", None).is_err());
    }

    #[test]
    fn a_foreign_origin_is_refused_and_loopback_or_the_served_host_allowed() {
        let served: SocketAddr = "10.0.0.5:8765".parse().unwrap();
        let with = |o: &str| {
            let mut h = HeaderMap::new();
            h.insert("origin", o.parse().unwrap());
            h
        };
        assert!(origin_ok(&HeaderMap::new(), &served));
        assert!(origin_ok(&with("http://localhost:3000"), &served));
        assert!(origin_ok(&with("http://[::1]:3000"), &served));
        assert!(origin_ok(&with("http://10.0.0.5:8765"), &served));
        assert!(!origin_ok(&with("https://evil.example"), &served));
    }

    #[test]
    fn the_token_must_match_exactly() {
        let mut h = HeaderMap::new();
        assert!(!authorized(&h, Some("s3cret")));
        h.insert("authorization", "Bearer s3cret".parse().unwrap());
        assert!(authorized(&h, Some("s3cret")));
        assert!(!authorized(&h, Some("other")));
        assert!(authorized(&HeaderMap::new(), None));
    }

    #[test]
    fn a_token_that_is_a_prefix_or_has_letters_swapped_is_refused() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert("authorization", v.parse().unwrap());
            h
        };
        assert!(!authorized(&with("Bearer s3cre"), Some("s3cret")));
        assert!(!authorized(&with("Bearer s3cretX"), Some("s3cret")));
        assert!(!authorized(&with("Bearer tset"), Some("test")));
        assert!(authorized(&with("Bearer test"), Some("test")));
    }
}
