//! The `mcpl` binary: one command for every part of the project.
//!
//! Each subcommand is a thin shell over a library crate: it parses flags here, runs the
//! library in `cmd::<name>`, and returns the exit status (2 for a usage error or a run that
//! could not start).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// MCPL RFC-014 (tool presence, toolsets and surfaces) in Rust.
#[derive(Debug, Parser)]
#[command(name = "mcpl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve plain MCP clients on stdio as an MCPL host for the servers behind it.
    Surface {
        /// A backing server: a command line, a ws:// URL or an http(s):// URL, optionally
        /// `name=SPEC`. Repeat for several. Without any (and without --config), the embedded
        /// arcade is used.
        #[arg(long = "server", value_name = "SPEC")]
        servers: Vec<String>,
        /// Backends from a file in the `mcpServers` shape (command/args/env/cwd or
        /// url/headers, `${VAR}` from the environment); see docs/SURFACE.md.
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
        /// The most bytes a result and the news it carries may take; what does not fit waits
        /// for the next result (default 16000, or the config file's `inlineCap`).
        #[arg(long, value_name = "BYTES")]
        inline_cap: Option<usize>,
        /// A plain server without `toolsets` in its config entry that lists more tools than
        /// this is grouped into host-side toolsets by shared name prefix.
        #[arg(long, value_name = "N", default_value_t = mcpl_surface::DEFAULT_STATIC_LIMIT)]
        static_limit: usize,
        /// How long the first `tools/list` or call waits for every server to be read, in
        /// seconds, so the first list is the lasting one (a slow-starting server's static
        /// tools are in it); a server still unread after that joins later.
        #[arg(long, value_name = "SECS", default_value_t = 10)]
        settle: u64,
        /// Serve plain clients over Streamable HTTP at `http://ADDR/mcp` instead of stdio;
        /// each HTTP session is its own agent.
        #[arg(long, value_name = "http://ADDR")]
        listen: Option<String>,
        /// With --listen: the bearer token every request must carry (required off loopback).
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        /// A PEM file of CA certificates to trust, besides the web roots, for `https://` and
        /// `wss://` servers that do not name their own `ca` in the config file.
        #[arg(long, value_name = "FILE")]
        ca: Option<std::path::PathBuf>,
        /// Serve a live, read-only web page of the backends (link, rev, recovery), the
        /// model-facing tool list with its digest and change count, and the news waiting to
        /// be told at `http://ADDR/` (loopback unless `--inspect-token` is set), whatever
        /// the main transport. The URL is printed on stderr.
        #[arg(long, value_name = "ADDR")]
        inspect: Option<String>,
        /// With `--inspect`: the token the page asks for (required off loopback; sent by a
        /// login form as a cookie, never in a URL).
        #[arg(long, value_name = "TOKEN", requires = "inspect")]
        inspect_token: Option<String>,
    },
    /// Serve the arcade, the example games server.
    Arcade {
        /// Listen on `ws://ADDR`, `wss://ADDR`, `http://ADDR` or `https://ADDR` instead of
        /// serving stdio (the TLS forms need `--tls-cert` and `--tls-key`).
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// With `--listen`: a bearer token and the principal it stands for, `TOKEN=PRINCIPAL`.
        /// Repeat for several principals. Without any, each connection is its own principal.
        #[arg(long = "token", value_name = "TOKEN=PRINCIPAL")]
        tokens: Vec<String>,
        /// On stdio: the principal this process serves.
        #[arg(long, value_name = "NAME", default_value = "local")]
        principal: String,
        /// Also serve the conformance fixture contract (the `cf-*` toolsets and `cf_*` tools,
        /// docs/CONFORMANCE.md) beside the games, for `mcpl conformance server`.
        #[arg(long)]
        conformance: bool,
        /// Keep the games and every principal's toolsets in the Redis at `redis://HOST:PORT`,
        /// for several replicas behind one address (each with `--listen` and the same
        /// `--token`s): every replica started with the same store and prefix serves the same
        /// games. Allowed on stdio too, though a single stdio process has no replicas to
        /// share with. An unreachable Redis at start exits with status 2.
        #[arg(long, value_name = "redis://HOST:PORT")]
        store: Option<String>,
        /// With `--store`: the prefix of the arcade's Redis keys, the same for every replica
        /// of one deployment.
        #[arg(long, value_name = "PREFIX", default_value = "mcpl-arcade")]
        store_prefix: String,
        /// Serve a live, read-only web page of principals, connections, toolsets and hint
        /// changes at `http://ADDR/` (loopback unless `--inspect-token` is set). The URL is
        /// printed on stderr.
        #[arg(long, value_name = "ADDR")]
        inspect: Option<String>,
        /// With `--inspect`: the token the page asks for (required off loopback; sent by a
        /// login form as a cookie, never in a URL).
        #[arg(long, value_name = "TOKEN", requires = "inspect")]
        inspect_token: Option<String>,
        /// Origins, TLS and limits of `--listen`.
        #[command(flatten)]
        guard: cmd::arcade::ListenFlags,
    },
    /// Run a scripted agent through a whole session and print the transcript and cache report.
    Demo,
    /// Run the RFC-014 conformance vectors against a server or a host.
    Conformance {
        #[command(subcommand)]
        target: ConformanceTarget,
    },
    /// Measure against baselines in the same run and print ratios.
    Bench {
        /// What to run and print.
        #[command(flatten)]
        flags: cmd::bench::BenchFlags,
    },
    /// Connect to a server and show what it declares: tools, hints, toolsets.
    Inspect {
        /// The server: a command line, a ws(s):// URL or an http(s):// URL.
        spec: String,
        /// Credentials, headers and CA for a ws(s):// or http(s):// server.
        #[command(flatten)]
        connect: cmd::connect::ConnectFlags,
    },
}

