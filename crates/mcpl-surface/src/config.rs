//! Backends from a config file in the `mcpServers` shape that Claude Code, Claude Desktop,
//! Cursor and VS Code use.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "arcade": { "url": "https://games.example.org/mcp",
//!                 "headers": { "Authorization": "Bearer ${ARCADE_TOKEN}" } },
//!     "notes":  { "command": "notes-server", "args": ["--db", "notes.db"],
//!                 "env": { "NOTES_KEY": "${NOTES_KEY}" }, "cwd": "/srv/notes" }
//!   },
//!   "inlineCap": 16000
//! }
//! ```
//!
//! An entry has either `command` (with optional `args`, `env`, `cwd`: a child on stdio) or
//! `url` (with optional `headers`): `http(s)://` is Streamable HTTP, `ws(s)://` WebSocket. An
//! optional `type` (`stdio`, `http`, `streamable-http`, `sse`, `ws`, `websocket`) is accepted
//! as those clients write it and must agree with the entry. `${VAR}` in any string value is
//! replaced from the environment; an unset variable is an error naming it, so a secret never
//! becomes an empty `Bearer `. `inlineCap` is the surface's inline cap in bytes (H84).
//!
//! A plain server's entry may group its tools into host-side toolsets (see
//! `mcpl_host::grouping`): `"toolsets": {"NAME": ["GLOB", ...]}`, `"static": ["GLOB", ...]`
//! and `"autoOpen": true` (act on a closed toolset's tool opens it instead of refusing).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Error;
use mcpl_host::{BadServerName, ServerName};

use crate::spec::{ServerSpec, Target};

/// What is wrong with a config file; the `Display` is the text the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// The file is not JSON (the parser's words).
    #[error("it is not valid JSON: {0}")]
    NotJson(String),
    /// The top level is not an object.
    #[error("the top level must be an object")]
    TopNotObject,
    /// There is no `mcpServers`.
    #[error("it has no `mcpServers` object")]
    NoServers,
    /// `mcpServers` is not an object.
    #[error("`mcpServers` must be an object")]
    ServersNotObject,
    /// `mcpServers` is empty.
    #[error("`mcpServers` names no server")]
    NoServerNamed,
    /// One entry is wrong.
    #[error("server \"{server}\": {problem}")]
    Server {
        /// The entry's key, as written.
        server: String,
        /// What is wrong with it.
        problem: EntryProblem,
    },
    /// `inlineCap` is not a positive number.
    #[error("`inlineCap` must be a positive number of bytes")]
    BadInlineCap,
}

/// What is wrong with one `mcpServers` entry; the `Display` names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// The entry's key is no server name.
    #[error("{0}")]
    BadName(BadServerName),
    /// The entry is not an object.
    #[error("the entry must be an object")]
    NotObject,
    /// A `${VAR}` in a value could not be expanded.
    #[error("`{key}`: {problem}")]
    Expand {
        /// The key (`headers.NAME` for a member).
        key: String,
        /// Why.
        problem: ExpandProblem,
    },
    /// A value that must be a string is not.
    #[error("`{key}` must be a string")]
    NotString {
        /// The key (`headers.NAME` for a member).
        key: String,
    },
    /// Both `command` and `url`.
    #[error("give `command` or `url`, not both")]
    CommandAndUrl,
    /// Neither `command` nor `url`.
    #[error("it needs `command` or `url`")]
    NoTarget,
    /// A `type` that is not for a command.
    #[error("`type` \"{kind}\" does not fit a `command`")]
    TypeNotCommand {
        /// The `type` given.
        kind: String,
    },
    /// `args` is not an array of strings.
    #[error("`args` must be an array of strings")]
    ArgsNotStrings,
    /// A `url` with another scheme.
    #[error("`url` \"{url}\" is not http(s):// or ws(s)://")]
    BadUrl {
        /// The URL given.
        url: String,
    },
    /// A `type` that does not fit the URL's scheme.
    #[error("`type` \"{kind}\" does not fit `url` \"{url}\"")]
    TypeNotUrl {
        /// The `type` given.
        kind: String,
        /// The URL given.
        url: String,
    },
    /// `headers` or `env` is not an object of strings.
    #[error("`{key}` must be an object of strings")]
    NotObjectOfStrings {
        /// `headers` or `env`.
        key: String,
    },
    /// `env` or `cwd` on a URL entry.
    #[error("`env` and `cwd` are for a `command`, not a `url`")]
    EnvOnUrl,
    /// `headers` on a command entry.
    #[error("`headers` are for a `url`, not a `command`")]
    HeadersOnCommand,
    /// `ca` on a command entry.
    #[error("`ca` is for an `https://` or `wss://` `url`, not a `command`")]
    CaOnCommand,
    /// `toolsets`, `static` or `autoOpen` is wrong; the text names the key.
    #[error("{0}")]
    Grouping(String),
}

