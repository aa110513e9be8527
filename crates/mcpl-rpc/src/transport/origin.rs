//! Which browser origins may reach a server (MCP's transport rules: validate `Origin` against
//! DNS rebinding).
//!
//! A request without an `Origin` header comes from a program, not a page, and passes. One with
//! an `Origin` passes when it is a loopback origin (`http://localhost:PORT`,
//! `http://127.0.0.1`, `https://[::1]:8443`, ...) or one the operator allowed; anything else is
//! refused with 403 by the servers in this crate.
//!
//! A server that serves its own pages (the inspector) checks more strictly with
//! [`BoundSite`]: the `Host` header must name the address it is bound at, and an `Origin`
//! must be that same site.

/// The origins a server accepts besides requests that carry none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedOrigins {
    loopback: bool,
    any: bool,
    listed: Vec<String>,
}

impl Default for AllowedOrigins {
    /// Loopback origins only.
    fn default() -> Self {
        AllowedOrigins {
            loopback: true,
            any: false,
            listed: Vec::new(),
        }
    }
}

impl AllowedOrigins {
    /// Loopback origins only (the default).
    pub fn loopback() -> Self {
        Self::default()
    }

    /// No browser origin at all (requests without `Origin` still pass); add some with
    /// [`allow`](Self::allow).
    pub fn none() -> Self {
        AllowedOrigins {
            loopback: false,
            any: false,
            listed: Vec::new(),
        }
    }

    /// Every origin: for a server that relies on credentials alone.
    pub fn any() -> Self {
        AllowedOrigins {
            any: true,
            ..Self::default()
        }
    }

    /// Also allows `origin` (`https://app.example:8443`, compared without a trailing slash and
    /// case-insensitively); `*` allows every origin.
    pub fn allow(mut self, origin: &str) -> Self {
        let origin = normalize(origin);
        if origin == "*" {
            self.any = true;
        } else if !self.listed.contains(&origin) {
            self.listed.push(origin);
        }
        self
    }

    /// Whether a request whose `Origin` header is `origin` (`None`: no header) may go on.
    pub fn permits(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        if self.any {
            return true;
        }
        let origin = normalize(origin);
        (self.loopback && is_loopback_origin(&origin)) || self.listed.contains(&origin)
    }
}

/// The site a server bound at one address is, for a server that serves its own pages: which
/// `Host` names reach it, and which `Origin` is its own.
///
/// A page on another name that resolves to this address (DNS rebinding) sends that name as
/// `Host`, so on loopback a tokenless page must refuse every name but its own. A server bound
/// at an unspecified address (`0.0.0.0`, `[::]`) is reached by names it cannot know and takes
/// any `Host`; it must then rely on credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundSite {
    /// `host:port` names; `None`: any name.
    hosts: Option<Vec<String>>,
}

impl BoundSite {
    /// The site of a server bound at `addr`: the address itself and, on loopback,
    /// `localhost`, `127.0.0.1` and `[::1]` with its port.
    pub fn bound_at(addr: std::net::SocketAddr) -> Self {
        if addr.ip().is_unspecified() {
            return BoundSite { hosts: None };
        }
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            for name in ["localhost", "127.0.0.1", "[::1]"] {
                let host = format!("{name}:{port}");
                if !hosts.contains(&host) {
                    hosts.push(host);
                }
            }
        }
        BoundSite { hosts: Some(hosts) }
    }

    /// Whether a request with these `Host` and `Origin` headers comes to this site from this
    /// site (or from a program: no `Origin`). A missing `Host` is refused.
    pub fn permits(&self, host: Option<&str>, origin: Option<&str>) -> bool {
        let Some(host) = host.map(str::trim) else {
            return false;
        };
        let known = match &self.hosts {
            Some(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
            None => !host.is_empty() && !host.contains(['/', '@', '?', '#', ' ']),
        };
        known
            && AllowedOrigins::none()
                .allow(&format!("http://{host}"))
                .permits(origin)
    }
}

