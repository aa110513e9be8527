//! Who may read the page: the `Host` and `Origin` checks (against DNS rebinding and other
//! sites' pages, on loopback too; `mcpl-rpc`'s [`BoundSite`] decides them) and the token
//! required off loopback.

use axum::http::{HeaderMap, header};
use mcpl_rpc::transport::origin::BoundSite;
use std::net::SocketAddr;

/// The cookie the login form sets; the token is never carried in a URL.
pub const COOKIE: &str = "mcpl_inspect";

/// The header a script may send the token in instead of the cookie.
pub const TOKEN_HEADER: &str = "x-mcpl-inspect-token";

/// Why an inspector cannot be set up.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AccessError {
    /// A non-loopback address without a token.
    #[error("`--inspect {0}` is not a loopback address: set `--inspect-token`")]
    TokenRequired(SocketAddr),
    /// A token with characters that do not survive a cookie or a form.
    #[error("`--inspect-token`: use 16 or more of A-Z, a-z, 0-9, `-`, `_`, `.`")]
    BadToken,
}

/// The request checks of one inspector, bound to its address.
#[derive(Debug, Clone)]
pub struct Access {
    site: BoundSite,
    token: Option<String>,
}

/// What a request may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Allow,
    /// `Host` or `Origin` names another site: refuse (403).
    Forbidden,
    /// A token is required and missing or wrong: offer the login form.
    Login,
}

impl Access {
    /// The checks for a page bound at `addr`. Off loopback a token is required.
    pub fn new(addr: SocketAddr, token: Option<String>) -> Result<Self, AccessError> {
        if let Some(t) = &token
            && (t.len() < 16
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)))
        {
            return Err(AccessError::BadToken);
        }
        let loopback = addr.ip().is_loopback();
        if !loopback && token.is_none() {
            return Err(AccessError::TokenRequired(addr));
        }
        Ok(Access {
            site: BoundSite::bound_at(addr),
            token,
        })
    }

    /// Checks `Host` and `Origin` only (for the login form itself).
    pub fn check_site(&self, headers: &HeaderMap) -> Verdict {
        let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
        if self.site.permits(text(header::HOST), text(header::ORIGIN)) {
            Verdict::Allow
        } else {
            Verdict::Forbidden
        }
    }

    /// Checks `Host`, `Origin` and, when one is set, the token (cookie or header).
    pub fn check(&self, headers: &HeaderMap) -> Verdict {
        match self.check_site(headers) {
            Verdict::Allow => {}
            other => return other,
        }
        match &self.token {
            None => Verdict::Allow,
            Some(token) if presented(headers).is_some_and(|t| same(t, token)) => Verdict::Allow,
            Some(_) => Verdict::Login,
        }
    }

    /// Whether `token` is this inspector's token.
    pub fn token_matches(&self, token: &str) -> bool {
        self.token.as_deref().is_some_and(|t| same(token, t))
    }

    /// Whether a token is required.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }
}

/// The token a request presents: the header, else the cookie.
fn presented(headers: &HeaderMap) -> Option<&str> {
    if let Some(t) = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok()) {
        return Some(t);
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then_some(value)
        })
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    const TOKEN: &str = "s3cret-token-0123456789";

    #[test]
    fn loopback_needs_no_token_but_other_addresses_do() {
        assert!(Access::new("127.0.0.1:9".parse().unwrap(), None).is_ok());
        assert_eq!(
            Access::new("0.0.0.0:9".parse().unwrap(), None).unwrap_err(),
            AccessError::TokenRequired("0.0.0.0:9".parse().unwrap())
        );
        assert!(Access::new("0.0.0.0:9".parse().unwrap(), Some(TOKEN.into())).is_ok());
        for bad in ["short", "has space in it....", "semi;colon;0123456789"] {
            assert_eq!(
                Access::new("127.0.0.1:9".parse().unwrap(), Some(bad.into())).unwrap_err(),
                AccessError::BadToken
            );
        }
    }

    #[test]
    fn host_and_origin_must_name_the_inspector_even_on_loopback() {
        let a = Access::new("127.0.0.1:9".parse().unwrap(), None).unwrap();
        assert_eq!(
            a.check(&headers(&[("host", "127.0.0.1:9")])),
            Verdict::Allow
        );
        assert_eq!(
            a.check(&headers(&[("host", "localhost:9")])),
            Verdict::Allow
        );
        // DNS rebinding: the browser sends the attacker's name as Host.
        assert_eq!(
            a.check(&headers(&[("host", "evil.example:9")])),
            Verdict::Forbidden
        );
        assert_eq!(a.check(&headers(&[])), Verdict::Forbidden);
        assert_eq!(
            a.check(&headers(&[
                ("host", "127.0.0.1:9"),
                ("origin", "http://evil.example")
            ])),
            Verdict::Forbidden
        );
        assert_eq!(
            a.check(&headers(&[
                ("host", "127.0.0.1:9"),
                ("origin", "http://127.0.0.1:9")
            ])),
            Verdict::Allow
        );
    }

    #[test]
    fn a_token_is_read_from_the_cookie_or_the_header_only() {
        let a = Access::new("10.0.0.1:9".parse().unwrap(), Some(TOKEN.into())).unwrap();
        let host = ("host", "10.0.0.1:9");
        assert_eq!(a.check(&headers(&[host])), Verdict::Login);
        assert_eq!(
            a.check(&headers(&[host, ("cookie", "a=b; mcpl_inspect=wrong")])),
            Verdict::Login
        );
        let cookie = format!("a=b; {COOKIE}={TOKEN}");
        assert_eq!(
            a.check(&headers(&[host, ("cookie", &cookie)])),
            Verdict::Allow
        );
        assert_eq!(
            a.check(&headers(&[host, (TOKEN_HEADER, TOKEN)])),
            Verdict::Allow
        );
    }
}
