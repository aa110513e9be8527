//! One module per subcommand. Each `run` returns the process exit code, or an error that `main`
//! prints with the subcommand's name.

pub mod arcade;
pub mod bench;
pub mod conformance;
pub mod demo;
pub mod inspect;
pub mod surface;

use std::process::ExitCode;

/// Report a subcommand whose part is not built yet, with exit status 2.
pub fn not_built_yet(name: &str) -> anyhow::Result<ExitCode> {
    eprintln!("mcpl {name}: not built yet");
    Ok(ExitCode::from(2))
}
