//! The MCP `Tool` definition, with helpers for RFC-014's tool `_meta` keys (RFC-014 §4.1).

use crate::rfc014::meta::{PRESENCE_KEY, Presence, TOOLSET_KEY, ToolHintsMeta, VISIBLE_KEY};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool as listed by `tools/list` (and as a hint `definition`, RFC-014 §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The tool's name, unique within its server.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does. Kept as raw JSON: a peer may send a non-string (H70).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Value>,
    /// The JSON Schema of the tool's arguments.
    #[serde(rename = "inputSchema", default = "empty_object_schema")]
    pub input_schema: Value,
    /// The JSON Schema of structured results, if any.
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
    /// Behaviour annotations (read-only, destructive, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`, where RFC-014's `mcpl/presence`, `mcpl/visible` and `mcpl/toolset` live.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl Tool {
    /// Decodes a tool from a value the caller owns, moving its schemas, description,
    /// annotations and `_meta` over instead of rebuilding them (see [`crate::owned`]'s
    /// module doc); accepts and refuses what `serde_json::from_value` does.
    pub fn from_value(value: Value) -> Result<Tool, serde_json::Error> {
        use crate::owned::{missing, object, optional, raw};
        let mut tool = Tool {
            name: String::new(),
            title: None,
            description: None,
            input_schema: Value::Null,
            output_schema: None,
            annotations: None,
            meta: None,
            extra: Map::new(),
        };
        let mut name = None;
        let mut schema = None;
        for (key, v) in object(value, "struct Tool")? {
            match key.as_str() {
                "name" => name = Some(crate::owned::typed(v)?),
                "title" => tool.title = optional(v)?,
                "description" => tool.description = raw(v),
                "inputSchema" => schema = Some(v),
                "outputSchema" => tool.output_schema = raw(v),
                "annotations" => tool.annotations = raw(v),
                "_meta" => tool.meta = optional(v)?,
                _ => {
                    tool.extra.insert(key, v);
                }
            }
        }
        tool.name = name.ok_or_else(|| missing("name"))?;
        tool.input_schema = schema.unwrap_or_else(empty_object_schema);
        Ok(tool)
    }

    /// A tool named `name` whose arguments are any object, with nothing else set.
    pub fn new(name: impl Into<String>) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: empty_object_schema(),
            output_schema: None,
            annotations: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// The description when it is a string (H70: a peer may send something else).
    pub fn description_str(&self) -> Option<&str> {
        self.description.as_ref().and_then(Value::as_str)
    }

    /// One `_meta` member.
    pub fn meta_value(&self, key: &str) -> Option<&Value> {
        self.meta.as_ref()?.get(key)
    }

    /// Sets (`Some`) or removes (`None`) one `_meta` member. Removing the last member drops
    /// `_meta` altogether, so a tool without hints is written as plain MCP.
    pub fn set_meta_value(&mut self, key: &str, value: Option<Value>) {
        match value {
            Some(v) => {
                self.meta
                    .get_or_insert_with(Map::new)
                    .insert(key.to_owned(), v);
            }
            None => {
                if let Some(meta) = &mut self.meta {
                    meta.remove(key);
                    if meta.is_empty() {
                        self.meta = None;
                    }
                }
            }
        }
    }

    /// The RFC-014 `_meta` members (§4.1); a member of the wrong type reads as absent.
    pub fn hints_meta(&self) -> ToolHintsMeta {
        ToolHintsMeta::read(self.meta.as_ref())
    }

    /// Writes the RFC-014 `_meta` members, removing those `hints` leaves absent.
    pub fn set_hints_meta(&mut self, hints: &ToolHintsMeta) {
        let meta = self.meta.get_or_insert_with(Map::new);
        hints.write(meta);
        if meta.is_empty() {
            self.meta = None;
        }
    }

    /// Removes every RFC-014 `_meta` member (§6.3: tailoring for a host without `toolHints`).
    pub fn strip_hints_meta(&mut self) {
        self.set_hints_meta(&ToolHintsMeta::default());
    }

    /// `mcpl/presence` as stated.
    pub fn presence(&self) -> Option<Presence> {
        self.hints_meta().presence
    }

    /// Sets or removes `mcpl/presence`.
    pub fn set_presence(&mut self, presence: Option<Presence>) {
        let value = presence.map(|p| match p {
            Presence::Static => Value::from("static"),
            Presence::Dynamic => Value::from("dynamic"),
        });
        self.set_meta_value(PRESENCE_KEY, value);
    }

    /// The presence in force: dynamic with a toolset, else as stated, else static (§4.1).
    pub fn effective_presence(&self) -> Presence {
        self.hints_meta().effective_presence()
    }

    /// `mcpl/visible` as stated.
    pub fn visible(&self) -> Option<bool> {
        self.meta_value(VISIBLE_KEY).and_then(Value::as_bool)
    }

    /// Sets or removes `mcpl/visible`.
    pub fn set_visible(&mut self, visible: Option<bool>) {
        self.set_meta_value(VISIBLE_KEY, visible.map(Value::from));
    }

    /// Whether the tool is usable now: as stated, else visible (§4.1).
    pub fn is_visible(&self) -> bool {
        self.visible().unwrap_or(true)
    }

    /// `mcpl/toolset`: the toolset the tool belongs to, kept as given.
    pub fn toolset(&self) -> Option<&str> {
        self.meta_value(TOOLSET_KEY).and_then(Value::as_str)
    }

    /// Sets or removes `mcpl/toolset`.
    pub fn set_toolset(&mut self, toolset: Option<&str>) {
        self.set_meta_value(TOOLSET_KEY, toolset.map(Value::from));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_round_trips_with_unknown_members() {
        let wire = json!({
            "name": "play", "title": "Play", "description": {"not": "a string"},
            "inputSchema": {"type": "object", "properties": {"move": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": false},
            "_meta": {"mcpl/toolset": "go", "mcpl/visible": false, "vendor/x": 1},
            "icons": [{"src": "x.png"}]
        });
        let tool: Tool = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(tool.description_str(), None);
        assert!(tool.extra.contains_key("icons"));
        assert_eq!(serde_json::to_value(&tool).unwrap(), wire);
    }

    #[test]
    fn missing_input_schema_reads_as_any_object() {
        let tool: Tool = serde_json::from_value(json!({"name": "t"})).unwrap();
        assert_eq!(tool.input_schema, json!({"type": "object"}));
    }

    #[test]
    fn s4_1_meta_defaults_and_toolset_forces_dynamic() {
        let mut tool = Tool::new("board");
        assert_eq!(tool.presence(), None);
        assert_eq!(tool.effective_presence(), Presence::Static);
        assert!(tool.is_visible());
        tool.set_presence(Some(Presence::Static));
        tool.set_toolset(Some("go"));
        assert_eq!(tool.toolset(), Some("go"));
        assert_eq!(tool.effective_presence(), Presence::Dynamic);
        tool.set_visible(Some(false));
        assert!(!tool.is_visible());
        assert_eq!(
            serde_json::to_value(&tool).unwrap()["_meta"],
            json!({"mcpl/presence": "static", "mcpl/toolset": "go", "mcpl/visible": false})
        );
    }

    #[test]
    fn s6_3_stripping_hints_keeps_other_meta_and_drops_an_empty_meta() {
        let mut tool = Tool::new("t");
        tool.set_toolset(Some("go"));
        tool.set_visible(Some(true));
        tool.strip_hints_meta();
        assert_eq!(tool.meta, None);
        tool.set_meta_value("vendor/x", Some(json!(1)));
        tool.set_presence(Some(Presence::Dynamic));
        tool.strip_hints_meta();
        assert_eq!(
            tool.meta,
            Some(json!({"vendor/x": 1}).as_object().unwrap().clone())
        );
    }

    #[test]
    fn wrong_typed_meta_reads_as_absent() {
        let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {},
            "_meta": {"mcpl/presence": "sideways", "mcpl/visible": "yes", "mcpl/toolset": 3}}))
        .unwrap();
        assert_eq!(tool.presence(), None);
        assert_eq!(tool.visible(), None);
        assert_eq!(tool.toolset(), None);
    }
}
