//! `featureSets/update`: the host's policy and the server's degradation receipt (MCPL §5.3,
//! §5.4, §6.4, §6.7).
//!
//! Every grant change is a Request (§6.7). Field semantics (§5.3): an absent
//! `effectiveCapabilities` grants nothing; an absent `enabled` constrains nothing while a
//! present one is an allowlist; `disabled` always subtracts. `deniedCapabilities` is
//! diagnostic only and never takes part in a decision.

use super::capabilities::{FeatureSet, InvalidUses};
use super::grant::{Grant, pattern_matches};
use crate::method::{NotificationMethod, RequestMethod};
use crate::methods;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A policy message that must be rejected as malformed (§5.4: fail closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A denied path is also granted: equal to, or matched by, an `effectiveCapabilities`
    /// entry.
    #[error("capability `{denied}` is both denied and granted (by `{granted}`)")]
    GrantedAndDenied {
        /// The `deniedCapabilities` entry.
        denied: String,
        /// The `effectiveCapabilities` entry that grants it.
        granted: String,
    },
}

/// `featureSets/update` params (§5.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSetsUpdateParams {
    /// The effective grant: the only allowlist (§5.4). Absent grants nothing.
    #[serde(
        rename = "effectiveCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub effective_capabilities: Option<Vec<String>>,
    /// Paths the host denied; diagnostic only.
    #[serde(
        rename = "deniedCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub denied_capabilities: Option<Vec<String>>,
    /// Feature sets selected (an allowlist when present); names may use `*` per segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Feature sets switched off; always subtracts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Vec<String>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a declared feature set is not in use under a policy (§6.4, §6.6).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DisabledReason {
    /// Its `uses` is absent, empty or names an unknown path (`invalid_uses`).
    InvalidUses(InvalidUses),
    /// `disabled` names it.
    Disabled,
    /// `enabled` is present and does not name it (`not_selected`).
    NotSelected,
    /// The grant lacks some of the paths it uses (`capability_denied`).
    CapabilityDenied(Vec<String>),
}

impl DisabledReason {
    /// The reason name (`invalid_uses`, `disabled`, `not_selected`, `capability_denied`).
    pub fn name(&self) -> &'static str {
        match self {
            DisabledReason::InvalidUses(_) => InvalidUses::REASON,
            DisabledReason::Disabled => "disabled",
            DisabledReason::NotSelected => "not_selected",
            DisabledReason::CapabilityDenied(_) => "capability_denied",
        }
    }
}

impl FeatureSetsUpdateParams {
    /// A policy granting `capabilities` and nothing else.
    pub fn granting<I, S>(capabilities: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FeatureSetsUpdateParams {
            effective_capabilities: Some(capabilities.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    /// The grant this policy establishes: empty when `effectiveCapabilities` is absent.
    pub fn grant(&self) -> Grant {
        Grant::new(self.effective_capabilities.iter().flatten().cloned())
    }

    /// Rejects a contradictory policy (§5.4): a denied path that a granted entry equals or
    /// matches. Fail-closed reading: `channels.*` granted with `channels.typing` denied is
    /// contradictory too, since the grant would allow what the host says it denied.
    pub fn check(&self) -> Result<(), PolicyError> {
        for denied in self.denied_capabilities.iter().flatten() {
            if let Some(granted) = self
                .effective_capabilities
                .iter()
                .flatten()
                .find(|g| pattern_matches(g, denied))
            {
                return Err(PolicyError::GrantedAndDenied {
                    denied: denied.clone(),
                    granted: granted.clone(),
                });
            }
        }
        Ok(())
    }

    /// Whether the message carries anything beyond descriptive metadata: a grant,
    /// a selection, or a subtraction (§6.7).
    pub fn is_grant_bearing(&self) -> bool {
        self.effective_capabilities.is_some()
            || self.denied_capabilities.is_some()
            || self.enabled.is_some()
            || self.disabled.is_some()
    }

    /// What a server may take from a grant-bearing Notification (§6.7): only a narrowing
    /// `disabled`. Everything else is ignored, and the Notification establishes no ready
    /// state.
    pub fn narrowing_only(&self) -> Option<Vec<String>> {
        self.disabled.clone()
    }

    /// Whether the feature set `name` with declaration `set` is in use under this policy, and
    /// if not, why (§5.3, §6.4). Checked in fail-closed order: invalid `uses`, then
    /// `disabled`, then the `enabled` allowlist, then the grant.
    pub fn feature_set_state(&self, name: &str, set: &FeatureSet) -> Result<(), DisabledReason> {
        let uses = set.valid_uses().map_err(DisabledReason::InvalidUses)?;
        let names =
            |list: &Option<Vec<String>>| list.iter().flatten().any(|p| pattern_matches(p, name));
        if names(&self.disabled) {
            return Err(DisabledReason::Disabled);
        }
        if self.enabled.is_some() && !names(&self.enabled) {
            return Err(DisabledReason::NotSelected);
        }
        let grant = self.grant();
        let missing: Vec<String> = uses
            .into_iter()
            .filter(|p| !grant.allows(p))
            .map(str::to_owned)
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(DisabledReason::CapabilityDenied(missing))
        }
    }
}

/// What a refusing server says follows (§6.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fallback {
    /// Disable MCPL and keep plain MCP (§3.2).
    #[serde(rename = "mcp-only")]
    McpOnly,
    /// Close the transport.
    #[serde(rename = "close")]
    Close,
}

/// The `mode` of a receipt in which something degraded.
pub const MODE_DEGRADED: &str = "degraded";

/// One feature set a receipt reports as unavailable (§6.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnavailableFeature {
    /// The feature set.
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    /// The capabilities it lacks.
    #[serde(
        rename = "missingCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub missing_capabilities: Option<Vec<String>>,
    /// What the server does about it, for example `"disabled"` (required).
    pub effect: String,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A receipt that breaks §6.7.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// `accepted: false` without `fallback`.
    #[error("a refusal must name its `fallback`")]
    RefusalWithoutFallback,
}

