//! Which browser origins and which `Host` names may reach a server (MCP's transport rules:
//! validate `Origin`, and on loopback the `Host` too, against DNS rebinding).
//!
//! A request without an `Origin` header comes from a program, not a page, and passes. One with
//! an `Origin` passes when it is a loopback origin (`http://localhost:PORT`,
//! `http://127.0.0.1`, `https://[::1]:8443`, ...) or one the operator allowed; anything else is
//! refused with 403 by the servers in this crate.
//!
//! A page on a name the attacker controls can make that name resolve to `127.0.0.1` (DNS
//! rebinding); the browser then sends no foreign `Origin` for its own requests, but it does
//! send the attacker's name as `Host`. So a server bound at loopback takes only loopback names
//! in `Host` ([`AllowedHosts`]), besides the ones the operator allowed.
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

/// The `Host` names a server accepts (against DNS rebinding): by default the loopback names
/// `localhost`, `127.0.0.1` and `[::1]`, with any port or none, and the names the operator
/// allowed. [`bound_at`](Self::bound_at) adds the address the server is bound at, and off
/// loopback, where the server cannot know its names, takes every name unless the operator
/// listed some.
///
/// The port of a loopback name is not checked: a browser's `Host` always carries the port it
/// connected to, so a rebound page cannot send a loopback name at all, while a tunnel or relay
/// in front (`ssh -L 9000:localhost:8080`) legitimately sends its own port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts {
    any: bool,
    /// Loopback names that pass, on any port (lowercase, without port).
    loopback: Vec<String>,
    /// Names the operator allowed: `name` (any port, or none) or `name:port`.
    listed: Vec<String>,
}

impl Default for AllowedHosts {
    /// Loopback names only, on any port.
    fn default() -> Self {
        AllowedHosts {
            any: false,
            loopback: ["localhost", "127.0.0.1", "[::1]"]
                .map(str::to_owned)
                .to_vec(),
            listed: Vec::new(),
        }
    }
}

impl AllowedHosts {
    /// Loopback names only, on any port (the default).
    pub fn loopback() -> Self {
        Self::default()
    }

    /// Every name: for a server that relies on credentials alone.
    pub fn any() -> Self {
        AllowedHosts {
            any: true,
            ..Self::default()
        }
    }

    /// Also allows `host` (`mcp.example`: on any port; `mcp.example:8443`: on that port only;
    /// compared case-insensitively); `*` allows every name.
    pub fn allow(mut self, host: &str) -> Self {
        let host = host.trim().to_ascii_lowercase();
        if host == "*" {
            self.any = true;
        } else if !self.listed.contains(&host) {
            self.listed.push(host);
        }
        self
    }

    /// Whether `host` is something [`allow`](Self::allow) can match: `*`, `name`,
    /// `name:port`, `[v6]` or `[v6]:port`, without a scheme or a path.
    pub fn is_entry(host: &str) -> bool {
        let host = host.trim();
        host == "*" || split_host(host).is_some()
    }

    /// These rules for a server bound at `addr`. On loopback, `addr`'s own address passes too
    /// (`127.0.0.5`). Off loopback (an unspecified address too) the server is reached by names
    /// it cannot know: without listed names every name passes, with some those, the loopback
    /// names and `addr` itself.
    pub fn bound_at(mut self, addr: std::net::SocketAddr) -> Self {
        if !addr.ip().is_loopback() {
            if self.listed.is_empty() {
                self.any = true;
            } else if !addr.ip().is_unspecified() {
                self = self.allow(&addr.to_string());
            }
            return self;
        }
        let ip = match addr {
            std::net::SocketAddr::V4(v4) => v4.ip().to_string(),
            std::net::SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        };
        if !self.loopback.contains(&ip) {
            self.loopback.push(ip);
        }
        self
    }

    /// Whether a request whose `Host` header is `host` (`None`: no header) may go on. A
    /// missing or malformed `Host` passes only when every name does.
    pub fn permits(&self, host: Option<&str>) -> bool {
        if self.any {
            return true;
        }
        let Some(host) = host.map(|h| h.trim().to_ascii_lowercase()) else {
            return false;
        };
        let Some((name, _)) = split_host(&host) else {
            return false;
        };
        self.loopback.iter().any(|n| n == name)
            || self
                .listed
                .iter()
                .any(|entry| *entry == host || entry == name)
    }
}

/// Why a request with `Host` `host` (`None`: no header) was refused, for the 403 and the log.
pub fn host_refusal(host: Option<&str>) -> String {
    match host {
        Some(host) => format!(
            "host `{}` is not allowed: against DNS rebinding, a server on loopback takes only \
             loopback names and those its operator allowed (`mcpl arcade --allow-host`)",
            mcpl_protocol::clip::clip(host)
        ),
        None => "a request without a Host header is not allowed".to_owned(),
    }
}

