//! The `mcpl` binary: one command for every part of the project.
//!
//! Each subcommand is a thin shell over a library crate. A subcommand whose part is not built
//! yet says so and exits with status 2; nothing here pretends to work.

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
        /// `name=SPEC`. Repeat for several. Without any, the embedded arcade is used.
        #[arg(long = "server", value_name = "SPEC")]
        servers: Vec<String>,
    },
    /// Serve the arcade, the example games server.
    Arcade {
        /// Listen on `ws://ADDR` or `http://ADDR` instead of serving stdio.
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// With `--listen`: a bearer token and the principal it stands for, `TOKEN=PRINCIPAL`.
        /// Repeat for several principals. Without any, each connection is its own principal.
        #[arg(long = "token", value_name = "TOKEN=PRINCIPAL")]
        tokens: Vec<String>,
        /// On stdio: the principal this process serves.
        #[arg(long, value_name = "NAME", default_value = "local")]
        principal: String,
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
        /// A short run, for CI.
        #[arg(long)]
        quick: bool,
    },
    /// Connect to a server and show what it declares: tools, hints, toolsets.
    Inspect {
        /// The server: a command line, a ws:// URL or an http(s):// URL.
        spec: String,
    },
}

#[derive(Debug, Subcommand)]
enum ConformanceTarget {
    /// Check a server: `mcpl conformance server -- CMD...`.
    Server {
        /// The command that starts the server under test.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Check a host: `mcpl conformance host -- CMD...`.
    Host {
        /// The command that starts the host under test.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

impl Command {
    /// The name printed when a subcommand is not built yet.
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
        Command::Surface { servers } => cmd::surface::run(servers),
        Command::Arcade {
            listen,
            tokens,
            principal,
        } => cmd::arcade::run(cmd::arcade::Options {
            listen,
            tokens,
            principal,
        }),
        Command::Demo => cmd::demo::run(),
        Command::Conformance { target } => match target {
            ConformanceTarget::Server { command } => cmd::conformance::run_server(command),
            ConformanceTarget::Host { command } => cmd::conformance::run_host(command),
        },
        Command::Bench { quick } => cmd::bench::run(quick),
        Command::Inspect { spec } => cmd::inspect::run(spec),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mcpl {name}: {err:#}");
            ExitCode::FAILURE
        }
    }
}
