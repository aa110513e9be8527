//! The MCP `Tool` definition and its plain `_meta` access. RFC-014's accessors on it
//! (`toolset`, `visible`, ...; `presence` through `ToolHintsMeta::of`) are in
//! `rfc014/on_mcp.rs`, which builds on this.

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
    /// annotations and `_meta` over instead of rebuilding them (the crate's `owned` module
    /// says how); accepts and refuses what `serde_json::from_value` does.
    pub fn from_value(value: Value) -> Result<Tool, serde_json::Error> {
        use crate::owned::{missing, object, optional, optional_object, raw};
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
                "_meta" => tool.meta = optional_object(v)?,
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
}
