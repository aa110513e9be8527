//! `mcpl conformance server|host`.

use std::process::ExitCode;

/// Run `mcpl conformance server -- CMD...`.
pub fn run_server(command: Vec<String>) -> anyhow::Result<ExitCode> {
    let _ = command;
    super::not_built_yet("conformance")
}

/// Run `mcpl conformance host -- CMD...`.
pub fn run_host(command: Vec<String>) -> anyhow::Result<ExitCode> {
    let _ = command;
    super::not_built_yet("conformance")
}
