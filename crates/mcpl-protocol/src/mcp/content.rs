//! Content blocks: what a tool result or a pushed event shows the model (MCP; MCPL App. B.1).
//!
//! Text blocks are typed; every other kind (image, audio, resource, resource links, and kinds
//! added later) is kept as the raw JSON object, so a message passed through is unchanged.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{"type": "text", "text": ...}`.
    Text(TextContent),
    /// Any other block, kept verbatim (always a JSON object with a `type`).
    Other(Map<String, Value>),
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// MCP annotations (audience, priority, ...), kept raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta` of the block.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ContentBlock {
    /// A text block holding `text`.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// The block's `type` member (`"text"`, `"image"`, ...), if it has a string one.
    pub fn kind(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(_) => Some("text"),
            ContentBlock::Other(map) => map.get("type").and_then(Value::as_str),
        }
    }

    /// Whether `value` decodes as a content block, told without decoding it: an object with
    /// a string `type`; a text block also needs a string `text`, and its `_meta`, if any, is
    /// an object (or null).
    pub fn is_well_formed(value: &Value) -> bool {
        let Value::Object(block) = value else {
            return false;
        };
        match block.get("type") {
            Some(Value::String(kind)) if kind == "text" => {
                matches!(block.get("text"), Some(Value::String(_)))
                    && matches!(
                        block.get("_meta"),
                        None | Some(Value::Null | Value::Object(_))
                    )
            }
            Some(Value::String(_)) => true,
            _ => false,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            ContentBlock::Other(_) => None,
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(t) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", &t.text)?;
                if let Some(a) = &t.annotations {
                    map.serialize_entry("annotations", a)?;
                }
                if let Some(m) = &t.meta {
                    map.serialize_entry("_meta", m)?;
                }
                for (k, v) in &t.extra {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            ContentBlock::Other(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        match map.get("type") {
            Some(Value::String(kind)) if kind == "text" => {
                map.remove("type");
                let text: TextContent =
                    serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
                Ok(ContentBlock::Text(text))
            }
            Some(Value::String(_)) => Ok(ContentBlock::Other(map)),
            _ => Err(D::Error::custom(
                "content block has no string `type` member",
            )),
        }
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(wire: Value) -> ContentBlock {
        let block: ContentBlock = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), wire);
        block
    }

    #[test]
    fn text_block_round_trips_with_unknown_members() {
        let block = round_trip(json!({"type": "text", "text": "hi",
            "annotations": {"priority": 1}, "_meta": {"k": 1}, "vendor": true}));
        assert_eq!(block.as_text(), Some("hi"));
        let ContentBlock::Text(t) = block else {
            panic!("not text")
        };
        assert_eq!(t.extra.get("vendor"), Some(&json!(true)));
    }

    #[test]
    fn b1_other_kinds_are_kept_raw() {
        for wire in [
            json!({"type": "image", "data": "iVBORw0KGgo...", "mimeType": "image/png"}),
            json!({"type": "audio", "uri": "memory://a.wav"}),
            json!({"type": "resource", "uri": "memory://facts/12345"}),
            json!({"type": "resource_link", "uri": "file:///x", "name": "x"}),
        ] {
            let block = round_trip(wire.clone());
            assert_eq!(block.kind(), wire["type"].as_str());
            assert_eq!(block.as_text(), None);
        }
    }

    #[test]
    fn a_block_without_type_or_with_bad_text_is_refused() {
        assert!(serde_json::from_value::<ContentBlock>(json!({"text": "x"})).is_err());
        assert!(serde_json::from_value::<ContentBlock>(json!({"type": 1})).is_err());
        assert!(serde_json::from_value::<ContentBlock>(json!({"type": "text"})).is_err());
        assert!(serde_json::from_value::<ContentBlock>(json!("plain")).is_err());
    }
}
