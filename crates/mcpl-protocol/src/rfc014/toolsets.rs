//! `toolsets/open`, `toolsets/close` and `toolsets/list`: params, results, open entries and
//! ended records (§5.2, §5.3).
//!
//! Names are kept as `String`s here (see [`super::name`]); `toolset_name()` and
//! `instance_name()` check them, so a server can answer a bad one with `-32602` naming the
//! rule instead of failing to decode the request.

use super::hints::HintChanges;
use super::name::{InstanceName, NameError, ToolsetName};
use crate::mcp::content::ContentBlock;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `_meta` of a result that may carry hints (`toolsets/open`, `toolsets/close`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HintsMeta {
    /// What the request caused; takes the next rev (§5.2).
    #[serde(
        rename = "mcpl/hints",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hints: Option<HintChanges>,
    /// Other `_meta` members, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `toolsets/open` params (§5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenParams {
    /// The declared toolset to open.
    pub toolset: String,
    /// The proposed instance name (instanced toolsets only); absent lets the server choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Options, validated against the declared schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl OpenParams {
    /// Params for opening `toolset`, with no instance and no options.
    pub fn new(toolset: impl Into<String>) -> Self {
        OpenParams {
            toolset: toolset.into(),
            instance: None,
            options: None,
            extra: Map::new(),
        }
    }

    /// The toolset name, checked against the grammar.
    pub fn toolset_name(&self) -> Result<ToolsetName, NameError> {
        ToolsetName::parse(&self.toolset)
    }

    /// The proposed instance name, if any, checked against the grammar.
    pub fn instance_name(&self) -> Result<Option<InstanceName>, NameError> {
        self.instance
            .as_deref()
            .map(InstanceName::parse)
            .transpose()
    }
}

/// `toolsets/open` result (§5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenResult {
    /// The instance opened or adopted; always present for instanced toolsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `true` when the open adopted something already open, changing nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<bool>,
    /// The title of what was opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// MCP content blocks describing what was opened (and options not applied on adoption).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// `_meta`, with the hints the open caused.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<HintsMeta>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl OpenResult {
    /// The hints the open caused, if any.
    pub fn hints(&self) -> Option<&HintChanges> {
        self.meta.as_ref().and_then(|m| m.hints.as_ref())
    }
}

/// `toolsets/close` params (§5.2). `instance` is required for instanced toolsets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloseParams {
    /// The toolset to close.
    pub toolset: String,
    /// The instance to close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CloseParams {
    /// Params for closing `toolset` (and `instance`).
    pub fn new(toolset: impl Into<String>, instance: Option<String>) -> Self {
        CloseParams {
            toolset: toolset.into(),
            instance,
            extra: Map::new(),
        }
    }

    /// The toolset name, checked against the grammar.
    pub fn toolset_name(&self) -> Result<ToolsetName, NameError> {
        ToolsetName::parse(&self.toolset)
    }

    /// The instance name, if any, checked against the grammar.
    pub fn instance_name(&self) -> Result<Option<InstanceName>, NameError> {
        self.instance
            .as_deref()
            .map(InstanceName::parse)
            .transpose()
    }
}

/// `toolsets/close` result (§5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloseResult {
    /// MCP content blocks reporting consequences (a forfeit), or that nothing was open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// `_meta`, with the hints the close caused.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<HintsMeta>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CloseResult {
    /// The hints the close caused, if any.
    pub fn hints(&self) -> Option<&HintChanges> {
        self.meta.as_ref().and_then(|m| m.hints.as_ref())
    }
}

