//! `mcpl arcade`: serve the example games server on stdio, WebSocket or Streamable HTTP.

use anyhow::{Context, bail};
use mcpl_arcade::ArcadeConfig;
use mcpl_server::{Identity, Principal, TokenMap};
use std::process::ExitCode;

/// The path the Streamable HTTP endpoint is mounted at.
const HTTP_PATH: &str = "/mcp";

/// What `mcpl arcade` was asked to do.
#[derive(Debug)]
pub struct Options {
    /// `ws://ADDR` or `http://ADDR`; stdio when absent.
    pub listen: Option<String>,
    /// `TOKEN=PRINCIPAL` pairs for `--listen`.
    pub tokens: Vec<String>,
    /// The principal of a stdio session.
    pub principal: String,
    /// Serve the conformance fixture contract beside the games (`--conformance`).
    pub conformance: bool,
}

/// Where the arcade listens.
#[derive(Debug, PartialEq, Eq)]
enum Listen {
    WebSocket(String),
    Http(String),
}

fn parse_listen(spec: &str) -> anyhow::Result<Listen> {
    if let Some(addr) = spec.strip_prefix("ws://") {
        Ok(Listen::WebSocket(addr.trim_end_matches('/').to_owned()))
    } else if let Some(addr) = spec.strip_prefix("http://") {
        Ok(Listen::Http(addr.trim_end_matches('/').to_owned()))
    } else {
        bail!("`--listen {spec}`: expected ws://ADDR or http://ADDR")
    }
}

/// The identity of `--listen` connections: the operator's token map, or one principal per
/// connection when no token is configured (RFC-014 §5.6: never what a client claims).
fn identity(tokens: &[String]) -> anyhow::Result<Identity> {
    if tokens.is_empty() {
        return Ok(Identity::PerConnection);
    }
    let mut map = TokenMap::new();
    for pair in tokens {
        let Some((token, principal)) = pair.split_once('=') else {
            bail!("`--token {pair}`: expected TOKEN=PRINCIPAL");
        };
        if token.is_empty() || principal.is_empty() {
            bail!("`--token {pair}`: neither the token nor the principal may be empty");
        }
        map = map.with(token, principal);
    }
    Ok(Identity::Tokens(map))
}

/// Run `mcpl arcade`.
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    let listen = options.listen.as_deref().map(parse_listen).transpose()?;
    let identity = identity(&options.tokens)?;
    if listen.is_none() && !options.tokens.is_empty() {
        bail!("`--token` needs `--listen`: a stdio session serves one `--principal`");
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let server = if options.conformance {
            mcpl_arcade::start_conformance(ArcadeConfig::default())?
        } else {
            mcpl_arcade::start(ArcadeConfig::default())?
        };
        match listen {
            None => {
                server
                    .serve_stdio(Principal::authenticated(&options.principal))
                    .await?
            }
            Some(Listen::WebSocket(addr)) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                eprintln!(
                    "mcpl arcade: serving WebSocket on ws://{}",
                    listener.local_addr()?
                );
                server.runtime().serve_ws(listener, identity).await?
            }
            Some(Listen::Http(addr)) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                eprintln!(
                    "mcpl arcade: serving Streamable HTTP on http://{}{HTTP_PATH}",
                    listener.local_addr()?
                );
                server
                    .runtime()
                    .serve_http(listener, HTTP_PATH, identity)
                    .await?
            }
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_specs_parse_or_name_the_expected_forms() {
        assert_eq!(
            parse_listen("ws://127.0.0.1:0").unwrap(),
            Listen::WebSocket("127.0.0.1:0".into())
        );
        assert_eq!(
            parse_listen("http://[::1]:8080/").unwrap(),
            Listen::Http("[::1]:8080".into())
        );
        let err = parse_listen("tcp://x").unwrap_err().to_string();
        assert!(err.contains("ws://ADDR or http://ADDR"), "{err}");
    }

    #[test]
    fn tokens_map_to_principals_and_bad_pairs_are_refused() {
        assert!(matches!(identity(&[]).unwrap(), Identity::PerConnection));
        let Identity::Tokens(map) = identity(&["t1=ada".into(), "t2=bob".into()]).unwrap() else {
            panic!("a token map");
        };
        assert_eq!(map.resolve("t1").unwrap().id(), "ada");
        assert!(map.resolve("nope").is_none());
        for bad in ["t1", "=ada", "t1="] {
            assert!(identity(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
