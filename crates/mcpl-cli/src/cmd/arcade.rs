//! `mcpl arcade`: serve the example games server on stdio, WebSocket or Streamable HTTP,
//! alone or as one replica of several sharing a Redis (`--store`).

use anyhow::{Context, bail};
use mcpl_arcade::{ArcadeConfig, ArcadeServer, RedisArcade};
use mcpl_server::{Identity, Principal, TokenMap};
use std::process::ExitCode;

/// The path the Streamable HTTP endpoint is mounted at.
const HTTP_PATH: &str = "/mcp";

/// The exit status when the arcade cannot start (its store is bad or unreachable).
const EXIT_CANNOT_START: u8 = 2;

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
    /// `redis://HOST:PORT`: keep games and principal state there, shared by replicas.
    pub store: Option<String>,
    /// The prefix of the arcade's Redis keys (`--store-prefix`).
    pub store_prefix: String,
    /// `--inspect ADDR`: where to serve the live inspector page.
    pub inspect: Option<String>,
    /// `--inspect-token`: required when `--inspect` is not loopback.
    pub inspect_token: Option<String>,
}

/// The arcade this process runs: on its own, or as a replica on Redis.
enum Running {
    Alone(ArcadeServer),
    /// Keeps the fan-out alive with the server.
    Replica(RedisArcade),
}

impl Running {
    fn server(&self) -> &ArcadeServer {
        match self {
            Running::Alone(server) => server,
            Running::Replica(replica) => replica.server(),
        }
    }
}

/// Checks `--store` names a Redis (the store itself says whether it answers).
fn parse_store(spec: &str) -> anyhow::Result<&str> {
    let Some(rest) = spec.strip_prefix("redis://") else {
        bail!("`--store {spec}`: expected redis://HOST:PORT");
    };
    if rest.trim_end_matches('/').is_empty() {
        bail!("`--store {spec}`: no host: expected redis://HOST:PORT");
    }
    Ok(spec)
}

/// `url` fit to print: a password in it (`redis://:PASSWORD@HOST`) is masked.
fn redacted(url: &str) -> String {
    match url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
    {
        Some((_, host)) => format!("redis://***@{host}"),
        None => url.to_owned(),
    }
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
    let store = match options.store.as_deref().map(parse_store).transpose() {
        Ok(store) => store.map(str::to_owned),
        Err(e) => {
            eprintln!("mcpl arcade: {e:#}");
            return Ok(ExitCode::from(EXIT_CANNOT_START));
        }
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let shown = store.as_deref().map(redacted).unwrap_or_default();
        let running = match store {
            None if options.conformance => {
                Running::Alone(mcpl_arcade::start_conformance(ArcadeConfig::default())?)
            }
            None => Running::Alone(mcpl_arcade::start(ArcadeConfig::default())?),
            Some(url) => {
                let started = mcpl_arcade::start_on_redis(
                    ArcadeConfig::default(),
                    &url,
                    &options.store_prefix,
                    options.conformance,
                )
                .await;
                match started {
                    Ok(replica) => {
                        eprintln!(
                            "mcpl arcade: games and principal state in {shown} under `{}`",
                            options.store_prefix
                        );
                        Running::Replica(replica)
                    }
                    Err(e) => {
                        eprintln!("mcpl arcade: cannot start on the store {shown}: {e}");
                        return Ok(ExitCode::from(EXIT_CANNOT_START));
                    }
                }
            }
        };
        let server = running.server();
        if let Some(addr) = &options.inspect {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding --inspect {addr}"))?;
            let inspector = mcpl_inspect::inspect_server(
                listener,
                server.handle().clone(),
                options.inspect_token.clone(),
            )
            .await?;
            eprintln!("mcpl arcade: inspect at http://{}/", inspector.addr);
        }
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
        anyhow::Ok(ExitCode::SUCCESS)
    })
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
    fn store_specs_must_name_a_redis() {
        assert_eq!(
            parse_store("redis://127.0.0.1:6379").unwrap(),
            "redis://127.0.0.1:6379"
        );
        assert!(parse_store("redis://cache.example:6380/").is_ok());
        for bad in [
            "127.0.0.1:6379",
            "http://127.0.0.1:6379",
            "redis://",
            "redis:///",
        ] {
            let err = parse_store(bad).unwrap_err().to_string();
            assert!(err.contains("expected redis://HOST:PORT"), "{bad}: {err}");
            assert!(err.contains(bad), "{bad}: {err}");
        }
        assert_eq!(redacted("redis://:s3cret@db:6379"), "redis://***@db:6379");
        assert_eq!(redacted("redis://db:6379"), "redis://db:6379");
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
