//! `experimental.mcpl` on both sides of `initialize` (MCPL §3.1, §5.1, §5.2, §6.1–§6.2),
//! with RFC-014's `toolHints`, `toolsets` and `surface` (RFC-014 §5.1, §6.3).
//!
//! These are typed views for building and reading. The server's object is also its manifest
//! (§17.1), whose digest must be computed over the object exactly as sent: use
//! [`super::Manifest`] for that, never a re-serialized view.

use super::grant::USES_VOCABULARY;
use crate::rfc014::{Surface, ToolsetDecl};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The MCPL version this crate speaks (`experimental.mcpl.version`).
pub const MCPL_VERSION: &str = "0.5";

/// A server's `experimental.mcpl` (§5.1): what it can do, its feature sets and, with
/// RFC-014, its toolsets. Capability trees that may use the `true` shorthand stay raw JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// The MCPL version, `"0.5"`.
    pub version: String,
    /// The §17.2 digest of the manifest; absent when the manifest is fixed for the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The server can send `push/event` (§9).
    #[serde(
        rename = "pushEvents",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub push_events: Option<bool>,
    /// `contextHooks.beforeInference.{observe, inject.{system, beforeUser, afterUser}}`.
    #[serde(
        rename = "contextHooks",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub context_hooks: Option<Value>,
    /// The server wants `inference/lifecycle` notifications.
    #[serde(
        rename = "inferenceLifecycle",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inference_lifecycle: Option<bool>,
    /// `inferenceRequest` (`true` or `{streaming}`).
    #[serde(
        rename = "inferenceRequest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inference_request: Option<Value>,
    /// The server may ask `model/info`.
    #[serde(rename = "modelInfo", default, skip_serializing_if = "Option::is_none")]
    pub model_info: Option<bool>,
    /// `channels` (`true` or `{register, publish, ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Value>,
    /// The feature-set declarations by name, in name order (§6.1).
    #[serde(
        rename = "featureSets",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub feature_sets: Option<BTreeMap<String, FeatureSet>>,
    /// RFC-014: the server implements tool presence, toolsets and surfaces.
    #[serde(rename = "toolHints", default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// RFC-014: the declared toolsets by name, in name order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolsets: Option<BTreeMap<String, ToolsetDecl>>,
    /// RFC-014: how the server as a whole is presented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// Members this crate does not know (vendor extensions), kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for ServerCapabilities {
    fn default() -> Self {
        ServerCapabilities {
            version: MCPL_VERSION.to_owned(),
            revision: None,
            push_events: None,
            context_hooks: None,
            inference_lifecycle: None,
            inference_request: None,
            model_info: None,
            channels: None,
            feature_sets: None,
            tool_hints: None,
            toolsets: None,
            surface: None,
            extra: Map::new(),
        }
    }
}

impl ServerCapabilities {
    /// Whether the server said it implements RFC-014.
    pub fn has_tool_hints(&self) -> bool {
        self.tool_hints == Some(true)
    }
}

/// A host's `experimental.mcpl` (§5.2), mirroring the server's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostCapabilities {
    /// The MCPL version, `"0.5"`.
    pub version: String,
    /// The host accepts `push/event`.
    #[serde(
        rename = "pushEvents",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub push_events: Option<bool>,
    /// The host calls context hooks (`true` or a tree).
    #[serde(
        rename = "contextHooks",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub context_hooks: Option<Value>,
    /// The host sends `inference/lifecycle`.
    #[serde(
        rename = "inferenceLifecycle",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inference_lifecycle: Option<bool>,
    /// The host answers `inference/request` (`true` or `{streaming}`).
    #[serde(
        rename = "inferenceRequest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inference_request: Option<Value>,
    /// The host answers `model/info`.
    #[serde(rename = "modelInfo", default, skip_serializing_if = "Option::is_none")]
    pub model_info: Option<bool>,
    /// The host's channel support (`true` or a tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Value>,
    /// The host configures feature sets through `featureSets/update` (`true`).
    #[serde(
        rename = "featureSets",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub feature_sets: Option<Value>,
    /// RFC-014: the host understands tool hints (§6.3).
    #[serde(rename = "toolHints", default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for HostCapabilities {
    fn default() -> Self {
        HostCapabilities {
            version: MCPL_VERSION.to_owned(),
            push_events: None,
            context_hooks: None,
            inference_lifecycle: None,
            inference_request: None,
            model_info: None,
            channels: None,
            feature_sets: None,
            tool_hints: None,
            extra: Map::new(),
        }
    }
}

impl HostCapabilities {
    /// Whether the host said it understands RFC-014 hints. Servers send no hints otherwise
    /// (RFC-014 §6.3, vector 8).
    pub fn has_tool_hints(&self) -> bool {
        self.tool_hints == Some(true)
    }
}