#[derive(Debug, Subcommand)]
enum ConformanceTarget {
    /// Check a server: `mcpl conformance server -- CMD...` (a process per connection, MCP
    /// over stdio) or `mcpl conformance server --url ws://...`.
    Server {
        /// A running server's ws:// URL, instead of a command.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// With `--url`: sent as `Authorization: Bearer TOKEN` on every connection, which
        /// makes them one principal (vectors 9, 14 and 32 need that).
        #[arg(long, value_name = "TOKEN", requires = "url")]
        token: Option<String>,
        /// With `--url`: a header sent on every connection, `NAME=VALUE`. Repeatable.
        #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
        headers: Vec<String>,
        #[command(flatten)]
        report: ReportArgs,
        /// The command that starts the server under test.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Check a host: `mcpl conformance host -- CMD...`; `{url}` in CMD is replaced by the
    /// suite's scripted server URL (appended when absent).
    Host {
        #[command(flatten)]
        report: ReportArgs,
        /// The command that starts the host under test.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

/// How `mcpl conformance` reports, on either side.
#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the report as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<std::path::PathBuf>,
    /// Run only this check (`v04`, `h28`); repeat for several.
    #[arg(long = "only", value_name = "ID")]
    only: Vec<String>,
}

impl ReportArgs {
    /// The suite's arguments: these flags, the target command and, for a server, its URL.
    fn into_args(
        self,
        command: Vec<String>,
        url: Option<String>,
        token: Option<String>,
    ) -> mcpl_conformance::cli::Args {
        mcpl_conformance::cli::Args {
            command,
            url,
            token,
            headers: Vec::new(),
            json: self.json,
            junit: self.junit,
            only: self.only,
        }
    }
}

impl Command {
    /// The name printed before a subcommand's error.
    fn name(&self) -> &'static str {
        match self {
            Command::Surface { .. } => "surface",
            Command::Arcade { .. } => "arcade",
            Command::Demo => "demo",
            Command::Conformance { .. } => "conformance",
            Command::Bench { .. } => "bench",
            Command::Inspect { .. } => "inspect",
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = cli.command.name();
    let outcome = match cli.command {
        Command::Surface {
            servers,
            config,
            inline_cap,
            static_limit,
            settle,
            listen,
            token,
            ca,
            inspect,
            inspect_token,
        } => cmd::surface::run(cmd::surface::Options {
            servers,
            config,
            inline_cap,
            static_limit,
            settle: std::time::Duration::from_secs(settle),
            listen,
            token,
            ca,
            inspect,
            inspect_token,
        }),
        Command::Arcade {
            listen,
            tokens,
            principal,
            conformance,
            store,
            store_prefix,
            inspect,
            inspect_token,
            guard,
        } => cmd::arcade::run(cmd::arcade::Options {
            listen,
            tokens,
            principal,
            conformance,
            store,
            store_prefix,
            inspect,
            inspect_token,
            guard,
        }),
        Command::Demo => cmd::demo::run(),
        Command::Conformance { target } => match target {
            ConformanceTarget::Server {
                url,
                token,
                headers,
                report,
                command,
            } => headers
                .iter()
                .map(|h| cmd::connect::parse_header(h))
                .collect::<anyhow::Result<Vec<_>>>()
                .and_then(|headers| {
                    let mut args = report.into_args(command, url, token);
                    args.headers = headers;
                    cmd::conformance::run(cmd::conformance::Side::Server, args)
                }),
            ConformanceTarget::Host { report, command } => cmd::conformance::run(
                cmd::conformance::Side::Host,
                report.into_args(command, None, None),
            ),
        },
        Command::Bench { flags } => cmd::bench::run(flags),
        Command::Inspect { spec, connect } => cmd::inspect::run(spec, connect),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mcpl {name}: {err:#}");
            ExitCode::FAILURE
        }
    }
}