/// `name` and its port, from a `Host` value (`name`, `name:port`, `[v6]`, `[v6]:port`);
/// `None` when it is not of that form.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    if host.is_empty() || host.contains(['/', '@', '?', '#', ' ', '\\']) {
        return None;
    }
    let (name, port) = if host.starts_with('[') {
        let close = host.find(']')?;
        let (name, rest) = host.split_at(close + 1);
        match rest {
            "" => (name, None),
            _ => (name, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return None;
    }
    match port {
        None => Some((name, None)),
        Some(port) if is_port(port) => Some((name, port.parse().ok())),
        Some(_) => None,
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
            None => split_host(host).is_some(),
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
        assert!(!s.permits(Some("inspect.example:port"), None));
        assert!(!s.permits(None, None));
    }

    fn hosts_at(addr: &str) -> AllowedHosts {
        AllowedHosts::default().bound_at(addr.parse().unwrap())
    }

    #[test]
    fn dns_rebinding_a_loopback_server_takes_loopback_hosts_only() {
        let hosts = hosts_at("127.0.0.1:8080");
        for host in [
            "localhost:8080",
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1:8080",
            "127.0.0.1",
            "[::1]:8080",
            "[::1]",
            " localhost:8080 ",
            // A tunnel or relay in front sends its own port.
            "localhost:9000",
        ] {
            assert!(hosts.permits(Some(host)), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example:8080",
            "127.0.0.1.nip.io:8080",
            "127.0.0.2:8080",
            "[::2]:8080",
            "localhost:",
            "localhost:99999",
            "localhost:8080@evil.example",
            "[::1",
            ":8080",
            "",
        ] {
            assert!(!hosts.permits(Some(host)), "{host}");
        }
        assert!(!hosts.permits(None), "a request without Host");
    }

    #[test]
    fn dns_rebinding_the_bound_loopback_address_itself_passes() {
        assert!(hosts_at("127.0.0.5:9").permits(Some("127.0.0.5:9")));
        assert!(!hosts_at("127.0.0.1:9").permits(Some("127.0.0.5:9")));
        assert!(hosts_at("[::1]:9").permits(Some("[::1]:9")));
    }

    #[test]
    fn dns_rebinding_before_binding_loopback_names_pass() {
        let hosts = AllowedHosts::default();
        assert!(hosts.permits(Some("localhost:1")));
        assert!(hosts.permits(Some("[::1]:65535")));
        assert!(!hosts.permits(Some("evil.example:1")));
    }

    #[test]
    fn dns_rebinding_allowed_hosts_pass_by_name_or_by_name_and_port() {
        let hosts = AllowedHosts::default()
            .allow("MCP.example")
            .allow("tunnel.example:443")
            .bound_at("127.0.0.1:8080".parse().unwrap());
        assert!(hosts.permits(Some("mcp.example")));
        assert!(hosts.permits(Some("mcp.example:8443")));
        assert!(hosts.permits(Some("tunnel.example:443")));
        assert!(!hosts.permits(Some("tunnel.example:444")));
        assert!(!hosts.permits(Some("tunnel.example")));
        assert!(!hosts.permits(Some("evil.example")));
        assert!(AllowedHosts::is_entry("mcp.example:8443"));
        assert!(AllowedHosts::is_entry("*"));
        assert!(!AllowedHosts::is_entry("https://mcp.example"));
        assert!(!AllowedHosts::is_entry("mcp.example:port"));
        let every = AllowedHosts::default().allow("*");
        assert!(every.permits(Some("evil.example")));
        assert!(every.permits(None));
        assert!(AllowedHosts::any().permits(Some("anything")));
    }

    #[test]
    fn dns_rebinding_off_loopback_every_host_passes_unless_some_are_listed() {
        for addr in ["10.0.0.1:80", "0.0.0.0:80", "[::]:80"] {
            let hosts = hosts_at(addr);
            assert!(hosts.permits(Some("mcp.example")), "{addr}");
            assert!(hosts.permits(None), "{addr}");
        }
        let listed = AllowedHosts::default()
            .allow("mcp.example")
            .bound_at("10.0.0.1:80".parse().unwrap());
        assert!(listed.permits(Some("mcp.example")));
        assert!(listed.permits(Some("10.0.0.1:80")));
        assert!(listed.permits(Some("localhost:80")));
        assert!(!listed.permits(Some("evil.example")));
        let unspecified = AllowedHosts::default()
            .allow("mcp.example")
            .bound_at("0.0.0.0:80".parse().unwrap());
        assert!(!unspecified.permits(Some("evil.example")));
        assert!(!unspecified.permits(Some("0.0.0.0:80")));
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