/// `featureSets/update` result: the server's degradation receipt or refusal (§6.7).
///
/// A receipt is testimony, never authority: a host must not widen a grant because of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureSetsUpdateResult {
    /// `true` for a receipt, `false` for a refusal.
    pub accepted: bool,
    /// `"degraded"` when something degraded; omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The feature sets that are unavailable, each with its effect.
    #[serde(
        rename = "unavailableFeatures",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unavailable_features: Option<Vec<UnavailableFeature>>,
    /// Free-form notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<Value>>,
    /// What follows a refusal; required when `accepted` is `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// A refusal's missing capabilities.
    #[serde(
        rename = "missingCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub missing_capabilities: Option<Vec<String>>,
    /// A refusal's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FeatureSetsUpdateResult {
    /// A receipt in which nothing degraded (no `mode`).
    pub fn accepted() -> Self {
        FeatureSetsUpdateResult {
            accepted: true,
            mode: None,
            unavailable_features: None,
            notes: None,
            fallback: None,
            missing_capabilities: None,
            reason: None,
            extra: Map::new(),
        }
    }

    /// A receipt listing `unavailable` features; `mode` is `"degraded"` unless the list is
    /// empty.
    pub fn degraded(unavailable: Vec<UnavailableFeature>) -> Self {
        if unavailable.is_empty() {
            return Self::accepted();
        }
        FeatureSetsUpdateResult {
            mode: Some(MODE_DEGRADED.to_owned()),
            unavailable_features: Some(unavailable),
            ..Self::accepted()
        }
    }

    /// A refusal naming its consequence.
    pub fn refused(fallback: Fallback, reason: impl Into<String>) -> Self {
        FeatureSetsUpdateResult {
            accepted: false,
            fallback: Some(fallback),
            reason: Some(reason.into()),
            ..Self::accepted()
        }
    }

    /// Checks §6.7's shape rules a decoder cannot (a refusal names its `fallback`).
    pub fn check(&self) -> Result<(), ReceiptError> {
        if !self.accepted && self.fallback.is_none() {
            return Err(ReceiptError::RefusalWithoutFallback);
        }
        Ok(())
    }
}

/// `featureSets/update` as a Request (Host → Server): the only carrier of a grant change.
#[derive(Debug, Clone, Copy)]
pub enum FeatureSetsUpdate {}

impl RequestMethod for FeatureSetsUpdate {
    const METHOD: &'static str = methods::FEATURE_SETS_UPDATE;
    type Params = FeatureSetsUpdateParams;
    type Result = FeatureSetsUpdateResult;
}

/// `featureSets/update` as a Notification: descriptive only; a server applies no more than
/// its `disabled` list (§6.7).
#[derive(Debug, Clone, Copy)]
pub enum FeatureSetsUpdateNotification {}

impl NotificationMethod for FeatureSetsUpdateNotification {
    const METHOD: &'static str = methods::FEATURE_SETS_UPDATE;
    type Params = FeatureSetsUpdateParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::round_trip;
    use serde_json::json;

    #[test]
    fn s5_3_policy_example_round_trips() {
        let p: FeatureSetsUpdateParams = round_trip(json!({
            "effectiveCapabilities": ["tools", "channels.publish", "contextHooks.beforeInference.observe"],
            "deniedCapabilities": ["contextHooks.beforeInference.inject.system"],
            "enabled": ["memory.retrieval"],
            "disabled": ["memory.extraction"],
            "futureField": 1
        }));
        assert!(p.check().is_ok());
        assert!(p.grant().allows("channels.publish"));
        assert!(
            !p.grant()
                .allows("contextHooks.beforeInference.inject.system")
        );
    }

