//! The subset of the Model Context Protocol this project speaks.
//!
//! Every type keeps members it does not know in `extra`.

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
    #[serde(rename = "outputSchema", default, skip_serializing_if = "Option::is_none")]
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
