//! Flags for reaching a server over the network: `--token`, `--header NAME=VALUE` and
//! `--ca FILE` (`mcpl inspect`; `--token`/`--header` also for `mcpl conformance server`).

use anyhow::{Context, bail};
use mcpl_rpc::ClientOptions;
use std::path::PathBuf;

/// How to reach a ws(s):// or http(s):// server.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnectFlags {
    /// Sent as `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// A header sent with every request (and the WebSocket handshake). Repeatable.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// A PEM file of CA certificates trusted for https:// and wss:// besides the web roots.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
}

/// Splits `NAME=VALUE`; the name must be a plain header name.
pub fn parse_header(pair: &str) -> anyhow::Result<(String, String)> {
    let Some((name, value)) = pair.split_once('=') else {
        bail!("`--header {pair}`: expected NAME=VALUE");
    };
    let name = name.trim();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(valid) {
        bail!("`--header {pair}`: `{name}` is not a header name");
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        bail!("`--header {name}=...`: the value may not hold a line break");
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

impl ConnectFlags {
    /// Whether any flag was given.
    pub fn any(&self) -> bool {
        self.token.is_some() || !self.headers.is_empty() || self.ca.is_some()
    }

    /// The headers to send: `--header`s, then `Authorization` from `--token`.
    pub fn header_pairs(&self) -> anyhow::Result<Vec<(String, String)>> {
        let mut pairs = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let Some(token) = &self.token {
            pairs.push(("Authorization".into(), format!("Bearer {token}")));
        }
        Ok(pairs)
    }

    /// The client options these flags make.
    pub fn client_options(&self) -> anyhow::Result<ClientOptions> {
        let mut options = ClientOptions::new();
        for (name, value) in self.header_pairs()? {
            options = options.header(&name, &value);
        }
        if let Some(ca) = &self.ca {
            options = options
                .ca_file(ca)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("`--ca {}`", ca.display()))?;
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_or_are_refused_clearly() {
        assert_eq!(
            parse_header("X-Trace=abc=1").unwrap(),
            ("X-Trace".into(), "abc=1".into())
        );
        for bad in ["nope", "=v", "bad name=v", "X=a\nb"] {
            assert!(parse_header(bad).is_err(), "{bad}");
        }
        let flags = ConnectFlags {
            token: Some("t1".into()),
            headers: vec!["X-A=1".into()],
            ca: None,
        };
        assert_eq!(
            flags.header_pairs().unwrap(),
            [
                ("X-A".to_owned(), "1".to_owned()),
                ("Authorization".to_owned(), "Bearer t1".to_owned())
            ]
        );
        let missing = ConnectFlags {
            ca: Some("/nonexistent/ca.pem".into()),
            ..ConnectFlags::default()
        };
        let err = format!("{:#}", missing.client_options().unwrap_err());
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
    }
}
