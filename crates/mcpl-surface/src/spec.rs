//! Backing-server specs: what `--server SPEC` names and how each is reached.
//!
//! A SPEC is a shell command line (a child process on stdio), a `ws://`/`wss://` URL
//! (WebSocket) or an `http://`/`https://` URL (Streamable HTTP), optionally prefixed with
//! `NAME=`. Without a name one is derived: the command's program name or the URL's host.
//! Names are unique within one surface: a repeated name gets `-2`, `-3`, ...
//!
//! A config file (`config`) gives the same specs with headers, environment and a working
//! directory.

use std::path::PathBuf;

use mcpl_host::ServerName;

use crate::error::Error;

/// How a backing server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A shell command line whose process speaks MCP on stdio.
    Command(String),
    /// A program started directly (no shell) with these arguments, speaking MCP on stdio.
    Exec {
        /// The program: a path, or a name looked up on `PATH`.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A WebSocket URL.
    WebSocket(String),
    /// A Streamable HTTP endpoint URL.
    Http(String),
    /// The arcade built into this binary, served in process.
    Embedded,
}

/// One backing server: the name the model sees and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The host's id for the server: the meta-tools' `server` selector and the `NAME__`
    /// prefix of its static tools when there are several servers.
    pub name: ServerName,
    /// How to reach it.
    pub target: Target,
    /// Headers sent on every connect and reconnect of a URL target (for example
    /// `Authorization`), so a reconnect is the same principal.
    pub headers: Vec<(String, String)>,
    /// Environment variables set for a child process.
    pub env: Vec<(String, String)>,
    /// The working directory of a child process.
    pub cwd: Option<PathBuf>,
    /// A PEM file of CA certificates to trust, besides the web roots, for an `https://` or
    /// `wss://` target (`"ca"` in a config entry, or `mcpl surface --ca FILE`).
    pub ca: Option<PathBuf>,
    /// How a plain server's tools are grouped into host-side toolsets (`toolsets`,
    /// `static`, `autoOpen` in a config entry); ignored for an MCPL server. Its
    /// `static_limit` is the surface's ([`crate::SurfaceConfig::static_limit`]).
    pub grouping: mcpl_host::Grouping,
}

impl ServerSpec {
    /// A spec with no headers, environment or working directory.
    pub fn new(name: ServerName, target: Target) -> Self {
        ServerSpec {
            name,
            target,
            headers: Vec::new(),
            env: Vec::new(),
            cwd: None,
            ca: None,
            grouping: mcpl_host::Grouping::default(),
        }
    }

    /// The embedded arcade, named `arcade`.
    pub fn embedded() -> Self {
        ServerSpec::new(ServerName::sanitized("arcade"), Target::Embedded)
    }

    /// Parses one `--server` value.
    pub fn parse(spec: &str) -> Result<Self, Error> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(Error::BadSpec {
                spec: spec.to_owned(),
                why: "it is empty".to_owned(),
            });
        }
        // `NAME=` when the part before the first `=` is a whole name; `cmd --a=b` is a
        // command line. A leading `VAR=value` is read as a name: use `env VAR=value cmd`.
        let (name, rest) = match spec
            .split_once('=')
            .map(|(n, r)| (ServerName::parse(n), n, r))
        {
            Some((Ok(n), _, rest)) if !rest.trim().is_empty() => (Some(n), rest.trim()),
            Some((Ok(_), n, _)) => {
                return Err(Error::BadSpec {
                    spec: spec.to_owned(),
                    why: format!("nothing follows `{n}=`"),
                });
            }
            _ => (None, spec),
        };
        let lower = rest.to_ascii_lowercase();
        let target = if lower.starts_with("ws://") || lower.starts_with("wss://") {
            Target::WebSocket(rest.to_owned())
        } else if lower.starts_with("http://") || lower.starts_with("https://") {
            Target::Http(rest.to_owned())
        } else if lower.contains("://") {
            return Err(Error::BadSpec {
                spec: spec.to_owned(),
                why: "only ws://, wss://, http:// and https:// URLs are supported".to_owned(),
            });
        } else {
            Target::Command(rest.to_owned())
        };
        let name = name.unwrap_or_else(|| derive_name(&target));
        Ok(ServerSpec::new(name, target))
    }

    /// Parses every `--server` value; none means the embedded arcade. Repeated names get a
    /// numeric suffix so every server stays addressable.
    pub fn parse_all<S: AsRef<str>>(specs: &[S]) -> Result<Vec<Self>, Error> {
        if specs.is_empty() {
            return Ok(vec![ServerSpec::embedded()]);
        }
        let mut out: Vec<ServerSpec> = Vec::new();
        for s in specs {
            let mut spec = ServerSpec::parse(s.as_ref())?;
            let base = spec.name.clone();
            let mut n = 2;
            while out.iter().any(|o| o.name == spec.name) {
                let suffix = format!("-{n}");
                let keep = 32 - suffix.len();
                spec.name =
                    ServerName::sanitized(&format!("{}{suffix}", &base[..base.len().min(keep)]));
                n += 1;
            }
            out.push(spec);
        }
        Ok(out)
    }
}

