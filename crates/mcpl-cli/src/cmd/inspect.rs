//! `mcpl inspect`.

use std::process::ExitCode;

/// Run `mcpl inspect`.
pub fn run(spec: String) -> anyhow::Result<ExitCode> {
    let _ = spec;
    super::not_built_yet("inspect")
}
