//! `mcpl arcade`.

use std::process::ExitCode;

/// Run `mcpl arcade`.
pub fn run(listen: Option<String>) -> anyhow::Result<ExitCode> {
    let _ = listen;
    super::not_built_yet("arcade")
}
