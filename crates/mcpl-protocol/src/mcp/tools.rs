//! `tools/list` and `tools/call` params and results (MCP). RFC-014 puts `mcpl/rev` on a list
//! result (§4.1, §6.1), `mcpl/instance` on call params (§4.3) and `mcpl/hints` on a call result
//! (§6); their accessors are in `rfc014/on_mcp.rs`, on the raw `_meta` maps kept here.
//!
//! `_meta` stays a raw map on every type here, so a malformed RFC-014 member never makes the
//! MCP message itself undecodable: the helpers report it as a [`MetaError`] and the caller
//! decides (a host recovers; the call result still reaches the agent).

use super::content::ContentBlock;
use super::tool::Tool;
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
    /// Decodes params the caller owns, moving the arguments and `_meta` over as they are
    /// instead of rebuilding them (the crate's `owned` module says how): a tool call's
    /// arguments can be large, and every call on a server and through the surface is decoded
    /// here. Accepts and refuses what the derived `Deserialize` does (tested on generated
    /// input); only an error's wording may differ.
    pub fn from_value(value: Value) -> Result<CallToolParams, serde_json::Error> {
        use crate::owned::{missing, object, optional_object, typed};
        let mut params = CallToolParams {
            name: String::new(),
            arguments: None,
            meta: None,
            extra: Map::new(),
        };
        let mut name = None;
        for (key, v) in object(value, "struct CallToolParams")? {
            match key.as_str() {
                "name" => name = Some(typed(v)?),
                "arguments" => params.arguments = optional_object(v)?,
                "_meta" => params.meta = optional_object(v)?,
                _ => {
                    params.extra.insert(key, v);
                }
            }
        }
        params.name = name.ok_or_else(|| missing("name"))?;
        Ok(params)
    }

    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments: Some(arguments),
            meta: None,
            extra: Map::new(),
        }
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

    /// Whether `value` decodes as a `CallToolResult`, told without decoding it: a relay that
    /// passes a server's result on as it is checks it with this instead of decoding and
    /// encoding it again (every content block and member would be copied twice).
    pub fn is_well_formed(value: &Value) -> bool {
        let Value::Object(result) = value else {
            return false;
        };
        let content_ok = match result.get("content") {
            None => true,
            Some(Value::Array(blocks)) => blocks.iter().all(ContentBlock::is_well_formed),
            Some(_) => false,
        };
        content_ok
            && matches!(
                result.get("isError"),
                None | Some(Value::Null | Value::Bool(_))
            )
            && matches!(
                result.get("_meta"),
                None | Some(Value::Null | Value::Object(_))
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::round_trip;
    use proptest::prelude::*;
    use serde_json::json;

    /// A value built from the members and shapes the decoder cares about.
    fn result_like() -> impl Strategy<Value = Value> {
        let any = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            Just(json!(1)),
            "[a-z]{0,3}".prop_map(Value::String),
            Just(json!([])),
            Just(json!({})),
        ];
        let block = proptest::collection::btree_map(
            prop_oneof![
                Just("type"),
                Just("text"),
                Just("annotations"),
                Just("_meta"),
                Just("data")
            ],
            prop_oneof![any.clone(), Just(json!("text")), Just(json!("image"))],
            0..5,
        )
        .prop_map(|m| json!(m));
        let content = prop_oneof![
            proptest::collection::vec(prop_oneof![block, any.clone()], 0..4).prop_map(Value::Array),
            any.clone(),
        ];
        let member = prop_oneof![content, any.clone()];
        let object = proptest::collection::btree_map(
            prop_oneof![
                Just("content"),
                Just("isError"),
                Just("_meta"),
                Just("structuredContent"),
                Just("other")
            ],
            member,
            0..5,
        )
        .prop_map(|m| json!(m));
        prop_oneof![4 => object, 1 => any]
    }

    #[test]
    fn is_well_formed_is_whether_it_decodes() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let (mut well, mut ill) = (0, 0);
        for _ in 0..2_000 {
            let value = result_like().new_tree(&mut runner).unwrap().current();
            let decodes = serde_json::from_value::<CallToolResult>(value.clone()).is_ok();
            assert_eq!(CallToolResult::is_well_formed(&value), decodes, "{value}");
            if decodes { well += 1 } else { ill += 1 }
        }
        // Both answers are exercised, not one of them alone.
        assert!(well > 100 && ill > 100, "{well} well-formed, {ill} not");
    }

    #[test]
    fn is_well_formed_reads_whole_results() {
        let image = json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
        let ok = json!({"content": [{"type": "text", "text": "hi", "_meta": null}, image],
                        "isError": false, "_meta": {"k": 1}, "structuredContent": 3});
        assert!(CallToolResult::is_well_formed(&ok));
        assert!(CallToolResult::is_well_formed(&json!({})));
        for bad in [
            json!([]),
            json!({"content": {}}),
            json!({"content": [{"text": "no type"}]}),
            json!({"content": [{"type": "text"}]}),
            json!({"content": [{"type": "text", "text": 1}]}),
            json!({"content": [{"type": "text", "text": "", "_meta": []}]}),
            json!({"isError": "yes"}),
            json!({"_meta": 1}),
        ] {
            assert!(!CallToolResult::is_well_formed(&bad), "{bad}");
            assert!(serde_json::from_value::<CallToolResult>(bad).is_err());
        }
    }

    #[test]
    fn tools_list_params_round_trip() {
        let p: ToolsListParams = round_trip(json!({"cursor": "c2", "_meta": {"k": 1}, "x": 2}));
        assert_eq!(p.cursor.as_deref(), Some("c2"));
        let empty: ToolsListParams = round_trip(json!({}));
        assert_eq!(empty, ToolsListParams::page(None));
    }
}
