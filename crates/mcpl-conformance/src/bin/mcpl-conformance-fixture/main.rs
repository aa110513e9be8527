//! `mcpl-conformance-fixture`: serves the reference fixture (a correct RFC-014 server that
//! meets the conformance fixture contract) so the suite can be run end to end.
//!
//! ```text
//! mcpl-conformance-fixture [--listen HOST:PORT [--token TOKEN]] [--fault NAME]...
//! ```
//!
//! Without `--listen` it serves one connection on stdio. With `--listen` it accepts WebSocket
//! connections; those that send `Authorization: Bearer TOKEN` (the `--token` given) act for one
//! principal, every other connection for its own (RFC-014 §5.6). Each `--fault` switches on
//! one of `reference::Faults` by its field name, to see the suite catch it; on stdio,
//! `--fault response_without_outcome` is a raw-frame fault (see `raw`).

mod raw;

use mcpl_conformance::reference::{Faults, Principal, serve};
use mcpl_rpc::transport::ws::{self, Rejection};
use mcpl_rpc::{Limits, Transport};
use std::process::ExitCode;

fn usage(problem: &str) -> ExitCode {
    eprintln!("mcpl-conformance-fixture: {problem}");
    eprintln!(
        "usage: mcpl-conformance-fixture [--listen HOST:PORT [--token TOKEN]] [--fault NAME]..."
    );
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut listen = None;
    let mut token = None;
    let mut faults = Faults::default();
    let mut raw_fault = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next(),
            "--token" => token = args.next(),
            "--fault" => {
                let Some(name) = args.next() else {
                    return usage("--fault needs a name");
                };
                if raw::NAMES.contains(&name.as_str()) {
                    raw_fault = Some(name);
                    continue;
                }
                match faults.with(&name) {
                    Some(f) => faults = f,
                    None => {
                        return usage(&format!(
                            "unknown fault `{name}`; the faults are {}, {}",
                            Faults::NAMES.join(", "),
                            raw::NAMES.join(", ")
                        ));
                    }
                }
            }
            other => return usage(&format!("unknown argument `{other}`")),
        }
    }
    let Some(addr) = listen else {
        if let Some(name) = raw_fault {
            raw::serve_with(&name, faults).await;
            return ExitCode::SUCCESS;
        }
        serve(Transport::process_stdio(), Principal::new(), faults).await;
        return ExitCode::SUCCESS;
    };
    if let Some(name) = raw_fault {
        return usage(&format!(
            "`--fault {name}` works on stdio only, not with --listen"
        ));
    }
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => return usage(&format!("cannot listen on `{addr}`: {e}")),
    };
    if let Ok(local) = listener.local_addr() {
        // The first line on stdout is the URL, for scripts that asked for port 0.
        println!("ws://{local}");
    }
    let shared = Principal::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        mcpl_rpc::transport::tcp::ready_tcp(&stream);
        let (token, shared) = (token.clone(), shared.clone());
        tokio::spawn(async move {
            let accepted = ws::accept_with(stream, Limits::default(), |handshake| {
                let bearer = handshake
                    .headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "));
                Ok::<bool, Rejection>(token.is_some() && bearer == token.as_deref())
            })
            .await;
            if let Ok((transport, same_principal)) = accepted {
                let principal = if same_principal {
                    shared
                } else {
                    Principal::new()
                };
                serve(transport, principal, faults).await;
            }
        });
    }
}
