//! `mcpl arcade`: serve the example games server on stdio, WebSocket or Streamable HTTP,
//! alone or as one replica of several sharing a Redis (`--store`).

use anyhow::{Context, bail};
use mcpl_arcade::{ArcadeConfig, ArcadeServer, RedisArcade};
use mcpl_rpc::transport::origin::{AllowedHosts, AllowedOrigins};
use mcpl_rpc::transport::tls::ServerTls;
use mcpl_server::listen::ListenOptions;
use mcpl_server::{Identity, Principal, TokenMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    /// Origins, TLS and limits of `--listen`.
    pub guard: ListenFlags,
}

/// The defences of `--listen`: origins, TLS and limits. The defaults leave room for several
/// connections per principal (an agent and its tools) and thousands in all.
#[derive(Debug, Clone, clap::Args)]
pub struct ListenFlags {
    /// A browser origin allowed besides loopback ones (`https://app.example:8443`; `*` for
    /// any). Repeatable. Requests from other origins get 403; requests without `Origin` pass.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// A `Host` name allowed besides loopback ones when listening on loopback
    /// (`mcp.example` on any port, `mcp.example:8443` on that one; `*` for any), for a proxy
    /// or tunnel in front. Repeatable. Against DNS rebinding, requests naming another host get
    /// 403. Off loopback every name passes unless some are listed.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// The PEM certificate chain for `--listen https://` or `wss://`.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key for `--listen https://` or `wss://`.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Seconds a connection gets to finish TLS, the upgrade and `initialize`.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub handshake_timeout: f64,
    /// Connections (HTTP: sessions) open at once, in all.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_connections: usize,
    /// Connections (HTTP: sessions) open at once per principal.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_connections_per_principal: usize,
    /// Seconds an HTTP session may stay without traffic before it ends (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 1800.0)]
    pub idle_timeout: f64,
}

impl Default for ListenFlags {
    fn default() -> Self {
        ListenFlags {
            allow_origins: Vec::new(),
            allow_hosts: Vec::new(),
            tls_cert: None,
            tls_key: None,
            handshake_timeout: 10.0,
            max_connections: 10_000,
            max_connections_per_principal: 64,
            idle_timeout: 1800.0,
        }
    }
}

fn seconds(flag: &str, secs: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero() || flag == "--idle-timeout")
        .with_context(|| format!("`{flag} {secs}`: expected a positive number of seconds"))
}

