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
use crate::spec::{ServerSpec, Target, check_name};

/// What is wrong with a config file, naming the server and key; the `Display` is the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigProblem(pub String);

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
            why: why.0,
        })
    }

    /// Parses a config file's text; `var` looks up `${VAR}` values.
    pub fn parse(
        text: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<FileConfig, ConfigProblem> {
        FileConfig::read(text, var).map_err(ConfigProblem)
    }

    fn read(text: &str, var: impl Fn(&str) -> Option<String>) -> Result<FileConfig, String> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| format!("it is not valid JSON: {e}"))?;
        let root = root.as_object().ok_or("the top level must be an object")?;
        let servers = root
            .get("mcpServers")
            .ok_or("it has no `mcpServers` object")?
            .as_object()
            .ok_or("`mcpServers` must be an object")?;
        if servers.is_empty() {
            return Err("`mcpServers` names no server".to_owned());
        }
        let mut out = Vec::new();
        for (name, entry) in servers {
            let spec =
                entry_spec(name, entry, &var).map_err(|e| format!("server \"{name}\": {e}"))?;
            out.push(spec);
        }
        let inline_cap = match root.get("inlineCap") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|n| *n > 0)
                    .ok_or("`inlineCap` must be a positive number of bytes")?
                    as usize,
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
) -> Result<ServerSpec, String> {
    check_name(name)?;
    let entry = entry.as_object().ok_or("the entry must be an object")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand(s, var)
                .map(Some)
                .map_err(|e| format!("`{key}`: {e}")),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let kind = text("type")?;
    let target = match (text("command")?, text("url")?) {
        (Some(_), Some(_)) => return Err("give `command` or `url`, not both".to_owned()),
        (None, None) => return Err("it needs `command` or `url`".to_owned()),
        (Some(program), None) => {
            if !matches!(kind.as_deref(), None | Some("stdio")) {
                return Err(format!(
                    "`type` \"{}\" does not fit a `command`",
                    kind.unwrap_or_default()
                ));
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => expand(s, var).map_err(|e| format!("`args`: {e}")),
                        _ => Err("`args` must be an array of strings".to_owned()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` must be an array of strings".to_owned()),
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
                    return Err(format!("`url` \"{url}\" is not http(s):// or ws(s)://"));
                }
                (Some(k), _, _) => {
                    return Err(format!("`type` \"{k}\" does not fit `url` \"{url}\""));
                }
            }
        }
    };
    let mut spec = ServerSpec::new(name, target);
    spec.grouping = grouping(entry)?;
    spec.headers = pairs(entry, "headers", var)?;
    spec.env = pairs(entry, "env", var)?;
    spec.cwd = text("cwd")?.map(PathBuf::from);
    let is_url = matches!(spec.target, Target::Http(_) | Target::WebSocket(_));
    if is_url && (!spec.env.is_empty() || spec.cwd.is_some()) {
        return Err("`env` and `cwd` are for a `command`, not a `url`".to_owned());
    }
    if !is_url && !spec.headers.is_empty() {
        return Err("`headers` are for a `url`, not a `command`".to_owned());
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
                g.toolsets
                    .push((name.clone(), globs(v, &format!("toolsets.{name}"))?));
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
) -> Result<Vec<(String, String)>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => expand(s, var)
                    .map(|s| (k.clone(), s))
                    .map_err(|e| format!("`{key}.{k}`: {e}")),
                _ => Err(format!("`{key}.{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
}

/// Replaces every `${VAR}` from `var`; an unset variable is an error naming it.
fn expand(s: &str, var: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`${{` without a closing `}}` in \"{s}\""))?;
        let name = &after[..end];
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!("`${{{name}}}` is not a variable name"));
        }
        let value = var(name).ok_or_else(|| format!("environment variable {name} is not set"))?;
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
                ("zeta".to_owned(), vec!["z_*".to_owned()]),
                (
                    "alpha".to_owned(),
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
}
