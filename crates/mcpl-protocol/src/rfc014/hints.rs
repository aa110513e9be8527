//! Hint changes: the rev-stamped values every carrier holds (§6, Appendix A).
//!
//! Every entry states a value, never a difference, so applying one twice is harmless (§2.5).

use super::meta::{Presence, Rev};
use crate::mcp::tool::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// One rev-stamped batch of hint changes (§6). An absent member means "no change".
///
/// Carried by `tools/call`, `toolsets/*` results (`_meta["mcpl/hints"]`), `push/event` params
/// (`hints`) and the `tools/hints` notification (as its params).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HintChanges {
    /// The position of this batch in the connection's stream (§6.1).
    pub rev: Rev,
    /// Per-tool changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolHintEntry>>,
    /// Toolset and instance state changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolsets: Option<Vec<ToolsetChange>>,
    /// Server suggestions; never in a full statement (§6, §7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggest: Option<Vec<SuggestEntry>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HintChanges {
    /// An empty batch at `rev` (an empty full statement, for example).
    pub fn new(rev: Rev) -> Self {
        HintChanges {
            rev,
            tools: None,
            toolsets: None,
            suggest: None,
            extra: Map::new(),
        }
    }

    /// Decodes a batch from a value the caller owns (a notification's params, say), moving
    /// each definition's raw JSON over instead of rebuilding it (the crate's `owned` module
    /// says how); accepts and refuses what `serde_json::from_value` does.
    pub fn from_value(value: Value) -> Result<HintChanges, serde_json::Error> {
        use crate::owned::{missing, object, optional, optional_list, typed};
        let mut out = HintChanges::new(Rev::ZERO);
        let mut rev = None;
        for (key, v) in object(value, "struct HintChanges")? {
            match key.as_str() {
                "rev" => rev = Some(typed(v)?),
                "tools" => out.tools = optional_list(v, ToolHintEntry::from_value)?,
                "toolsets" => out.toolsets = optional(v)?,
                "suggest" => out.suggest = optional(v)?,
                _ => {
                    out.extra.insert(key, v);
                }
            }
        }
        out.rev = rev.ok_or_else(|| missing("rev"))?;
        Ok(out)
    }

    /// Whether the batch states nothing (it may still clear state as a full statement).
    pub fn is_empty(&self) -> bool {
        self.tools.as_ref().is_none_or(Vec::is_empty)
            && self.toolsets.as_ref().is_none_or(Vec::is_empty)
            && self.suggest.as_ref().is_none_or(Vec::is_empty)
    }
}

/// A change to one tool, or to one tool in one instance (§6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolHintEntry {
    /// The tool's name.
    pub name: String,
    /// The instance the entry is about; required for tools of instanced toolsets (§5.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// A move between static and dynamic (§4.2); ignored for toolset tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence: Option<Presence>,
    /// Usable now, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    /// A new definition for a dynamic tool; hosts use only its description, input schema and
    /// annotations (§6). With `instance`, that instance's own. Shared, so a server stating one
    /// definition to several connections, and a host keeping it, copy no schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<Arc<Tool>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolHintEntry {
    /// Decodes an entry from a value the caller owns, moving its definition's raw JSON over
    /// (see [`HintChanges::from_value`]).
    pub fn from_value(value: Value) -> Result<ToolHintEntry, serde_json::Error> {
        use crate::owned::{missing, object, optional, typed};
        let mut out = ToolHintEntry::new(String::new());
        let mut name = None;
        for (key, v) in object(value, "struct ToolHintEntry")? {
            match key.as_str() {
                "name" => name = Some(typed(v)?),
                "instance" => out.instance = optional(v)?,
                "presence" => out.presence = optional(v)?,
                "visible" => out.visible = optional(v)?,
                "definition" => {
                    out.definition = match v {
                        Value::Null => None,
                        v => Some(Arc::new(Tool::from_value(v)?)),
                    }
                }
                _ => {
                    out.extra.insert(key, v);
                }
            }
        }
        out.name = name.ok_or_else(|| missing("name"))?;
        Ok(out)
    }

    /// An entry for `name` that states nothing yet.
    pub fn new(name: impl Into<String>) -> Self {
        ToolHintEntry {
            name: name.into(),
            instance: None,
            presence: None,
            visible: None,
            definition: None,
            extra: Map::new(),
        }
    }
}