    #[test]
    fn s5_3_absent_effective_capabilities_grants_nothing() {
        let p: FeatureSetsUpdateParams = round_trip(json!({}));
        assert!(!p.grant().allows("pushEvents"));
        assert!(!p.is_grant_bearing());
    }

    #[test]
    fn s5_4_a_path_both_granted_and_denied_is_malformed() {
        let p: FeatureSetsUpdateParams = serde_json::from_value(json!({
            "effectiveCapabilities": ["pushEvents"], "deniedCapabilities": ["pushEvents"]}))
        .unwrap();
        assert_eq!(
            p.check(),
            Err(PolicyError::GrantedAndDenied {
                denied: "pushEvents".into(),
                granted: "pushEvents".into()
            })
        );
        let p: FeatureSetsUpdateParams = serde_json::from_value(json!({
            "effectiveCapabilities": ["channels.*"], "deniedCapabilities": ["channels.typing"]}))
        .unwrap();
        assert!(
            p.check()
                .unwrap_err()
                .to_string()
                .contains("channels.typing")
        );
    }

    #[test]
    fn s6_7_a_notification_may_only_narrow() {
        let p: FeatureSetsUpdateParams = serde_json::from_value(json!({
            "effectiveCapabilities": ["*"], "enabled": ["x"], "disabled": ["y"]}))
        .unwrap();
        assert!(p.is_grant_bearing());
        assert_eq!(p.narrowing_only(), Some(vec!["y".to_owned()]));
    }

    #[test]
    fn s5_3_s6_4_feature_set_derivation() {
        let push = FeatureSet::new("push", ["pushEvents"]);
        let tools = FeatureSet::new("tools", ["tools"]);
        let bad = FeatureSet::new("bad", ["scope.elevate"]);
        let p = FeatureSetsUpdateParams::granting(["pushEvents"]);
        assert_eq!(p.feature_set_state("a.push", &push), Ok(()));
        let Err(DisabledReason::CapabilityDenied(missing)) = p.feature_set_state("a.tools", &tools)
        else {
            panic!("tools is not granted")
        };
        assert_eq!(missing, vec!["tools"]);
        assert_eq!(
            p.feature_set_state("a.bad", &bad).unwrap_err().name(),
            "invalid_uses"
        );

        // A present `enabled` is an allowlist; naming a set never supplies what `uses` lacks.
        let p = FeatureSetsUpdateParams {
            enabled: Some(vec!["a.*".into()]),
            disabled: Some(vec!["a.off".into()]),
            ..FeatureSetsUpdateParams::granting(["pushEvents"])
        };
        assert_eq!(p.feature_set_state("a.push", &push), Ok(()));
        assert_eq!(
            p.feature_set_state("b.push", &push),
            Err(DisabledReason::NotSelected)
        );
        assert_eq!(
            p.feature_set_state("a.off", &push),
            Err(DisabledReason::Disabled)
        );
        assert_eq!(
            p.feature_set_state("a.tools", &tools).unwrap_err().name(),
            "capability_denied"
        );
    }

    #[test]
    fn s6_7_receipt_examples_round_trip() {
        let r: FeatureSetsUpdateResult = round_trip(json!({
            "accepted": true, "mode": "degraded",
            "unavailableFeatures": [{"featureSet": "memory.extraction",
                "missingCapabilities": ["inferenceLifecycle"], "effect": "disabled", "since": 3}],
            "notes": [],
            "vendor": {"k": 1}
        }));
        assert!(r.check().is_ok());
        let r: FeatureSetsUpdateResult =
            round_trip(json!({"accepted": false, "fallback": "mcp-only",
            "missingCapabilities": ["contextHooks.beforeInference.inject.system"], "reason": "…"}));
        assert_eq!(r.fallback, Some(Fallback::McpOnly));
        let r: FeatureSetsUpdateResult =
            serde_json::from_value(json!({"accepted": false})).unwrap();
        assert_eq!(r.check(), Err(ReceiptError::RefusalWithoutFallback));
        assert!(
            serde_json::from_value::<FeatureSetsUpdateResult>(json!({"accepted": true,
            "unavailableFeatures": [{"featureSet": "x"}]}))
            .is_err(),
            "effect is required"
        );
    }

    #[test]
    fn s6_7_constructors_omit_mode_when_nothing_degraded() {
        assert_eq!(
            serde_json::to_value(FeatureSetsUpdateResult::accepted()).unwrap(),
            json!({"accepted": true})
        );
        assert_eq!(
            FeatureSetsUpdateResult::degraded(vec![]),
            FeatureSetsUpdateResult::accepted()
        );
        let r = FeatureSetsUpdateResult::refused(Fallback::Close, "no");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"accepted": false, "fallback": "close", "reason": "no"})
        );
    }
}
