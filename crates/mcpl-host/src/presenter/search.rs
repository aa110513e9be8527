//! Look's search (`toolsets_look {query}`): every server's toolsets and tools, open or
//! closed, MCPL or plain, ranked by BM25 over their names and descriptions.
//!
//! A tool's document is its name, its toolset's name and its description; a toolset's is
//! its name, title and summary (a host-side toolset's summary is built from its tools').
//! Words are lowercase runs of letters and digits (so `git_status` is `git` and `status`),
//! with a plural `s` dropped. Equal scores keep a fixed order: server, then toolsets before
//! tools, then name. Each hit names its toolset and the exact call that opens it.

use std::collections::BTreeMap;

use mcpl_protocol::rfc014::Presence;
use serde_json::json;

use super::meta_tools::META_ACT;
use super::notice::quote;
use super::refusal::open_call;
use super::render::first_sentence;
use super::state::Presenter;
use crate::grouping;
use crate::names::{ServerName, ToolsetName};

/// The most hits a search returns.
pub const SEARCH_TOP: usize = 8;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

/// What a hit is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A toolset (sorts before tools on equal scores).
    Toolset(ToolsetName),
    /// A tool, with its toolset if it has one.
    Tool(Option<ToolsetName>),
}

/// One toolset or tool as search reads it: where it is, what it is, and its words.
#[derive(Debug)]
struct Doc {
    server: ServerName,
    kind: Kind,
    name: String,
    words: Vec<String>,
}

/// Lowercase runs of letters and digits, a trailing plural `s` dropped.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.chars().count() >= 3 && !stem.ends_with(['s', 'u']) => {
                    stem.to_owned()
                }
                _ => w,
            }
        })
        .collect()
}

/// BM25 scores of `docs` for `query`, in `docs` order.
fn bm25(docs: &[Vec<String>], query: &[String]) -> Vec<f64> {
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: BTreeMap<&str, f64> = BTreeMap::new();
    for d in docs {
        let mut seen: Vec<&str> = d.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_default() += 1.0;
        }
    }
    docs.iter()
        .map(|d| {
            let len = d.len() as f64;
            query
                .iter()
                .map(|q| {
                    let tf = d.iter().filter(|w| *w == q).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let df = df.get(q.as_str()).copied().unwrap_or(0.0);
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg.max(1.0)))
                })
                .sum()
        })
        .collect()
}

// `Doc`'s methods take the presenter, not `impl Presenter` methods taking a `Doc`: tools that
// count an impl's methods as part of the module defining the type (cargo-modules) would
// otherwise see the presenter's module name this one, which names it.
impl Doc {
    /// Every server's toolsets and tools as documents, in the presenter's server order.
    fn all(p: &Presenter) -> Vec<Doc> {
        let mut docs = Vec::new();
        for (id, e) in &p.servers {
            let snap = &e.snap;
            for ts in snap.toolset_names() {
                let mut text = ts.to_string();
                if let Some(d) = snap.declared().get(ts) {
                    for t in [&d.title, &d.summary].into_iter().flatten() {
                        text.push(' ');
                        text.push_str(t);
                    }
                }
                docs.push(Doc {
                    server: id.clone(),
                    kind: Kind::Toolset(ts.clone()),
                    name: ts.to_string(),
                    words: words(&text),
                });
            }
            for t in snap.tools() {
                let mut text = t.tool.name.clone();
                if let Some(ts) = &t.toolset {
                    text.push(' ');
                    text.push_str(ts);
                }
                if let Some(d) = grouping::description(&t.tool) {
                    text.push(' ');
                    text.push_str(d);
                }
                docs.push(Doc {
                    server: id.clone(),
                    kind: Kind::Tool(t.toolset.clone()),
                    name: t.tool.name.clone(),
                    words: words(&text),
                });
            }
        }
        docs
    }

