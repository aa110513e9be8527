//! Host-side toolsets for plain MCP servers (servers that do not speak MCPL).
//!
//! The host puts a plain server's tools into toolsets that it keeps itself, as undeclared
//! groups (§5.4): the server knows nothing of them, opening and closing one sends nothing,
//! and the model's tool list holds only the tools left static. A [`Grouping`] is the
//! operator's configuration; at the server's first `tools/list` it is fixed into [`Rules`],
//! which place every tool of that and every later list. A server that later crosses the
//! static limit is not regrouped, so only changes to static tools change the model's list.
//!
//! # Rules
//!
//! - A tool matching a `static` glob stays static.
//! - With explicit toolsets, a tool goes to the first toolset (in configuration order) with a
//!   glob that matches it; a tool matching none stays static.
//! - Without them, a server that lists at most `static_limit` tools keeps them all static.
//!   One that lists more is grouped by shared name prefix: the name up to its first separator
//!   (`_`, `.`, `-`, `/`); a prefix shared by two or more tools is a toolset, every other tool
//!   goes to a toolset named after the server. When one prefix would hold every tool, the
//!   prefix runs to the second separator instead (if that makes two groups or more).
//!
//! # Names
//!
//! A toolset name follows the instance-name grammar: `[A-Za-z0-9][A-Za-z0-9_-]*`, at most 32
//! characters. A prefix that already does is used as it is; any other ([`toolset_name`]) has
//! each character outside the grammar replaced by `-`, leading `-`/`_` dropped, is cut to
//! 23 characters and ends with `-` and 8 hex digits of the SHA-256 of the original prefix, so
//! the mapping is deterministic and two different prefixes never share a name. The leftover
//! toolset is the server's name mapped the same way; a prefix group of that name holds the
//! leftovers too.

use std::collections::BTreeMap;

use mcpl_protocol::mcp::Tool;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::glob::glob;
use crate::names::ToolsetName;
use crate::text::{cut, first_sentence};

/// The default `static_limit`: a plain server with more tools than this is grouped.
pub const DEFAULT_STATIC_LIMIT: usize = 20;

/// The longest toolset name (the instance-name grammar's bound).
pub const MAX_TOOLSET_NAME: usize = 32;

/// The characters that end a name prefix.
pub const SEPARATORS: [char; 4] = ['_', '.', '-', '/'];

/// How a plain server's tools are grouped into host-side toolsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouping {
    /// Explicit toolsets, in configuration order: a name and its globs (`*` matches any run
    /// of characters). Empty: grouping is automatic.
    pub toolsets: Vec<(ToolsetName, Vec<String>)>,
    /// Globs of tools that stay static whatever else matches them.
    pub statics: Vec<String>,
    /// Without explicit toolsets, a server listing more tools than this is grouped by prefix.
    pub static_limit: usize,
    /// A call through act to a closed toolset's tool opens the toolset first instead of
    /// being refused.
    pub auto_open: bool,
}

impl Default for Grouping {
    fn default() -> Self {
        Grouping {
            toolsets: Vec::new(),
            statics: Vec::new(),
            static_limit: DEFAULT_STATIC_LIMIT,
            auto_open: false,
        }
    }
}

/// A grouping fixed at a server's first read: places every tool of every later list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    statics: Vec<String>,
    place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// Every tool not static goes to the first toolset with a matching glob.
    Explicit(Vec<(ToolsetName, Vec<String>)>),
    /// The server listed too few tools: every tool stays static.
    AllStatic,
    /// By name prefix of `depth` segments; `groups` maps a prefix to its toolset, `rest` is
    /// the toolset of every other tool.
    ByPrefix {
        depth: usize,
        groups: BTreeMap<String, ToolsetName>,
        rest: ToolsetName,
    },
}

/// Why a grouping configuration is refused; the `Display` is the text the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupingError {
    /// The same toolset named twice.
    #[error("toolset \"{0}\" is named twice")]
    Twice(ToolsetName),
    /// A toolset without globs, or with an empty one.
    #[error("toolset \"{0}\" needs one non-empty glob or more")]
    NoGlob(ToolsetName),
    /// An empty `static` glob.
    #[error("a `static` glob is empty")]
    EmptyStatic,
}

impl Grouping {
    /// Checks the configuration: toolset names unique, globs not empty.
    pub fn check(&self) -> Result<(), GroupingError> {
        let mut seen = std::collections::BTreeSet::new();
        for (name, globs) in &self.toolsets {
            if !seen.insert(name) {
                return Err(GroupingError::Twice(name.clone()));
            }
            if globs.is_empty() || globs.iter().any(String::is_empty) {
                return Err(GroupingError::NoGlob(name.clone()));
            }
        }
        if self.statics.iter().any(String::is_empty) {
            return Err(GroupingError::EmptyStatic);
        }
        Ok(())
    }