/// Whether a toolset or instance is open (mirrors [`super::ToolsetDefault`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsetState {
    /// Open for the principal.
    Open,
    /// Closed (or ended) for the principal.
    Closed,
}

/// A change to a toolset or an instance: opened or closed elsewhere, retitled, ended (§6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsetChange {
    /// The toolset's name.
    pub toolset: String,
    /// The instance, for instanced toolsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The new state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ToolsetState>,
    /// A new title (a retitle; names never change, §5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A new summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Why, in words for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The id of the `ended` record that covers this end, so a host tells it once (§5.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolsetChange {
    /// A change for `toolset` (and `instance`) that states nothing yet.
    pub fn new(toolset: impl Into<String>, instance: Option<String>) -> Self {
        ToolsetChange {
            toolset: toolset.into(),
            instance,
            state: None,
            title: None,
            summary: None,
            reason: None,
            ended: None,
            extra: Map::new(),
        }
    }
}

/// What a suggestion proposes (§7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuggestAction {
    /// Open the toolset or instance.
    Open,
    /// Close it.
    Close,
}

/// A server suggestion: changes nothing by itself (§7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestEntry {
    /// Open or close.
    pub action: SuggestAction,
    /// The toolset.
    pub toolset: String,
    /// The proposed instance name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The proposed options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// Why, in words for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The members RFC-014 adds to `push/event` params (§9.2 as amended); flatten into the params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushHintMembers {
    /// The hint changes the event explains; a push carrying them is never retried (§6.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<HintChanges>,
    /// The toolset the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset: Option<String>,
    /// The instance the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn s9_open_hints_round_trip() {
        let wire = json!({"rev": 2,
            "toolsets": [{"toolset": "game", "instance": "vs-bot", "state": "open",
                          "title": "Go vs bot (9×9)"}],
            "tools": [{"name": "board", "instance": "vs-bot", "visible": true},
                      {"name": "play", "instance": "vs-bot", "visible": true,
                       "definition": {"name": "play", "description": "Play a move.",
                         "inputSchema": {"type": "object", "required": ["move"],
                           "properties": {"move": {"enum": ["A1", "J9"]}}}}}]});
        let h: HintChanges = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(h.rev, Rev(2));
        assert_eq!(h.tools.as_ref().unwrap().len(), 2);
        assert_eq!(
            h.toolsets.as_ref().unwrap()[0].state,
            Some(ToolsetState::Open)
        );
        assert!(!h.is_empty());
        // Key order may differ from the input; compare values.
        assert_eq!(serde_json::to_value(&h).unwrap(), wire);
    }

    #[test]
    fn unknown_members_are_kept_at_every_level() {
        let wire = json!({"rev": 5, "future": [1],
            "tools": [{"name": "t", "x": true}],
            "toolsets": [{"toolset": "g", "state": "closed", "ended": "e-1", "y": 2}],
            "suggest": [{"action": "open", "toolset": "game", "instance": "vs-ada",
                         "options": {"size": 13}, "reason": "Ada challenged you", "z": null}]});
        let h: HintChanges = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(h.extra["future"], json!([1]));
        assert_eq!(h.suggest.as_ref().unwrap()[0].action, SuggestAction::Open);
        assert_eq!(serde_json::to_value(&h).unwrap(), wire);
    }

    #[test]
    fn empty_statement_is_just_a_rev() {
        let h = HintChanges::new(Rev(1));
        assert!(h.is_empty());
        assert_eq!(serde_json::to_value(&h).unwrap(), json!({"rev": 1}));
    }

    #[test]
    fn push_members_flatten_beside_other_params() {
        #[derive(Serialize, Deserialize)]
        struct Params {
            #[serde(rename = "eventId")]
            event_id: String,
            #[serde(flatten)]
            rfc014: PushHintMembers,
        }
        let wire = json!({"eventId": "e1", "hints": {"rev": 4}, "toolset": "game",
                          "instance": "vs-bot"});
        let p: Params = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.rfc014.hints.as_ref().unwrap().rev, Rev(4));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }
}