    /// The hit's line: what it is, where, whether open, what it says, and how to reach it.
    fn hit_line(&self, p: &Presenter) -> String {
        let id = &self.server;
        let Some(snap) = p.snapshot(id) else {
            return String::new();
        };
        let state = |ts: &str| if snap.is_open(ts) { "open" } else { "closed" };
        match &self.kind {
            Kind::Toolset(ts) => {
                let mut line = format!("toolset `{ts}` on `{id}` ({})", state(ts));
                let about = match snap.declared().get(ts) {
                    Some(d) => d.summary.clone().or_else(|| d.title.clone()),
                    None => Some(grouping::summary(
                        snap.tools()
                            .iter()
                            .filter(|t| t.toolset.as_ref() == Some(ts))
                            .map(|t| &t.tool),
                    )),
                };
                if let Some(a) = about {
                    line.push_str(&format!(": {}", quote(id, &a)));
                }
                if !snap.is_open(ts) {
                    line.push_str(&format!("; open it with {}", open_call(id, ts)));
                }
                line
            }
            Kind::Tool(toolset) => {
                let listed = snap.tool(&self.name);
                let about = listed
                    .and_then(|t| first_sentence(t.tool.description.as_ref()))
                    .map(|s| format!(": {}", quote(id, &s)))
                    .unwrap_or_default();
                let act = json!({"server": id, "tool": self.name, "args": {}});
                match toolset {
                    Some(ts) if !snap.is_open(ts) => format!(
                        "tool `{}` on `{id}` in toolset `{ts}` (closed){about}; open it with {}, then call {META_ACT} {act}",
                        self.name,
                        open_call(id, ts)
                    ),
                    Some(ts) => format!(
                        "tool `{}` on `{id}` in toolset `{ts}` (open){about}; call {META_ACT} {act}",
                        self.name
                    ),
                    None if listed.is_some_and(|t| t.presence == Presence::Static) => format!(
                        "tool `{}` on `{id}` (static){about}; call it by name as `{}`",
                        self.name,
                        p.model_name(id, &self.name)
                    ),
                    None => format!(
                        "tool `{}` on `{id}` (no toolset){about}; call {META_ACT} {act}",
                        self.name
                    ),
                }
            }
        }
    }
}

impl Presenter {
    /// The best matches for `query` (at most [`SEARCH_TOP`]), one line each.
    pub(super) fn search(&self, query: &str) -> Vec<String> {
        let q = words(query);
        let docs = Doc::all(self);
        let words: Vec<Vec<String>> = docs.iter().map(|d| d.words.clone()).collect();
        let scores = bm25(&words, &q);
        let mut ranked: Vec<(f64, &Doc)> = scores
            .into_iter()
            .zip(&docs)
            .filter(|(s, _)| *s > 0.0)
            .collect();
        ranked.sort_by(|(sa, a), (sb, b)| {
            sb.total_cmp(sa)
                .then_with(|| (&a.server, &a.kind, &a.name).cmp(&(&b.server, &b.kind, &b.name)))
        });
        let quoted = serde_json::to_string(query).unwrap_or_default();
        if ranked.is_empty() {
            return vec![format!("no toolset or tool matches {quoted}")];
        }
        let mut lines = vec![format!("best matches for {quoted}, best first:")];
        for (i, (_, doc)) in ranked.into_iter().take(SEARCH_TOP).enumerate() {
            lines.push(format!("{}. {}", i + 1, doc.hit_line(self)));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_names_and_drop_plurals() {
        assert_eq!(
            words("git_status: Shows Issues, fs.read/v2 class"),
            [
                "git", "status", "show", "issue", "fs", "read", "v2", "class"
            ]
        );
    }

    #[test]
    fn bm25_prefers_rarer_words_and_shorter_documents() {
        let docs: Vec<Vec<String>> = [
            "fetch page url",
            "fetch",
            "commit change repository fetch",
            "weather forecast",
        ]
        .iter()
        .map(|d| words(d))
        .collect();
        let s = bm25(&docs, &words("fetch"));
        assert!(s[1] > s[0] && s[0] > s[2] && s[3] == 0.0, "{s:?}");
        let s = bm25(&docs, &words("forecast fetch"));
        assert!(s[3] > s[1], "a rare word outweighs a common one: {s:?}");
    }

    #[test]
    fn bm25_is_the_okapi_formula_with_k1_1_2_and_b_0_75() {
        let docs: Vec<Vec<String>> = ["fetch fetch page", "weather"]
            .iter()
            .map(|d| words(d))
            .collect();
        let s = bm25(&docs, &words("fetch"));
        // N = 2, df = 1: idf = ln((2 - 1 + 0.5) / (1 + 0.5) + 1); tf = 2; |d| = 3; avg = 2.
        let idf = 2f64.ln();
        let want = idf * 2.0 * (1.2 + 1.0) / (2.0 + 1.2 * (1.0 - 0.75 + 0.75 * 3.0 / 2.0));
        assert!((s[0] - want).abs() < 1e-12, "{} != {want}", s[0]);
        assert_eq!(s[1], 0.0);
        // A word in two documents of three: df = 2, so idf = ln((3 - 2 + 0.5) / (2 + 0.5) + 1);
        // tf = 1; |d| = 2; avg = 4/3.
        let docs: Vec<Vec<String>> = ["fetch page", "fetch", "weather"]
            .iter()
            .map(|d| words(d))
            .collect();
        let s = bm25(&docs, &words("fetch"));
        let idf = 1.6f64.ln();
        let want = idf * (1.2 + 1.0) / (1.0 + 1.2 * (1.0 - 0.75 + 0.75 * 2.0 / (4.0 / 3.0)));
        assert!((s[0] - want).abs() < 1e-12, "{} != {want}", s[0]);
    }
}
