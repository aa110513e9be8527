//! What the `mcpl conformance` subcommand needs, in one call per side: build the target, run
//! the suite, print the table (or JSON), write JUnit XML, and return the exit status.
//!
//! ```text
//! mcpl conformance server [--url URL [--token T] [--header NAME=VALUE]...] [--json] [--junit FILE] [--only ID]... [-- CMD...]
//! mcpl conformance host [--json] [--junit FILE] [--only ID]... -- CMD...
//! ```

use crate::error::Error;
use crate::render;
use crate::report::Report;
use crate::target::{HostTarget, Options, ServerTarget};
use crate::{run_host_suite, run_server_suite};
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `mcpl conformance server|host`, as the CLI parsed them.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// The command after `--` (the server or host under test).
    pub command: Vec<String>,
    /// `--url`: a running server (server side only).
    pub url: Option<String>,
    /// `--token`: a credential that makes connections one principal (with `--url`).
    pub token: Option<String>,
    /// `--header NAME=VALUE` (repeatable): sent on every connection (with `--url`).
    pub headers: Vec<(String, String)>,
    /// `--json`: print JSON instead of the table.
    pub json: bool,
    /// `--junit FILE`: also write JUnit XML there.
    pub junit: Option<PathBuf>,
    /// `--only ID` (repeatable): run only these checks.
    pub only: Vec<String>,
}

/// Exit status: no check failed (checks not applicable are counted apart).
pub const EXIT_PASS: u8 = 0;
/// Exit status: at least one check failed.
pub const EXIT_FAIL: u8 = 1;

impl Args {
    fn options(&self) -> Options {
        Options {
            only: self.only.clone(),
            ..Options::default()
        }
    }

    /// The server target these arguments name.
    pub fn server_target(&self) -> Result<ServerTarget, Error> {
        match (&self.url, self.command.is_empty()) {
            (Some(url), true) => Ok(ServerTarget::Url {
                url: url.clone(),
                token: self.token.clone(),
                headers: self.headers.clone(),
            }),
            (None, false) => Ok(ServerTarget::Command(self.command.clone())),
            (Some(url), false) => Err(Error::BadTarget {
                target: url.clone(),
                reason: "give either --url or a command after `--`, not both".into(),
            }),
            (None, true) => Err(Error::BadTarget {
                target: String::new(),
                reason: "give the server to test: `-- CMD...` or `--url ws://...`".into(),
            }),
        }
    }

    /// The host target these arguments name.
    pub fn host_target(&self) -> Result<HostTarget, Error> {
        if self.command.is_empty() {
            return Err(Error::BadTarget {
                target: String::new(),
                reason: "give the host to test: `-- CMD...` (`{url}` is replaced by the suite's server URL)".into(),
            });
        }
        Ok(HostTarget::Command(self.command.clone()))
    }
}

/// `mcpl conformance server`: runs the server suite and reports; returns the exit status.
pub async fn server(args: &Args, out: &mut dyn Write) -> Result<u8, Error> {
    let target = args.server_target()?;
    if let ServerTarget::Url { url, .. } = &target
        && !url.starts_with("ws://")
    {
        return Err(Error::BadTarget {
            target: url.clone(),
            reason: "only ws:// URLs are supported so far (Streamable HTTP is not)".into(),
        });
    }
    let report = run_server_suite(target, args.options()).await;
    finish(args, &report, out)
}

/// `mcpl conformance host`: runs the host suite and reports; returns the exit status.
pub async fn host(args: &Args, out: &mut dyn Write) -> Result<u8, Error> {
    let report = run_host_suite(args.host_target()?, args.options()).await;
    finish(args, &report, out)
}

/// Prints the report, writes the JUnit file, and picks the exit status.
pub fn finish(args: &Args, report: &Report, out: &mut dyn Write) -> Result<u8, Error> {
    let text = if args.json {
        render::json(report)
    } else {
        render::table(report)
    };
    writeln!(out, "{}", text.trim_end()).map_err(|e| Error::Setup(format!("cannot print: {e}")))?;
    if let Some(path) = &args.junit {
        std::fs::write(path, render::junit(report))
            .map_err(|e| Error::Setup(format!("cannot write `{}`: {e}", path.display())))?;
    }
    Ok(if report.failed() {
        EXIT_FAIL
    } else {
        EXIT_PASS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Side, VECTORS};
    use crate::report::{CheckResult, Outcome};

    #[test]
    fn targets_need_exactly_one_of_url_and_command() {
        let mut a = Args::default();
        assert!(a.server_target().is_err());
        assert!(a.host_target().is_err());
        a.url = Some("ws://x".into());
        assert!(matches!(a.server_target(), Ok(ServerTarget::Url { .. })));
        a.command = vec!["srv".into()];
        assert!(a.server_target().is_err());
        a.url = None;
        assert!(matches!(a.server_target(), Ok(ServerTarget::Command(_))));
        assert!(a.host_target().is_ok());
    }

    #[test]
    fn a_failure_exits_non_zero_and_writes_junit() {
        let dir = std::env::temp_dir().join(format!("mcpl-conf-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let junit = dir.join("r.xml");
        let args = Args {
            json: true,
            junit: Some(junit.clone()),
            ..Args::default()
        };
        let mut report = Report::new(Side::Server, "x");
        report
            .checks
            .push(CheckResult::new(&VECTORS[0], Outcome::Pass, 0));
        let mut out = Vec::new();
        assert_eq!(finish(&args, &report, &mut out).unwrap(), EXIT_PASS);
        report.checks.push(CheckResult::new(
            &VECTORS[1],
            Outcome::Fail {
                reason: "r".into(),
                transcript: vec![],
            },
            0,
        ));
        assert_eq!(finish(&args, &report, &mut out).unwrap(), EXIT_FAIL);
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(xml.contains("failures=\"1\""));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