/// Why a `${VAR}` could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpandProblem {
    /// `${` without `}`.
    #[error("`${{` without a closing `}}` in \"{text}\"")]
    Unclosed {
        /// The value as written.
        text: String,
    },
    /// `${...}` holds no variable name.
    #[error("`${{{name}}}` is not a variable name")]
    BadVariable {
        /// What the braces hold.
        name: String,
    },
    /// The variable is not set (never expanded to an empty string).
    #[error("environment variable {name} is not set")]
    Unset {
        /// The variable.
        name: String,
    },
}

/// What a config file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileConfig {
    /// The backends, in the file's order.
    pub servers: Vec<ServerSpec>,
    /// `inlineCap`, when the file sets it.
    pub inline_cap: Option<usize>,
}

impl FileConfig {
    /// Reads and checks a config file, expanding `${VAR}` from the process environment.
    pub fn load(path: &Path) -> Result<FileConfig, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.to_owned(),
            why: format!("cannot read it: {e}"),
        })?;
        FileConfig::parse(&text, |v| std::env::var(v).ok()).map_err(|why| Error::Config {
            path: path.to_owned(),
            why: why.to_string(),
        })
    }

    /// Parses a config file's text; `var` looks up `${VAR}` values.
    pub fn parse(
        text: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<FileConfig, ConfigProblem> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| ConfigProblem::NotJson(e.to_string()))?;
        let root = root.as_object().ok_or(ConfigProblem::TopNotObject)?;
        let servers = root
            .get("mcpServers")
            .ok_or(ConfigProblem::NoServers)?
            .as_object()
            .ok_or(ConfigProblem::ServersNotObject)?;
        if servers.is_empty() {
            return Err(ConfigProblem::NoServerNamed);
        }
        let mut out = Vec::new();
        for (name, entry) in servers {
            let spec = entry_spec(name, entry, &var).map_err(|problem| ConfigProblem::Server {
                server: name.clone(),
                problem,
            })?;
            out.push(spec);
        }
        let inline_cap = match root.get("inlineCap") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|n| *n > 0)
                    .ok_or(ConfigProblem::BadInlineCap)? as usize,
            ),
        };
        Ok(FileConfig {
            servers: out,
            inline_cap,
        })
    }
}