    /// Fixes the grouping for `server` from the names of its first list.
    pub fn fix(&self, server: &str, names: &[&str]) -> Rules {
        let place = if !self.toolsets.is_empty() {
            Place::Explicit(self.toolsets.clone())
        } else if names.len() <= self.static_limit {
            Place::AllStatic
        } else {
            let free: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| !self.statics.iter().any(|g| glob(g, n)))
                .collect();
            let mut depth = 1;
            let mut groups = shared_prefixes(&free, 1);
            if groups.len() == 1 && groups.values().next() == Some(&free.len()) {
                let deeper = shared_prefixes(&free, 2);
                if deeper.len() >= 2 {
                    depth = 2;
                    groups = deeper;
                }
            }
            Place::ByPrefix {
                depth,
                groups: groups
                    .into_keys()
                    .map(|p| {
                        let n = toolset_name(&p);
                        (p, n)
                    })
                    .collect(),
                rest: toolset_name(server),
            }
        };
        Rules {
            statics: self.statics.clone(),
            place,
        }
    }
}

impl Rules {
    /// The toolset a tool goes to, or `None` when it stays static.
    pub fn place(&self, tool: &str) -> Option<ToolsetName> {
        if self.statics.iter().any(|g| glob(g, tool)) {
            return None;
        }
        match &self.place {
            Place::Explicit(sets) => sets
                .iter()
                .find(|(_, globs)| globs.iter().any(|g| glob(g, tool)))
                .map(|(name, _)| name.clone()),
            Place::AllStatic => None,
            Place::ByPrefix {
                depth,
                groups,
                rest,
            } => Some(
                prefix(tool, *depth)
                    .and_then(|p| groups.get(p).cloned())
                    .unwrap_or_else(|| rest.clone()),
            ),
        }
    }
}

/// The first `depth` segments of `name` with their separators, when a separator follows
/// them (a name with no separator after them has no prefix).
pub fn prefix(name: &str, depth: usize) -> Option<&str> {
    let mut seen = 0;
    for (at, c) in name.char_indices() {
        if SEPARATORS.contains(&c) && at > 0 {
            seen += 1;
            if seen == depth {
                return (at + 1 < name.len()).then(|| &name[..at]);
            }
        }
    }
    None
}

/// Prefixes of `depth` segments shared by two tools or more, with their counts.
fn shared_prefixes(names: &[&str], depth: usize) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for n in names {
        if let Some(p) = prefix(n, depth) {
            *counts.entry(p.to_owned()).or_default() += 1;
        }
    }
    counts.retain(|_, n| *n >= 2);
    counts
}

