//! `tools/list` and `tools/call` params and results (MCP), with RFC-014's `_meta` members:
//! `mcpl/rev` on a list result (§4.1, §6.1), `mcpl/instance` on call params (§4.3) and
//! `mcpl/hints` on a call result (§6).
//!
//! `_meta` stays a raw map on every type here, so a malformed RFC-014 member never makes the
//! MCP message itself undecodable: the helpers report it as a [`MetaError`] and the caller
//! decides (a host recovers; the call result still reaches the agent).

use super::content::ContentBlock;
use super::tool::Tool;
use crate::rfc014::hints::HintChanges;
use crate::rfc014::meta::{HINTS_KEY, INSTANCE_KEY, REV_KEY, Rev};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An RFC-014 `_meta` member that is present but does not have its documented shape.
#[derive(Debug, thiserror::Error)]
#[error("`_meta` member `{key}` is malformed: {source}")]
pub struct MetaError {
    /// The key, for example `mcpl/rev`.
    pub key: &'static str,
    /// Why it does not decode.
    #[source]
    pub source: serde_json::Error,
}

/// Reads `_meta[key]` as `T`: `Ok(None)` when absent.
pub(crate) fn read_meta<T: DeserializeOwned>(
    meta: Option<&Map<String, Value>>,
    key: &'static str,
) -> Result<Option<T>, MetaError> {
    match meta.and_then(|m| m.get(key)) {
        None => Ok(None),
        Some(v) => T::deserialize(v)
            .map(Some)
            .map_err(|source| MetaError { key, source }),
    }
}

/// Sets (`Some`) or removes (`None`) `_meta[key]`; an emptied `_meta` is dropped.
pub(crate) fn write_meta(meta: &mut Option<Map<String, Value>>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            meta.get_or_insert_with(Map::new).insert(key.to_owned(), v);
        }
        None => {
            if let Some(m) = meta {
                m.remove(key);
                if m.is_empty() {
                    *meta = None;
                }
            }
        }
    }
}

/// `tools/list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsListParams {
    /// The `nextCursor` of the previous page; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolsListParams {
    /// Params asking for the page after `cursor` (`None`: the first page).
    pub fn page(cursor: Option<String>) -> Self {
        ToolsListParams {
            cursor,
            ..Self::default()
        }
    }
}

/// `tools/list` result: one page of tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsListResult {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last page.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// `_meta`; RFC-014 puts `mcpl/rev` here.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolsListResult {
    /// A single-page result holding `tools`.
    pub fn new(tools: Vec<Tool>) -> Self {
        ToolsListResult {
            tools,
            ..Self::default()
        }
    }

    /// `_meta["mcpl/rev"]`: the last rev the server had taken when it wrote the page
    /// (RFC-014 §4.1). `Ok(None)` when absent (a server without `toolHints`); an error when
    /// present but not a non-negative integer (H07 treats such pages specially).
    pub fn rev(&self) -> Result<Option<Rev>, MetaError> {
        read_meta(self.meta.as_ref(), REV_KEY)
    }

    /// Sets `_meta["mcpl/rev"]` (`None` removes it). The result itself takes no rev (§6.1).
    pub fn set_rev(&mut self, rev: Option<Rev>) {
        write_meta(&mut self.meta, REV_KEY, rev.map(|r| Value::from(r.get())));
    }
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool to call.
    pub name: String,
    /// The arguments, an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// `_meta`; RFC-014 puts `mcpl/instance` here (§4.3).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolParams {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments: Some(arguments),
            meta: None,
            extra: Map::new(),
        }
    }

    /// `_meta["mcpl/instance"]`: the target instance (§4.3), kept as given. `Ok(None)` when
    /// absent; an error when it is not a string.
    pub fn instance(&self) -> Result<Option<String>, MetaError> {
        read_meta(self.meta.as_ref(), INSTANCE_KEY)
    }

    /// Sets or removes `_meta["mcpl/instance"]`. Hosts never set it for a toolset without
    /// instances (§4.3).
    pub fn set_instance(&mut self, instance: Option<&str>) {
        write_meta(&mut self.meta, INSTANCE_KEY, instance.map(Value::from));
    }
}