fn entry_spec(
    name: &str,
    entry: &Value,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<ServerSpec, EntryProblem> {
    let name = ServerName::parse(name).map_err(EntryProblem::BadName)?;
    let entry = entry.as_object().ok_or(EntryProblem::NotObject)?;
    let text = |key: &str| match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            expand(s, var)
                .map(Some)
                .map_err(|problem| EntryProblem::Expand {
                    key: key.to_owned(),
                    problem,
                })
        }
        Some(_) => Err(EntryProblem::NotString {
            key: key.to_owned(),
        }),
    };
    let kind = text("type")?;
    let target = match (text("command")?, text("url")?) {
        (Some(_), Some(_)) => return Err(EntryProblem::CommandAndUrl),
        (None, None) => return Err(EntryProblem::NoTarget),
        (Some(program), None) => {
            if !matches!(kind.as_deref(), None | Some("stdio")) {
                return Err(EntryProblem::TypeNotCommand {
                    kind: kind.unwrap_or_default(),
                });
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => {
                            expand(s, var).map_err(|problem| EntryProblem::Expand {
                                key: "args".to_owned(),
                                problem,
                            })
                        }
                        _ => Err(EntryProblem::ArgsNotStrings),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(EntryProblem::ArgsNotStrings),
            };
            Target::Exec { program, args }
        }
        (None, Some(url)) => {
            let lower = url.to_ascii_lowercase();
            let ws = lower.starts_with("ws://") || lower.starts_with("wss://");
            let http = lower.starts_with("http://") || lower.starts_with("https://");
            match (kind.as_deref(), ws, http) {
                (None | Some("ws" | "websocket"), true, _) => Target::WebSocket(url),
                (None | Some("http" | "streamable-http" | "streamableHttp" | "sse"), _, true) => {
                    Target::Http(url)
                }
                (_, false, false) => {
                    return Err(EntryProblem::BadUrl { url });
                }
                (Some(k), _, _) => {
                    return Err(EntryProblem::TypeNotUrl {
                        kind: k.to_owned(),
                        url,
                    });
                }
            }
        }
    };
    let mut spec = ServerSpec::new(name, target);
    spec.grouping = grouping(entry).map_err(EntryProblem::Grouping)?;
    spec.headers = pairs(entry, "headers", var)?;
    spec.env = pairs(entry, "env", var)?;
    spec.cwd = text("cwd")?.map(PathBuf::from);
    spec.ca = text("ca")?.map(PathBuf::from);
    let is_url = matches!(spec.target, Target::Http(_) | Target::WebSocket(_));
    if is_url && (!spec.env.is_empty() || spec.cwd.is_some()) {
        return Err(EntryProblem::EnvOnUrl);
    }
    if !is_url && !spec.headers.is_empty() {
        return Err(EntryProblem::HeadersOnCommand);
    }
    if !is_url && spec.ca.is_some() {
        return Err(EntryProblem::CaOnCommand);
    }
    Ok(spec)
}

/// The entry's `toolsets`, `static` and `autoOpen`.
fn grouping(entry: &Map<String, Value>) -> Result<mcpl_host::Grouping, String> {
    let globs = |v: &Value, key: &str| -> Result<Vec<String>, String> {
        v.as_array()
            .and_then(|a| a.iter().map(|g| g.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| format!("`{key}` must be an array of glob strings"))
    };
    let mut g = mcpl_host::Grouping::default();
    match entry.get("toolsets") {
        None | Some(Value::Null) => {}
        Some(Value::Object(sets)) => {
            for (name, v) in sets {
                let toolset =
                    mcpl_host::ToolsetName::parse(name).map_err(|e| format!("`toolsets`: {e}"))?;
                g.toolsets
                    .push((toolset, globs(v, &format!("toolsets.{name}"))?));
            }
        }
        Some(_) => return Err("`toolsets` must be an object of glob arrays".to_owned()),
    }
    if let Some(v) = entry.get("static").filter(|v| !v.is_null()) {
        g.statics = globs(v, "static")?;
    }
    match entry.get("autoOpen") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => g.auto_open = *b,
        Some(_) => return Err("`autoOpen` must be true or false".to_owned()),
    }
    g.check().map_err(|e| format!("`toolsets`: {e}"))?;
    Ok(g)
}

fn pairs(
    entry: &Map<String, Value>,
    key: &str,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, EntryProblem> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => {
            m.iter()
                .map(|(k, v)| match v {
                    Value::String(s) => expand(s, var).map(|s| (k.clone(), s)).map_err(|problem| {
                        EntryProblem::Expand {
                            key: format!("{key}.{k}"),
                            problem,
                        }
                    }),
                    _ => Err(EntryProblem::NotString {
                        key: format!("{key}.{k}"),
                    }),
                })
                .collect()
        }
        Some(_) => Err(EntryProblem::NotObjectOfStrings {
            key: key.to_owned(),
        }),
    }
}

