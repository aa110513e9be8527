//! Which browser origins may reach a server (MCP's transport rules: validate `Origin` against
//! DNS rebinding).
//!
//! A request without an `Origin` header comes from a program, not a page, and passes. One with
//! an `Origin` passes when it is a loopback origin (`http://localhost:PORT`,
//! `http://127.0.0.1`, `https://[::1]:8443`, ...) or one the operator allowed; anything else is
//! refused with 403 by the servers in this crate.

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