/// The default name: the program's file name for a command, the host for a URL.
fn derive_name(target: &Target) -> ServerName {
    match target {
        Target::Command(line) => program_name(line.split_whitespace().next().unwrap_or("server")),
        Target::Exec { program, .. } => program_name(program),
        Target::WebSocket(url) | Target::Http(url) => {
            let after = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
            let host = after.split(['/', ':', '?']).next().unwrap_or(after);
            ServerName::sanitized(&host.replace('.', "-"))
        }
        Target::Embedded => ServerName::sanitized("arcade"),
    }
}

/// A program's file name without its extension, as a server name.
fn program_name(program: &str) -> ServerName {
    let file = program.rsplit('/').next().unwrap_or(program);
    let stem = file.split('.').next().unwrap_or(file);
    ServerName::sanitized(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_is_named_after_its_program() {
        let s = ServerSpec::parse("/usr/bin/python3 -m games --level=2").unwrap();
        assert_eq!(s.name, "python3");
        assert_eq!(
            s.target,
            Target::Command("/usr/bin/python3 -m games --level=2".into())
        );
    }

    #[test]
    fn a_name_prefix_is_taken_only_when_it_is_a_whole_name() {
        let s = ServerSpec::parse("go=mcpl arcade").unwrap();
        assert_eq!(s.name, "go");
        assert_eq!(s.target, Target::Command("mcpl arcade".into()));
        // `--a=b` inside a command line is no name: the part before `=` has spaces.
        let s = ServerSpec::parse("mcpl arcade --listen=x").unwrap();
        assert_eq!(s.name, "mcpl");
        // A leading `WORD=` is always the name; set variables with `env VAR=value cmd`.
        let s = ServerSpec::parse("games=env RUST_LOG=debug mcpl arcade").unwrap();
        assert_eq!(s.name, "games");
        assert_eq!(
            s.target,
            Target::Command("env RUST_LOG=debug mcpl arcade".into())
        );
    }

    #[test]
    fn urls_pick_their_transport_and_are_named_after_the_host() {
        let s = ServerSpec::parse("ws://games.example.org:9000/mcp").unwrap();
        assert_eq!(
            s.target,
            Target::WebSocket("ws://games.example.org:9000/mcp".into())
        );
        assert_eq!(s.name, "games-example-org");
        let s = ServerSpec::parse("chess=http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(s.name, "chess");
        assert_eq!(s.target, Target::Http("http://127.0.0.1:8080/mcp".into()));
    }

    #[test]
    fn bad_specs_are_refused_naming_the_spec() {
        let err = ServerSpec::parse("ftp://x").unwrap_err().to_string();
        assert!(err.contains("ftp://x"), "{err}");
        let err = ServerSpec::parse("go=").unwrap_err().to_string();
        assert!(err.contains("go="), "{err}");
        assert!(ServerSpec::parse("  ").is_err());
    }

    #[test]
    fn no_spec_means_the_embedded_arcade_and_repeats_get_suffixes() {
        let none: [&str; 0] = [];
        assert_eq!(
            ServerSpec::parse_all(&none).unwrap(),
            vec![ServerSpec::embedded()]
        );
        let two = ServerSpec::parse_all(&["mcpl arcade", "mcpl arcade"]).unwrap();
        assert_eq!(two[0].name, "mcpl");
        assert_eq!(two[1].name, "mcpl-2");
    }

    #[test]
    fn a_repeated_name_of_the_longest_length_is_cut_to_fit_its_suffix() {
        let long = "abcdefghijklmnopqrstuvwxyz012345";
        assert_eq!(long.len(), 32);
        let line = format!("{long}=cat");
        let specs = ServerSpec::parse_all(&[line.as_str(), line.as_str(), line.as_str()]).unwrap();
        assert_eq!(specs[0].name, long);
        assert_eq!(specs[1].name, "abcdefghijklmnopqrstuvwxyz0123-2");
        assert_eq!(specs[2].name, "abcdefghijklmnopqrstuvwxyz0123-3");
    }
}