/// A feature set as declared in `featureSets` (§6.1, §6.2, App. B.2).
///
/// `description` and `uses` are required by the schema, but a declaration missing them still
/// decodes: §6.4 disables it (`invalid_uses`) rather than failing the whole manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSet {
    /// What the feature set does, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The capability paths it uses (normally an array of [`USES_VOCABULARY`] strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uses: Option<Value>,
    /// Its event-tag ontology (§16.4), kept raw.
    #[serde(
        rename = "tagOntology",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tag_ontology: Option<Value>,
    /// Members this crate does not know (`rollback`, ...), kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a feature set's `uses` is invalid (§6.2, §6.4: the set is disabled as `invalid_uses`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidUses {
    /// `uses` is absent.
    #[error("`uses` is absent")]
    Absent,
    /// `uses` is not an array of strings.
    #[error("`uses` is not an array of strings")]
    NotStrings,
    /// `uses` is an empty array.
    #[error("`uses` is empty")]
    Empty,
    /// `uses` names a path outside the 17 of §6.2.
    #[error("`uses` names `{0}`, which is not a capability path of §6.2")]
    Unknown(String),
}

impl InvalidUses {
    /// The reason name of §6.6 for every variant.
    pub const REASON: &'static str = "invalid_uses";
}

impl FeatureSet {
    /// A feature set described by `description` that uses `uses`.
    pub fn new<I, S>(description: impl Into<String>, uses: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FeatureSet {
            description: Some(description.into()),
            uses: Some(Value::Array(
                uses.into_iter().map(|s| Value::String(s.into())).collect(),
            )),
            tag_ontology: None,
            extra: Map::new(),
        }
    }

    /// The `uses` paths when valid (§6.2): a non-empty array of known paths. Fails closed:
    /// anything else makes the set invalid (§6.4 rule 1).
    pub fn valid_uses(&self) -> Result<Vec<&str>, InvalidUses> {
        let uses = self.uses.as_ref().ok_or(InvalidUses::Absent)?;
        let items = uses.as_array().ok_or(InvalidUses::NotStrings)?;
        if items.is_empty() {
            return Err(InvalidUses::Empty);
        }
        items
            .iter()
            .map(|item| {
                let path = item.as_str().ok_or(InvalidUses::NotStrings)?;
                if USES_VOCABULARY.contains(&path) {
                    Ok(path)
                } else {
                    Err(InvalidUses::Unknown(path.to_owned()))
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::round_trip;
    use serde_json::json;

    #[test]
    fn s5_1_server_capabilities_round_trip() {
        let caps: ServerCapabilities = round_trip(json!({
            "version": "0.5",
            "revision": "sha256:QLXa7BigUFzNlw_IWPSqpYbDzdvBX7PVQIPS5lgnkaw",
            "pushEvents": true,
            "contextHooks": {"beforeInference": {"observe": true,
                "inject": {"system": false, "beforeUser": true, "afterUser": true}}},
            "inferenceLifecycle": true,
            "inferenceRequest": {"streaming": true},
            "modelInfo": true,
            "channels": {"register": true, "publish": true, "incoming": true},
            "featureSets": {
                "memory.retrieval": {"description": "Retrieve", "uses": ["contextHooks.beforeInference.observe"]},
                "memory.proactive": {"description": "Push", "uses": ["pushEvents"], "rollback": true}
            },
            "vendorThing": {"a": 1}
        }));
        assert_eq!(caps.push_events, Some(true));
        assert!(caps.extra.contains_key("vendorThing"));
        assert!(!caps.has_tool_hints());
    }

    #[test]
    fn rfc014_s5_1_server_capabilities_with_toolsets_round_trip() {
        let caps: ServerCapabilities = round_trip(json!({
            "version": "0.5", "pushEvents": true, "toolHints": true,
            "toolsets": {"game": {"title": "Go", "summary": "A game of Go",
                "default": "closed", "instances": true,
                "options": {"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}}}},
            "surface": {"title": "Arcade", "summary": "Games"}
        }));
        assert!(caps.has_tool_hints());
        assert!(caps.toolsets.unwrap()["game"].is_instanced());
    }

    #[test]
    fn s5_2_host_capabilities_round_trip() {
        let caps: HostCapabilities = round_trip(json!({
            "version": "0.5", "pushEvents": true, "contextHooks": {"beforeInference": true},
            "inferenceLifecycle": true, "inferenceRequest": {"streaming": true},
            "channels": {"register": true, "publish": true, "incoming": true},
            "featureSets": true, "toolHints": true, "vendor": [1]
        }));
        assert!(caps.has_tool_hints());
        let fresh = serde_json::to_value(HostCapabilities::default()).unwrap();
        assert_eq!(fresh, json!({"version": "0.5"}));
    }

    #[test]
    fn s6_4_uses_fails_closed() {
        let ok = FeatureSet::new("d", ["pushEvents", "tools"]);
        assert_eq!(ok.valid_uses().unwrap(), vec!["pushEvents", "tools"]);
        let cases = [
            (json!({"description": "d"}), InvalidUses::Absent),
            (
                json!({"description": "d", "uses": "tools"}),
                InvalidUses::NotStrings,
            ),
            (
                json!({"description": "d", "uses": ["tools", 1]}),
                InvalidUses::NotStrings,
            ),
            (json!({"description": "d", "uses": []}), InvalidUses::Empty),
            (
                json!({"description": "d", "uses": ["contextHooks.beforeInference"]}),
                InvalidUses::Unknown("contextHooks.beforeInference".into()),
            ),
        ];
        for (wire, want) in cases {
            let set: FeatureSet = round_trip(wire);
            assert_eq!(set.valid_uses().unwrap_err(), want);
        }
    }
}