/// Replaces every `${VAR}` from `var`; an unset variable is an error naming it.
fn expand(s: &str, var: &impl Fn(&str) -> Option<String>) -> Result<String, ExpandProblem> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ExpandProblem::Unclosed { text: s.to_owned() })?;
        let name = &after[..end];
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(ExpandProblem::BadVariable {
                name: name.to_owned(),
            });
        }
        let value = var(name).ok_or_else(|| ExpandProblem::Unset {
            name: name.to_owned(),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn entries_become_specs_with_headers_env_and_cwd() {
        let text = r#"{"mcpServers": {
            "games": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "chess": {"type": "ws", "url": "ws://127.0.0.1:9/"},
            "notes": {"command": "notes", "args": ["--key", "${TOKEN}"], "env": {"K": "v"}, "cwd": "/tmp"}
        }, "inlineCap": 5000}"#;
        let c = FileConfig::parse(text, env).unwrap();
        assert_eq!(c.inline_cap, Some(5000));
        assert_eq!(c.servers.len(), 3);
        let by = |n: &str| c.servers.iter().find(|s| s.name == n).unwrap();
        let games = by("games");
        assert_eq!(games.target, Target::Http("http://127.0.0.1:9/mcp".into()));
        assert_eq!(
            games.headers,
            vec![("Authorization".to_owned(), "Bearer s3cret".to_owned())]
        );
        assert_eq!(
            by("chess").target,
            Target::WebSocket("ws://127.0.0.1:9/".into())
        );
        let notes = by("notes");
        assert_eq!(
            notes.target,
            Target::Exec {
                program: "notes".into(),
                args: vec!["--key".into(), "s3cret".into()]
            }
        );
        assert_eq!(notes.env, vec![("K".to_owned(), "v".to_owned())]);
        assert_eq!(notes.cwd, Some(PathBuf::from("/tmp")));
    }

    #[test]
    fn toolsets_static_and_auto_open_group_a_plain_server_in_file_order() {
        let text = r#"{"mcpServers": {"box": {"command": "box",
            "toolsets": {"zeta": ["z_*"], "alpha": ["a_*", "*.md"]},
            "static": ["a_keep"], "autoOpen": true}}}"#;
        let c = FileConfig::parse(text, env).unwrap();
        let g = &c.servers[0].grouping;
        assert_eq!(
            g.toolsets,
            vec![
                (
                    mcpl_host::ToolsetName::parse("zeta").unwrap(),
                    vec!["z_*".to_owned()]
                ),
                (
                    mcpl_host::ToolsetName::parse("alpha").unwrap(),
                    vec!["a_*".to_owned(), "*.md".to_owned()]
                ),
            ]
        );
        assert_eq!(g.statics, vec!["a_keep".to_owned()]);
        assert!(g.auto_open);
        let plain = FileConfig::parse(r#"{"mcpServers": {"b": {"command": "b"}}}"#, env).unwrap();
        assert_eq!(plain.servers[0].grouping, mcpl_host::Grouping::default());
    }

    #[test]
    fn bad_grouping_keys_are_refused_naming_the_server_and_key() {
        for (entry, want) in [
            (r#""toolsets": ["a"]"#, "`toolsets` must be an object"),
            (
                r#""toolsets": {"a": "x_*"}"#,
                "`toolsets.a` must be an array",
            ),
            (r#""toolsets": {"bad name": ["x"]}"#, "bad name"),
            (r#""toolsets": {"-x": ["x"]}"#, "-x"),
            (r#""toolsets": {"a": []}"#, "glob"),
            (r#""static": "x""#, "`static` must be an array"),
            (r#""autoOpen": "yes""#, "`autoOpen` must be true or false"),
        ] {
            let text = format!(r#"{{"mcpServers": {{"box": {{"command": "b", {entry}}}}}}}"#);
            let err = FileConfig::parse(&text, env).unwrap_err().to_string();
            assert!(
                err.contains(want) && err.contains("server \"box\""),
                "{entry}: {err}"
            );
        }
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_it_never_an_empty_value() {
        let text = r#"{"mcpServers": {"games": {"url": "http://h/mcp",
            "headers": {"Authorization": "Bearer ${MISSING_TOKEN}"}}}}"#;
        let err = FileConfig::parse(text, env).unwrap_err().to_string();
        assert!(
            err.contains("MISSING_TOKEN") && err.contains("not set"),
            "{err}"
        );
        assert!(err.contains("server \"games\""), "{err}");
    }

    #[test]
    fn env_or_cwd_alone_on_a_url_is_refused() {
        for extra in [r#""env": {"A": "b"}"#, r#""cwd": "/tmp""#] {
            let text = format!(r#"{{"mcpServers": {{"g": {{"url": "http://h/mcp", {extra}}}}}}}"#);
            let err = FileConfig::parse(&text, env).unwrap_err().to_string();
            assert!(err.contains("not a `url`"), "{extra}: {err}");
        }
    }

    #[test]
    fn a_variable_name_is_letters_digits_and_underscores_not_starting_with_a_digit() {
        let expand_env = |v: &str| {
            let text = format!(
                r#"{{"mcpServers": {{"g": {{"url": "http://h/mcp",
                "headers": {{"A": "${{{v}}}"}}}}}}}}"#
            );
            FileConfig::parse(&text, |_: &str| Some("x".to_owned()))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        for good in ["TOKEN", "_T", "A_1"] {
            assert!(expand_env(good).is_ok(), "{good}: {:?}", expand_env(good));
        }
        for bad in ["1A", "9", "A-B", "A B", ""] {
            let err = expand_env(bad).unwrap_err();
            assert!(err.contains("is not a variable name"), "{bad}: {err}");
        }
    }

    #[test]
    fn bad_entries_are_refused_naming_the_server_and_the_problem() {
        for (text, want) in [
            (r#"{"mcpServers": {"a": {}}}"#, "needs `command` or `url`"),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://x"}}}"#,
                "not http(s):// or ws(s)://",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "ws", "url": "http://x"}}}"#,
                "does not fit",
            ),
            (
                r#"{"mcpServers": {"a b": {"command": "x"}}}"#,
                "server name",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}"#,
                "for a `url`",
            ),
            (r#"{"servers": {}}"#, "no `mcpServers`"),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "inlineCap": 0}"#,
                "inlineCap",
            ),
        ] {
            let err = FileConfig::parse(text, env).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn a_problem_is_typed_and_its_text_names_the_server_and_key() {
        let text = r#"{"mcpServers": {"games": {"url": "http://h/mcp",
            "headers": {"Authorization": "Bearer ${MISSING_TOKEN}"}}}}"#;
        let err = FileConfig::parse(text, env).unwrap_err();
        assert_eq!(
            err,
            ConfigProblem::Server {
                server: "games".to_owned(),
                problem: EntryProblem::Expand {
                    key: "headers.Authorization".to_owned(),
                    problem: ExpandProblem::Unset {
                        name: "MISSING_TOKEN".to_owned()
                    },
                },
            }
        );
        assert_eq!(
            err.to_string(),
            "server \"games\": `headers.Authorization`: environment variable MISSING_TOKEN is not set"
        );
        let err =
            FileConfig::parse(r#"{"mcpServers": {"a b": {"command": "x"}}}"#, env).unwrap_err();
        assert!(
            matches!(&err, ConfigProblem::Server { problem: EntryProblem::BadName(b), .. } if b.name == "a b"),
            "{err:?}"
        );
    }

    #[test]
    fn a_ca_file_is_taken_for_a_url_and_refused_for_a_command() {
        let text = r#"{"mcpServers": {"games": {"url": "https://h/mcp", "ca": "/etc/ca.pem"}}}"#;
        let c = FileConfig::parse(text, env).unwrap();
        assert_eq!(c.servers[0].ca, Some(PathBuf::from("/etc/ca.pem")));
        let text = r#"{"mcpServers": {"notes": {"command": "notes", "ca": "/etc/ca.pem"}}}"#;
        let err = FileConfig::parse(text, env).unwrap_err();
        assert!(
            matches!(
                &err,
                ConfigProblem::Server {
                    problem: EntryProblem::CaOnCommand,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
