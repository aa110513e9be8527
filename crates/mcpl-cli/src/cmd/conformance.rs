//! `mcpl conformance server|host`: the RFC-014 conformance suite (`mcpl-conformance`) against
//! a server or a host. The table (or JSON) goes to stdout; the exit status is 0 when no check
//! failed, 1 when one did, and 2 when the suite could not run at all.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use mcpl_conformance::cli::{self, Args};

pub use mcpl_conformance::Side;

/// The exit status of a suite that could not run (a bad target or `--only`, no socket).
const EXIT_CANNOT_RUN: u8 = 2;

/// Checks every `--only` id against the checks `side` has, so a typo (or a vector of the
/// other side) is an error rather than a run of nothing that passes.
fn check_only(side: Side, only: &[String]) -> Result<(), String> {
    let known: Vec<&str> = match side {
        Side::Server => mcpl_conformance::server_vectors().map(|r| r.id).collect(),
        Side::Host => mcpl_conformance::host_rules().map(|r| r.id).collect(),
    };
    match only.iter().find(|id| !known.contains(&id.as_str())) {
        None => Ok(()),
        Some(id) => Err(format!(
            "`--only {id}`: no such {} check; the {} suite's ids are {}",
            side.as_str(),
            side.as_str(),
            known.join(", ")
        )),
    }
}

/// Run `mcpl conformance server|host` with the parsed flags.
pub fn run(side: Side, args: Args) -> anyhow::Result<ExitCode> {
    if let Err(why) = check_only(side, &args.only) {
        eprintln!("mcpl conformance: {why}");
        return Ok(ExitCode::from(EXIT_CANNOT_RUN));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let mut out = std::io::stdout();
    let outcome = runtime.block_on(async {
        match side {
            Side::Server => cli::server(&args, &mut out).await,
            Side::Host => cli::host(&args, &mut out).await,
        }
    });
    // Processes under test are killed with the runtime; do not wait on stragglers.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(code) => Ok(ExitCode::from(code)),
        Err(e) => {
            eprintln!("mcpl conformance {}: {e}", side.as_str());
            Ok(ExitCode::from(EXIT_CANNOT_RUN))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_must_name_a_check_of_the_side() {
        assert!(check_only(Side::Server, &[]).is_ok());
        assert!(check_only(Side::Server, &["v01".into(), "v38".into()]).is_ok());
        assert!(check_only(Side::Host, &["h28".into(), "v35".into()]).is_ok());
        let err = check_only(Side::Server, &["h28".into()]).unwrap_err();
        assert!(
            err.contains("`--only h28`") && err.contains("v01, v02") && err.contains("v38"),
            "{err}"
        );
        // A vector of the other side is refused too: it would run nothing and pass.
        let err = check_only(Side::Server, &["v36".into()]).unwrap_err();
        assert!(err.contains("`--only v36`"), "{err}");
        assert!(check_only(Side::Host, &["v01".into()]).is_err());
        let err = check_only(Side::Host, &["v4".into()]).unwrap_err();
        assert!(err.contains("`--only v4`") && err.contains("h64"), "{err}");
    }
}