fn normalize(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `http(s)://localhost`, `127.0.0.0/8` or `[::1]`, with any port.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((host, port))
                if port.is_empty() || port.strip_prefix(':').is_some_and(is_port) =>
            {
                return host == "::1";
            }
            _ => return false,
        }
    } else {
        match rest.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => rest,
        }
    };
    host == "localhost"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn is_port(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<u16>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_without_origin_pass() {
        assert!(AllowedOrigins::default().permits(None));
    }

    #[test]
    fn loopback_origins_pass_by_default() {
        let allowed = AllowedOrigins::default();
        for origin in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443/",
            "http://127.1.2.3:80",
            "http://[::1]:9000",
            "HTTP://LOCALHOST:1",
        ] {
            assert!(allowed.permits(Some(origin)), "{origin}");
        }
    }

    #[test]
    fn foreign_and_malformed_origins_are_refused() {
        let allowed = AllowedOrigins::default();
        for origin in [
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example",
            "http://localhost:99999",
            "http://localhost@evil.example",
            "http://[::2]:80",
            "null",
            "file://",
            "",
        ] {
            assert!(!allowed.permits(Some(origin)), "{origin}");
        }
    }

    #[test]
    fn none_admits_only_requests_without_origin_and_the_listed() {
        let none = AllowedOrigins::none();
        assert!(none.permits(None));
        assert!(!none.permits(Some("http://localhost:3000")));
        assert!(
            none.allow("http://a.example")
                .permits(Some("http://A.example/"))
        );
    }

    fn site(addr: &str) -> BoundSite {
        BoundSite::bound_at(addr.parse().unwrap())
    }

    #[test]
    fn a_bound_site_takes_its_own_names_only_even_on_loopback() {
        let s = site("127.0.0.1:9");
        for host in ["127.0.0.1:9", "localhost:9", "LOCALHOST:9", "[::1]:9"] {
            assert!(s.permits(Some(host), None), "{host}");
        }
        // DNS rebinding: the browser sends the attacker's name as Host.
        for host in ["evil.example:9", "localhost:10", "127.0.0.1", ""] {
            assert!(!s.permits(Some(host), None), "{host}");
        }
        assert!(!s.permits(None, None), "a request without Host");
        let v4 = site("10.0.0.1:80");
        assert!(v4.permits(Some("10.0.0.1:80"), None));
        assert!(!v4.permits(Some("localhost:80"), None), "not loopback");
    }

    #[test]
    fn a_bound_site_takes_its_own_origin_only() {
        let s = site("127.0.0.1:9");
        let host = Some("127.0.0.1:9");
        assert!(s.permits(host, Some("http://127.0.0.1:9")));
        for origin in [
            "http://evil.example",
            "http://localhost:9",
            "https://127.0.0.1:9",
            "http://127.0.0.1:10",
            "null",
        ] {
            assert!(!s.permits(host, Some(origin)), "{origin}");
        }
    }

    #[test]
    fn an_unspecified_address_takes_any_name_but_still_its_own_origin() {
        let s = site("0.0.0.0:8080");
        assert!(s.permits(Some("inspect.example:8080"), None));
        assert!(s.permits(
            Some("inspect.example:8080"),
            Some("http://inspect.example:8080")
        ));
        assert!(!s.permits(Some("inspect.example:8080"), Some("http://evil.example")));
        assert!(!s.permits(Some("a@b"), None));
        assert!(!s.permits(None, None));
    }

    #[test]
    fn listed_origins_and_the_wildcard_pass() {
        let allowed = AllowedOrigins::default().allow("https://App.example:8443/");
        assert!(allowed.permits(Some("https://app.example:8443")));
        assert!(!allowed.permits(Some("https://app.example")));
        assert!(
            AllowedOrigins::default()
                .allow("*")
                .permits(Some("https://x.example"))
        );
        assert!(AllowedOrigins::any().permits(Some("https://x.example")));
    }
}
