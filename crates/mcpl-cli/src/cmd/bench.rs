//! `mcpl bench`.

use std::process::ExitCode;

/// Run `mcpl bench`.
pub fn run(quick: bool) -> anyhow::Result<ExitCode> {
    let _ = quick;
    super::not_built_yet("bench")
}