/// `toolsets/list` params: none defined (`{}`), unknown members kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListParams {
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `_meta` of a `toolsets/list` result: the full statement is required (§5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListMeta {
    /// The full statement of dynamic-tool state; always present, always with a rev.
    #[serde(rename = "mcpl/hints")]
    pub hints: HintChanges,
    /// Other `_meta` members, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `toolsets/list` result (§5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListResult {
    /// What the principal has open.
    pub open: Vec<OpenEntry>,
    /// Ends the host did not ask for, until they expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Vec<EndedRecord>>,
    /// `_meta` with the full statement.
    #[serde(rename = "_meta")]
    pub meta: ListMeta,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListResult {
    /// The full statement.
    pub fn hints(&self) -> &HintChanges {
        &self.meta.hints
    }
}

/// One open toolset or instance in a `toolsets/list` result (§5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenEntry {
    /// The toolset.
    pub toolset: String,
    /// The instance, for instanced toolsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Its current title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The options in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A record of an end the host may not have seen (§5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndedRecord {
    /// Unique for the principal, never reused.
    pub id: String,
    /// The toolset that ended.
    pub toolset: String,
    /// The instance; required for instanced toolsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Why, in words for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When, as ISO 8601 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rfc014::meta::Rev;
    use serde_json::json;

    #[test]
    fn s5_2_open_params_keep_bad_names_for_a_clear_error() {
        let p: OpenParams = serde_json::from_value(
            json!({"toolset": "game", "instance": "vs bot", "options": {"size": 9}, "k": 1}),
        )
        .unwrap();
        assert_eq!(p.toolset_name().unwrap(), "game");
        let err = p.instance_name().unwrap_err();
        assert!(err.to_string().contains("`vs bot`"), "{err}");
        assert_eq!(p.extra["k"], json!(1));
        let p = OpenParams::new("game");
        assert_eq!(p.instance_name().unwrap(), None);
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"toolset": "game"})
        );
    }

    #[test]
    fn s9_open_result_round_trips() {
        let wire = json!({"instance": "vs-bot", "title": "Go vs bot (9×9)",
            "content": [{"type": "text", "text": "New 9×9 game."}],
            "_meta": {"mcpl/hints": {"rev": 2, "toolsets": [{"toolset": "game",
                "instance": "vs-bot", "state": "open"}]}, "other": "kept"}});
        let r: OpenResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.hints().unwrap().rev, Rev(2));
        assert_eq!(r.adopted, None);
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn s5_2_adopted_and_close_results_round_trip() {
        let wire = json!({"instance": "vs-bot", "adopted": true,
            "content": [{"type": "text", "text": "options not applied: size"}]});
        let r: OpenResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.adopted, Some(true));
        assert!(r.hints().is_none());
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);

        let wire = json!({"content": [{"type": "text", "text": "nothing was open"}]});
        let r: CloseResult = serde_json::from_value(wire.clone()).unwrap();
        assert!(r.hints().is_none());
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);

        let p: CloseParams =
            serde_json::from_value(json!({"toolset": "game", "instance": "vs-bot"})).unwrap();
        assert_eq!(p.instance_name().unwrap().unwrap(), "vs-bot");
    }

    #[test]
    fn s5_3_list_example_round_trips() {
        let wire = json!({
            "open": [{"toolset": "game", "instance": "vs-bot", "title": "Go vs bot (9×9)",
                      "options": {"size": 9}}],
            "ended": [{"id": "e-17", "toolset": "game", "instance": "vs-ada",
                       "reason": "Ada resigned; you won.", "at": "2026-01-01T00:00:00Z"}],
            "_meta": {"mcpl/hints": {"rev": 41, "tools": [
                {"name": "board", "instance": "vs-bot", "visible": true}]}}});
        let r: ListResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.hints().rev, Rev(41));
        assert_eq!(r.ended.as_ref().unwrap()[0].id, "e-17");
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn s5_3_list_result_without_hints_is_refused() {
        let err = serde_json::from_value::<ListResult>(json!({"open": [], "_meta": {}}));
        assert!(err.is_err());
        let err = serde_json::from_value::<ListResult>(json!({"open": []}));
        assert!(err.is_err());
    }

    #[test]
    fn list_params_accept_empty_and_unknown() {
        let p: ListParams = serde_json::from_value(json!({})).unwrap();
        assert!(p.extra.is_empty());
        let p: ListParams = serde_json::from_value(json!({"cursor": "x"})).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"cursor": "x"}));
    }
}