/// A toolset name for free text (a name prefix or a server name); see the module doc.
pub fn toolset_name(raw: &str) -> ToolsetName {
    if let Ok(name) = ToolsetName::parse(raw) {
        return name;
    }
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_start_matches(['-', '_']);
    let head = if clean.is_empty() { "tools" } else { clean };
    let digest = Sha256::digest(raw.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mapped = format!("{}-{hash}", cut(head, MAX_TOOLSET_NAME - 9));
    // Letters, digits, `_` and `-` only, starting with a letter or digit, 32 at most.
    ToolsetName::parse(&mapped).expect("a mapped toolset name fits the grammar")
}

/// A host-side toolset's description, built from its tools': how many, their names, and the
/// first sentences of the first few descriptions, bounded.
pub fn summary<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> String {
    let tools: Vec<&Tool> = tools.into_iter().collect();
    let names: Vec<&str> = tools.iter().take(8).map(|t| t.name.as_str()).collect();
    let more = if tools.len() > names.len() {
        ", …"
    } else {
        ""
    };
    let mut text = format!(
        "{} tool{}: {}{more}",
        tools.len(),
        if tools.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    let sentences: Vec<String> = tools
        .iter()
        .filter_map(|t| first_sentence(t.description.as_ref()))
        .take(3)
        .collect();
    if !sentences.is_empty() {
        text.push_str(". ");
        text.push_str(&sentences.join(" "));
    }
    const MAX: usize = 400;
    if text.len() > MAX {
        text = format!("{}…", cut(&text, MAX));
    }
    text
}

/// The description of a tool as text, when it is a string.
pub fn description(tool: &Tool) -> Option<&str> {
    tool.description.as_ref().and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(name: &str) -> ToolsetName {
        ToolsetName::parse(name).unwrap()
    }

    fn auto(limit: usize) -> Grouping {
        Grouping {
            static_limit: limit,
            ..Grouping::default()
        }
    }

    #[test]
    fn shared_prefixes_become_toolsets_and_leftovers_go_to_the_server_toolset() {
        let names = [
            "git_status",
            "git_commit",
            "fs.read",
            "fs.write",
            "fs/list",
            "web-fetch",
            "web-search",
            "ping",
        ];
        let rules = auto(3).fix("box", &names);
        let placed: Vec<Option<String>> = names
            .iter()
            .map(|n| rules.place(n).map(String::from))
            .collect();
        let want = [
            "git", "git", "fs", "fs", "fs", "web", "web", "box", // fs/list: prefix fs
        ];
        assert_eq!(
            placed,
            want.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>()
        );
        // A tool seen later follows the fixed rules: its prefix's toolset or the leftovers.
        assert_eq!(rules.place("git_push").as_deref(), Some("git"));
        assert_eq!(rules.place("db_query").as_deref(), Some("box"));
    }

    #[test]
    fn at_or_under_the_static_limit_every_tool_stays_static_and_is_not_regrouped() {
        let rules = auto(3).fix("box", &["a_1", "a_2", "a_3"]);
        for n in ["a_1", "a_2", "a_3", "a_4", "b_1"] {
            assert_eq!(rules.place(n), None, "{n}");
        }
    }

    #[test]
    fn one_prefix_holding_every_tool_splits_at_the_second_separator() {
        let names = [
            "gh_issue_list",
            "gh_issue_get",
            "gh_pr_list",
            "gh_pr_merge",
            "gh_whoami",
        ];
        let rules = auto(2).fix("github", &names);
        assert_eq!(rules.place("gh_issue_get").as_deref(), Some("gh_issue"));
        assert_eq!(rules.place("gh_pr_merge").as_deref(), Some("gh_pr"));
        assert_eq!(rules.place("gh_whoami").as_deref(), Some("github"));
    }

    #[test]
    fn explicit_globs_first_match_wins_static_wins_over_all_unmatched_stays_static() {
        let g = Grouping {
            toolsets: vec![
                (ts("files"), vec!["fs_*".into(), "*_file".into()]),
                (ts("all"), vec!["*".into()]),
            ],
            statics: vec!["fs_read".into()],
            ..Grouping::default()
        };
        g.check().unwrap();
        let rules = g.fix("s", &["fs_read"]);
        assert_eq!(rules.place("fs_read"), None);
        assert_eq!(rules.place("fs_write").as_deref(), Some("files"));
        assert_eq!(rules.place("open_file").as_deref(), Some("files"));
        assert_eq!(rules.place("other").as_deref(), Some("all"));
        let only = Grouping {
            toolsets: vec![(ts("files"), vec!["fs_*".into()])],
            ..Grouping::default()
        };
        assert_eq!(only.fix("s", &[]).place("other"), None);
    }

    /// A configured toolset name is a [`ToolsetName`]: one outside the grammar is refused
    /// where the configuration is read (`mcpl-surface`'s config), before a `Grouping` exists.
    #[test]
    fn bad_explicit_toolsets_are_refused_naming_the_problem() {
        for (sets, want) in [
            (vec![(ts("x"), vec![])], "glob"),
            (vec![(ts("x"), vec![String::new()])], "glob"),
            (
                vec![
                    (ts("x"), vec!["a".to_owned()]),
                    (ts("x"), vec!["b".to_owned()]),
                ],
                "twice",
            ),
        ] {
            let g = Grouping {
                toolsets: sets,
                ..Grouping::default()
            };
            let err = g.check().unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn toolset_names_fit_the_grammar_are_deterministic_and_collision_free() {
        let raws = [
            "git",
            "fs.v2",
            "fs-v2",
            "fs_v2",
            "fs/v2",
            "_hidden",
            ".",
            "résumé",
            &"a".repeat(32),
            &"a".repeat(33),
            &"a".repeat(128),
            &format!("{}.x", "a".repeat(40)),
            &format!("{}.y", "a".repeat(40)),
        ];
        let mut seen = std::collections::BTreeMap::new();
        for raw in raws {
            let name = toolset_name(raw);
            assert!(
                mcpl_protocol::rfc014::check_name("instance", &name).is_ok(),
                "{raw} -> {name}"
            );
            assert!(name.len() <= MAX_TOOLSET_NAME);
            assert_eq!(name, toolset_name(raw), "deterministic");
            if let Some(other) = seen.insert(name.clone(), raw) {
                panic!("{raw} and {other} share {name}");
            }
        }
        assert_eq!(toolset_name("git"), "git");
        assert_eq!(toolset_name("fs-v2"), "fs-v2");
        assert!(toolset_name("fs.v2").starts_with("fs-v2-"));
    }

    #[test]
    fn prefixes_stop_at_any_separator_and_need_a_rest() {
        assert_eq!(prefix("git_status", 1), Some("git"));
        assert_eq!(prefix("fs.read", 1), Some("fs"));
        assert_eq!(prefix("web-fetch", 1), Some("web"));
        assert_eq!(prefix("repo/issues/list", 1), Some("repo"));
        assert_eq!(prefix("repo/issues/list", 2), Some("repo/issues"));
        assert_eq!(prefix("ping", 1), None);
        assert_eq!(prefix("trailing_", 1), None);
        assert_eq!(prefix("_lead", 1), None);
    }

    #[test]
    fn a_summary_names_the_tools_and_their_first_sentences_bounded() {
        let mut a = Tool::new("git_status");
        a.description = Some(serde_json::json!("Show the working tree status. Long."));
        let b = Tool::new("git_commit");
        let s = summary([&a, &b]);
        assert_eq!(
            s,
            "2 tools: git_status, git_commit. Show the working tree status."
        );
        let many: Vec<Tool> = (0..50)
            .map(|i| {
                let mut t = Tool::new(format!("t{i}"));
                t.description = Some(serde_json::json!("x".repeat(300)));
                t
            })
            .collect();
        assert!(summary(&many).len() <= 400 + '…'.len_utf8());
    }
}