/// `tools/call` result.
///
/// A tool that fails returns `isError: true` with content saying why; a JSON-RPC error is for
/// calls that could not be made at all (RFC-014 §4.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// What the tool shows the model. Required by MCP; an absent member reads as empty.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// A structured result matching the tool's `outputSchema`.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// `true` when the tool failed.
    #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`; RFC-014 puts `mcpl/hints` here (§6).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// A successful result showing `text`.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }

    /// A tool error (`isError: true`) saying `text`.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// Whether the tool reported failure.
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }

    /// `_meta["mcpl/hints"]`: what the call caused (RFC-014 §6). `Ok(None)` when absent.
    pub fn hints(&self) -> Result<Option<HintChanges>, MetaError> {
        read_meta(self.meta.as_ref(), HINTS_KEY)
    }

    /// Sets or removes `_meta["mcpl/hints"]`.
    pub fn set_hints(&mut self, hints: Option<&HintChanges>) -> Result<(), serde_json::Error> {
        let value = hints.map(serde_json::to_value).transpose()?;
        write_meta(&mut self.meta, HINTS_KEY, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::round_trip;
    use serde_json::json;

    #[test]
    fn tools_list_params_round_trip() {
        let p: ToolsListParams = round_trip(json!({"cursor": "c2", "_meta": {"k": 1}, "x": 2}));
        assert_eq!(p.cursor.as_deref(), Some("c2"));
        let empty: ToolsListParams = round_trip(json!({}));
        assert_eq!(empty, ToolsListParams::page(None));
    }

    #[test]
    fn s4_1_tools_list_result_round_trips_and_reads_rev() {
        let r: ToolsListResult = round_trip(json!({
            "tools": [{"name": "challenge", "inputSchema": {"type": "object"}},
                      {"name": "play", "inputSchema": {"type": "object"},
                       "_meta": {"mcpl/toolset": "go", "mcpl/visible": false}}],
            "nextCursor": "p2",
            "_meta": {"mcpl/rev": 12, "other": "kept"},
            "vendor": {}
        }));
        assert_eq!(r.rev().unwrap(), Some(Rev(12)));
        assert_eq!(r.tools[1].toolset(), Some("go"));
    }

    #[test]
    fn s6_1_rev_zero_before_any_hints_and_set_rev_writes_a_number() {
        let mut r = ToolsListResult::new(vec![]);
        assert_eq!(r.rev().unwrap(), None);
        r.set_rev(Some(Rev::ZERO));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"tools": [], "_meta": {"mcpl/rev": 0}})
        );
        r.set_rev(None);
        assert_eq!(r.meta, None);
    }

    #[test]
    fn h07_non_numeric_rev_is_reported_not_hidden() {
        let r: ToolsListResult =
            serde_json::from_value(json!({"tools": [], "_meta": {"mcpl/rev": "7"}})).unwrap();
        let err = r.rev().unwrap_err();
        assert_eq!(err.key, "mcpl/rev");
        assert!(err.to_string().contains("mcpl/rev"));
        let r: ToolsListResult =
            serde_json::from_value(json!({"tools": [], "_meta": {"mcpl/rev": -1}})).unwrap();
        assert!(r.rev().is_err());
    }

    #[test]
    fn s4_3_call_params_round_trip_and_carry_the_instance() {
        let mut p: CallToolParams = round_trip(json!({"name": "play",
            "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "vs-bot",
            "progressToken": 3}}));
        assert_eq!(p.instance().unwrap().as_deref(), Some("vs-bot"));
        p.set_instance(None);
        assert_eq!(
            p.meta,
            Some(json!({"progressToken": 3}).as_object().unwrap().clone())
        );
        let bad: CallToolParams =
            serde_json::from_value(json!({"name": "play", "_meta": {"mcpl/instance": 1}})).unwrap();
        assert!(bad.instance().is_err());
        assert!(
            serde_json::from_value::<CallToolParams>(json!({"name": "x", "arguments": [1]}))
                .is_err()
        );
    }

    #[test]
    fn s6_call_result_round_trips_and_carries_hints() {
        let r: CallToolResult = round_trip(json!({
            "content": [{"type": "text", "text": "White played E5"},
                        {"type": "image", "data": "AA==", "mimeType": "image/png"}],
            "structuredContent": {"board": "..."},
            "isError": false,
            "_meta": {"mcpl/hints": {"rev": 3, "tools": [{"name": "pass", "instance": "g1",
                      "visible": true}]}},
            "vendor": 1
        }));
        let hints = r.hints().unwrap().unwrap();
        assert_eq!(hints.rev, Rev(3));
        assert!(!r.failed());
        let mut plain = CallToolResult::error("not open");
        assert!(plain.failed());
        assert_eq!(plain.hints().unwrap(), None);
        plain.set_hints(Some(&hints)).unwrap();
        assert_eq!(plain.hints().unwrap(), Some(hints));
        plain.set_hints(None).unwrap();
        assert_eq!(plain.meta, None);
    }

    #[test]
    fn malformed_hints_leave_the_result_readable() {
        let r: CallToolResult = serde_json::from_value(json!({"content": [],
            "_meta": {"mcpl/hints": {"rev": "x"}}}))
        .unwrap();
        assert_eq!(r.hints().unwrap_err().key, "mcpl/hints");
    }
}
