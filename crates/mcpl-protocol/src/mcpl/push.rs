//! `push/event` (Server → Host, Request): MCPL §9, with the members RFC-014 adds (`hints`,
//! `toolset`, `instance`; RFC-014 §6, §9.2 as amended).
//!
//! The host admits a push by the grant first (`pushEvents`, an enabled feature set that uses
//! it; §5.4, §6.4); tags only shape treatment afterwards (§16.6). Its answer is `accepted`
//! true or false; a push the host has not answered yet is simply undecided, and its hints
//! still apply when read (RFC-014 §6.1).

use super::tags::{TagError, check_emitted_tag};
use crate::mcp::ContentBlock;
use crate::method::RequestMethod;
use crate::methods;
use crate::rfc014::HintChanges;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `push/event` params (§9.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PushEventParams {
    /// The declaring feature set; it must be enabled and use `pushEvents`.
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    /// Unique per event; the idempotency key (§9.4). A retry reuses it.
    #[serde(rename = "eventId")]
    pub event_id: String,
    /// When the event occurred (ISO 8601), kept as given.
    pub timestamp: String,
    /// Provenance, server-defined and untrusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Value>,
    /// The event payload.
    pub payload: PushPayload,
    /// Namespaced labels (§16); a set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// RFC-014: the hint changes the event explains. A push carrying them is never retried
    /// (RFC-014 §6.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<HintChanges>,
    /// RFC-014: the toolset the event is about (set it when `hints` is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset: Option<String>,
    /// RFC-014: the instance the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `payload` of a push.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushPayload {
    /// What the model is shown.
    pub content: Vec<ContentBlock>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PushEventParams {
    /// A push from `feature_set` with id `event_id`, at `timestamp`, showing `content`.
    pub fn new(
        feature_set: impl Into<String>,
        event_id: impl Into<String>,
        timestamp: impl Into<String>,
        content: Vec<ContentBlock>,
    ) -> Self {
        PushEventParams {
            feature_set: feature_set.into(),
            event_id: event_id.into(),
            timestamp: timestamp.into(),
            origin: None,
            payload: PushPayload {
                content,
                extra: Map::new(),
            },
            tags: None,
            hints: None,
            toolset: None,
            instance: None,
            extra: Map::new(),
        }
    }

    /// Checks the tags a producer is about to send (§16.1): namespaced, not reserved, no
    /// duplicates.
    pub fn check_tags(&self) -> Result<(), TagError> {
        let tags = self.tags.iter().flatten();
        tags.clone().try_for_each(|t| check_emitted_tag(t))?;
        let mut seen = std::collections::BTreeSet::new();
        match tags.clone().find(|t| !seen.insert(*t)) {
            Some(dup) => Err(TagError::Duplicate(dup.clone())),
            None => Ok(()),
        }
    }
}

/// `push/event` result (§9.3).
///
/// `accepted: false` is a treatment decision; authorization failures are JSON-RPC errors
/// (`-32002`, `-32001`, `-32003`), not results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PushEventResult {
    /// Whether the host took the event.
    pub accepted: bool,
    /// Present when the event triggered inference.
    #[serde(
        rename = "inferenceId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inference_id: Option<String>,
    /// Why the host did not take it (with `accepted: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PushEventResult {
    /// The event was taken, without triggering inference.
    pub fn accepted() -> Self {
        PushEventResult {
            accepted: true,
            inference_id: None,
            reason: None,
            extra: Map::new(),
        }
    }

    /// The event was taken and triggered inference `inference_id`.
    pub fn triggered(inference_id: impl Into<String>) -> Self {
        PushEventResult {
            inference_id: Some(inference_id.into()),
            ..Self::accepted()
        }
    }

    /// The event was turned down, for `reason`.
    pub fn refused(reason: impl Into<String>) -> Self {
        PushEventResult {
            accepted: false,
            reason: Some(reason.into()),
            ..Self::accepted()
        }
    }
}

/// `push/event` (Server → Host, Request).
#[derive(Debug, Clone, Copy)]
pub enum PushEvent {}

impl RequestMethod for PushEvent {
    const METHOD: &'static str = methods::PUSH_EVENT;
    type Params = PushEventParams;
    type Result = PushEventResult;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rfc014::Rev;
    use crate::test_util::round_trip;
    use serde_json::json;

    #[test]
    fn s9_1_spec_example_round_trips() {
        let p: PushEventParams = round_trip(json!({
            "featureSet": "gitlab.notifications",
            "eventId": "evt_abc123",
            "timestamp": "2026-01-23T10:30:00Z",
            "origin": {"server": "gitlab-integration", "webhook": "push", "repository": "acme/backend"},
            "payload": {"content": [{"type": "text",
                "text": "New commit on main by alice: 'fix auth bug' in acme/backend"}]}
        }));
        assert_eq!(p.payload.content[0].as_text().unwrap().len(), 59);
        assert!(p.hints.is_none());
    }

    #[test]
    fn rfc014_s6_push_with_hints_toolset_instance_and_unknown_members() {
        let p: PushEventParams = round_trip(json!({
            "featureSet": "arcade.events", "eventId": "go-g1-12",
            "timestamp": "2026-01-23T10:30:00Z",
            "payload": {"content": [{"type": "text", "text": "White played E5"}], "extra": 1},
            "tags": ["arcade:move", "chat:addressed"],
            "hints": {"rev": 7, "tools": [{"name": "play", "instance": "g1", "visible": true}]},
            "toolset": "go", "instance": "g1",
            "vendor": {"x": 1}
        }));
        assert_eq!(p.hints.as_ref().unwrap().rev, Rev(7));
        assert!(p.check_tags().is_ok());
        assert!(p.extra.contains_key("vendor"));
    }

    #[test]
    fn s9_2_required_members() {
        for missing in ["featureSet", "eventId", "timestamp", "payload"] {
            let mut wire = json!({"featureSet": "f", "eventId": "e", "timestamp": "t",
                "payload": {"content": []}});
            wire.as_object_mut().unwrap().remove(missing);
            assert!(
                serde_json::from_value::<PushEventParams>(wire).is_err(),
                "{missing}"
            );
        }
    }

    #[test]
    fn s16_1_producer_tag_checks() {
        let mut p = PushEventParams::new("f", "e", "t", vec![ContentBlock::text("x")]);
        p.tags = Some(vec!["mention".into()]);
        assert!(matches!(p.check_tags(), Err(TagError::NotNamespaced(_))));
        p.tags = Some(vec!["surface:x".into()]);
        assert!(matches!(p.check_tags(), Err(TagError::Reserved { .. })));
        p.tags = Some(vec!["a:b".into(), "a:b".into()]);
        assert_eq!(p.check_tags(), Err(TagError::Duplicate("a:b".into())));
    }

    #[test]
    fn s9_3_results_round_trip() {
        let r: PushEventResult = round_trip(json!({"accepted": true, "inferenceId": "inf_xyz"}));
        assert_eq!(r, PushEventResult::triggered("inf_xyz"));
        let r: PushEventResult = round_trip(json!({"accepted": false, "reason": "muted", "x": 1}));
        assert!(!r.accepted);
        assert_eq!(
            serde_json::to_value(PushEventResult::refused("muted")).unwrap(),
            json!({"accepted": false, "reason": "muted"})
        );
        assert_eq!(
            serde_json::to_value(PushEventResult::accepted()).unwrap(),
            json!({"accepted": true})
        );
    }
}