impl ListenFlags {
    /// The listener's options; `tls` says whether `--listen` asked for TLS.
    fn options(&self, tls: bool) -> anyhow::Result<ListenOptions> {
        let mut origins = AllowedOrigins::default();
        for origin in &self.allow_origins {
            origins = origins.allow(origin);
        }
        let mut hosts = AllowedHosts::default();
        for host in &self.allow_hosts {
            if !AllowedHosts::is_entry(host) {
                bail!("`--allow-host {host}`: expected HOST or HOST:PORT (no scheme, no path)");
            }
            hosts = hosts.allow(host);
        }
        let server_tls = match (&self.tls_cert, &self.tls_key, tls) {
            (Some(cert), Some(key), true) => {
                Some(ServerTls::from_pem_files(cert, key).map_err(|e| anyhow::anyhow!("{e}"))?)
            }
            (None, _, true) | (_, None, true) => {
                bail!("`--listen https://` and `wss://` need `--tls-cert FILE --tls-key FILE`")
            }
            (Some(_), _, false) | (_, Some(_), false) => {
                bail!("`--tls-cert` and `--tls-key` go with `--listen https://` or `wss://`")
            }
            (None, None, false) => None,
        };
        if self.max_connections == 0 || self.max_connections_per_principal == 0 {
            bail!("connection limits must be at least 1");
        }
        let idle = seconds("--idle-timeout", self.idle_timeout)?;
        Ok(ListenOptions {
            origins,
            hosts,
            tls: server_tls,
            handshake_timeout: seconds("--handshake-timeout", self.handshake_timeout)?,
            max_connections: self.max_connections,
            max_connections_per_principal: self.max_connections_per_principal,
            idle_timeout: (!idle.is_zero()).then_some(idle),
        })
    }
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

/// Where the arcade listens, and whether with TLS.
#[derive(Debug, PartialEq, Eq)]
enum Listen {
    WebSocket(String, bool),
    Http(String, bool),
}

impl Listen {
    fn tls(&self) -> bool {
        match self {
            Listen::WebSocket(_, tls) | Listen::Http(_, tls) => *tls,
        }
    }
}

fn parse_listen(spec: &str) -> anyhow::Result<Listen> {
    let addr = |rest: &str| rest.trim_end_matches('/').to_owned();
    if let Some(rest) = spec.strip_prefix("ws://") {
        Ok(Listen::WebSocket(addr(rest), false))
    } else if let Some(rest) = spec.strip_prefix("wss://") {
        Ok(Listen::WebSocket(addr(rest), true))
    } else if let Some(rest) = spec.strip_prefix("http://") {
        Ok(Listen::Http(addr(rest), false))
    } else if let Some(rest) = spec.strip_prefix("https://") {
        Ok(Listen::Http(addr(rest), true))
    } else {
        bail!("`--listen {spec}`: expected ws://ADDR, wss://ADDR, http://ADDR or https://ADDR")
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

/// Logs go to stderr: warnings by default (refused requests, slow clients), more with
/// `MCPL_LOG` (`info`, `debug`, or any tracing filter).
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCPL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Run `mcpl arcade`.
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    init_logs();
    let listen = options.listen.as_deref().map(parse_listen).transpose()?;
    let identity = identity(&options.tokens)?;
    let guard = options
        .guard
        .options(listen.as_ref().is_some_and(Listen::tls))?;
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
    // With a token map, the agents that exist are its principals: `challenge` refuses others.
    let config = ArcadeConfig {
        agents: match &identity {
            Identity::Tokens(_) => Some(
                options
                    .tokens
                    .iter()
                    .filter_map(|pair| pair.split_once('=').map(|(_, p)| p.to_owned()))
                    .collect(),
            ),
            _ => None,
        },
        ..ArcadeConfig::default()
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let shown = store.as_deref().map(redacted).unwrap_or_default();
        let running = match store {
            None if options.conformance => Running::Alone(mcpl_arcade::start_conformance(config)?),
            None => Running::Alone(mcpl_arcade::start(config)?),
            Some(url) => {
                let started = mcpl_arcade::start_on_redis(
                    config,
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
            Some(Listen::WebSocket(addr, tls)) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                let scheme = if tls { "wss" } else { "ws" };
                eprintln!(
                    "mcpl arcade: serving WebSocket on {scheme}://{}",
                    listener.local_addr()?
                );
                server
                    .runtime()
                    .serve_ws_with(listener, identity, guard)
                    .await?
            }
            Some(Listen::Http(addr, tls)) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                let scheme = if tls { "https" } else { "http" };
                eprintln!(
                    "mcpl arcade: serving Streamable HTTP on {scheme}://{}{HTTP_PATH}",
                    listener.local_addr()?
                );
                server
                    .runtime()
                    .serve_http_with(listener, HTTP_PATH, identity, guard)
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
            Listen::WebSocket("127.0.0.1:0".into(), false)
        );
        assert_eq!(
            parse_listen("wss://127.0.0.1:0").unwrap(),
            Listen::WebSocket("127.0.0.1:0".into(), true)
        );
        assert_eq!(
            parse_listen("http://[::1]:8080/").unwrap(),
            Listen::Http("[::1]:8080".into(), false)
        );
        assert_eq!(
            parse_listen("https://127.0.0.1:8443").unwrap(),
            Listen::Http("127.0.0.1:8443".into(), true)
        );
        let err = parse_listen("tcp://x").unwrap_err().to_string();
        assert!(err.contains("http://ADDR or https://ADDR"), "{err}");
    }

    #[test]
    fn tls_flags_go_with_tls_listeners_and_limits_must_be_sane() {
        let flags = ListenFlags::default();
        let err = flags.options(true).unwrap_err().to_string();
        assert!(err.contains("--tls-cert FILE --tls-key FILE"), "{err}");
        let with_files = ListenFlags {
            tls_cert: Some("c.pem".into()),
            tls_key: Some("k.pem".into()),
            ..ListenFlags::default()
        };
        let err = with_files.options(false).unwrap_err().to_string();
        assert!(err.contains("go with `--listen https://`"), "{err}");
        let err = with_files.options(true).unwrap_err().to_string();
        assert!(err.contains("c.pem"), "{err}");
        let zero = ListenFlags {
            handshake_timeout: 0.0,
            ..ListenFlags::default()
        };
        assert!(zero.options(false).is_err());
        let defaults = ListenFlags::default().options(false).unwrap();
        assert_eq!(defaults.handshake_timeout, Duration::from_secs(10));
        assert!(defaults.max_connections_per_principal >= 8);
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
