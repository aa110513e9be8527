//! What every server check works with: the [`Ctx`] of a run and the reads most checks start
//! from (a leaf under the checks).

use super::conn::{Conn, Profile};
use crate::data::VectorFile;
use crate::target::{Options, ServerTarget};
use crate::transcript::Transcript;
use crate::verdict::{Step, ensure, fail};
use crate::wire::{brief, listed, result_hints, rev_of};
use mcpl_protocol::methods;
use serde_json::{Value, json};

/// What a check works with.
pub(crate) struct Ctx<'a> {
    pub(super) target: &'a ServerTarget,
    pub(super) options: &'a Options,
    pub(super) transcript: Transcript,
    pub(super) opened: usize,
    pub(crate) nonce: u32,
    pub(super) vectors: &'a VectorFile,
    /// The vector being checked.
    pub(super) vector: &'static str,
}

impl Ctx<'_> {
    /// Opens the next connection (`A`, `B`, ...) with `profile`.
    pub(crate) async fn open(&mut self, profile: Profile) -> Step<Conn> {
        let label = ((b'A' + (self.opened % 26) as u8) as char).to_string();
        self.opened += 1;
        Conn::open(self.target, self.options, &self.transcript, &label, profile).await
    }

    /// Opens a connection as a host with `toolHints` and a `pushEvents` grant, and reads
    /// `tools/list` then `toolsets/list` as a host does on connect (§5.3).
    pub(super) async fn connected(&mut self, profile: Profile) -> Step<(Conn, Value)> {
        let mut conn = self.open(profile).await?;
        conn.require_hints()?;
        let tools = list_tools(&mut conn).await?;
        toolsets_list(&mut conn).await?;
        // Start each check from a hidden `cf_revealed`, whatever an earlier check on the same
        // principal left behind, so that every later change is a real change.
        if listed(&tools, crate::fixture::REVEAL).is_some() {
            conn.call(crate::fixture::REVEAL, json!({"visible": false}), None)
                .await?;
        }
        Ok((conn, tools))
    }

    /// The checked vector's server expectations in the vector file.
    pub(crate) fn want(&self) -> crate::data::Wants<'_> {
        crate::data::Wants {
            file: self.vectors,
            id: self.vector,
            side: "server",
        }
    }

    /// How long a check waits for what must arrive.
    pub(crate) fn wait(&self) -> std::time::Duration {
        self.options.wait
    }

    /// An instance name unique to this run: `TAG-NONCE`.
    pub(super) fn name(&self, tag: &str) -> String {
        format!("{tag}-{}", self.nonce)
    }
}

/// `tools/list`, following `nextCursor` (at most 100 pages), as one result whose `tools`
/// holds every page's tools and whose `_meta` is the last page's.
pub(super) async fn list_tools(conn: &mut Conn) -> Step<Value> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = conn.request(methods::TOOLS_LIST, params).await?;
        let Some(items) = page.get("tools").and_then(Value::as_array) else {
            fail!("tools/list result has no `tools` array: {}", brief(&page));
        };
        tools.extend(items.iter().cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => {
                let mut whole = page.clone();
                whole["tools"] = Value::Array(tools);
                return Ok(whole);
            }
        }
    }
    fail!("tools/list did not end within 100 pages")
}

/// `toolsets/list`; fails unless the result has an `open` array and a full statement with
/// an integer rev (§5.3).
pub(super) async fn toolsets_list(conn: &mut Conn) -> Step<Value> {
    let list = conn.request(methods::TOOLSETS_LIST, json!({})).await?;
    ensure!(
        list.get("open").is_some_and(Value::is_array),
        "toolsets/list result has no `open` array (§5.3): {}",
        brief(&list)
    );
    let Some(h) = result_hints(&list) else {
        fail!(
            "toolsets/list result carries no _meta[\"mcpl/hints\"]; §5.3 makes the full statement mandatory: {}",
            brief(&list)
        );
    };
    ensure!(
        rev_of(h).is_some(),
        "toolsets/list full statement has no integer rev (§5.3): {}",
        brief(h)
    );
    Ok(list)
}

/// Fails unless `tools` lists every name in `names`, naming the fixture contract.
pub(super) fn require_tools(tools: &Value, names: &[&str]) -> Step {
    let missing: Vec<_> = names
        .iter()
        .filter(|n| listed(tools, n).is_none())
        .collect();
    ensure!(
        missing.is_empty(),
        "tools/list lacks {missing:?}, which the fixture contract requires (docs/CONFORMANCE.md)"
    );
    Ok(())
}
