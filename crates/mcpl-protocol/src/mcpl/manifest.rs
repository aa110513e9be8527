//! The server manifest and its change methods (MCPL §17.1, §17.3, §17.4, §17.6), with
//! RFC-014's domain `toolsets` (RFC-014 §5.1).
//!
//! The manifest is the server's whole `experimental.mcpl` object. [`Manifest`] keeps it
//! exactly as received, since its revision is a digest of that object (§17.2, [`super::digest`]).
//! Revisions are compared only for equality and are never believed: a host's own diff of the
//! fetched manifest decides (§17.1).

use super::capabilities::ServerCapabilities;
use super::digest::{DigestError, is_revision, json_type, manifest_revision, normalize_members};
use super::grant;
use crate::mcp::EmptyObject;
use crate::method::{NotificationMethod, RequestMethod};
use crate::methods;
use crate::rfc014::{SURFACE_KEY, TOOL_HINTS_KEY, TOOLSETS_KEY};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// A change domain of the manifest (§17.1, RFC-014 §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ChangeDomain {
    /// Every member except `version`, `revision`, `featureSets` and RFC-014's members.
    #[serde(rename = "capabilities")]
    Capabilities,
    /// `featureSets`, without any `tagOntology` inside.
    #[serde(rename = "featureSets")]
    FeatureSets,
    /// Every feature set's `tagOntology`.
    #[serde(rename = "tagOntology")]
    TagOntology,
    /// RFC-014: `toolHints`, `toolsets` and `surface`.
    #[serde(rename = "toolsets")]
    Toolsets,
}

impl ChangeDomain {
    /// The domain a root member belongs to; `None` for `version` and `revision`, which
    /// belong to none. `featureSets` answers [`ChangeDomain::FeatureSets`] (its ontologies are
    /// [`ChangeDomain::TagOntology`]).
    pub fn of_member(member: &str) -> Option<ChangeDomain> {
        match member {
            "version" | "revision" => None,
            "featureSets" => Some(ChangeDomain::FeatureSets),
            TOOL_HINTS_KEY | TOOLSETS_KEY | SURFACE_KEY => Some(ChangeDomain::Toolsets),
            _ => Some(ChangeDomain::Capabilities),
        }
    }

    /// The receipt entry a change in this domain always gets, where the spec fixes one:
    /// RFC-014 §5.1 maps `toolsets` to `surface-changed`, `applied`, and never to a
    /// capability impact. The other domains' impacts depend on the host's diff.
    pub fn fixed_impact(self) -> Option<ReceiptImpact> {
        match self {
            ChangeDomain::Toolsets => Some(ReceiptImpact {
                impact: ChangeImpact::SurfaceChanged,
                disposition: Disposition::Applied,
            }),
            _ => None,
        }
    }
}

/// The closed, host-derived impact vocabulary of a change receipt (§17.6, App. B.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeImpact {
    /// A capability in force is no longer granted.
    CapabilityRevoked,
    /// Newly advertised; awaiting a policy decision.
    CapabilityExpansionPending,
    /// A feature set was disabled by derivation.
    FeatureDegraded,
    /// A previously degraded feature set is available again.
    FeatureRestored,
    /// An accepted tag ontology no longer applies.
    OntologyAcceptanceInvalidated,
    /// A consumer rule references a tag the server no longer declares (informational by
    /// default).
    OntologyReferenceUndeclared,
    /// Tools, resources, prompts, channels or (RFC-014) toolsets changed.
    SurfaceChanged,
}

/// What the host did about an impact (§17.6, App. B.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// Already in effect.
    Applied,
    /// Waits for a resident or operator.
    DecisionNeeded,
    /// Nothing to do.
    Informational,
}

/// One impact of a change receipt with its disposition (§17.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReceiptImpact {
    /// The impact.
    pub impact: ChangeImpact,
    /// Its disposition.
    pub disposition: Disposition,
}

/// A server's manifest: its `experimental.mcpl` object, exactly as sent (§17.1).
///
/// It is also the `mcpl/manifest` result (§17.4), which is the object itself, not a wrapper.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Manifest(pub Map<String, Value>);

impl Manifest {
    /// The manifest held in `value`, which must be a JSON object.
    pub fn from_value(value: Value) -> Result<Manifest, DigestError> {
        match value {
            Value::Object(map) => Ok(Manifest(map)),
            other => Err(DigestError::ManifestNotObject {
                found: json_type(&other),
            }),
        }
    }

    /// The manifest of typed capabilities (its `revision` as set there).
    pub fn from_capabilities(caps: &ServerCapabilities) -> Result<Manifest, serde_json::Error> {
        serde_json::from_value(serde_json::to_value(caps)?)
    }

    /// The typed view. Fails when a known member has an unexpected type; the raw manifest
    /// and its digest are unaffected.
    pub fn capabilities(&self) -> Result<ServerCapabilities, serde_json::Error> {
        ServerCapabilities::deserialize(&Value::Object(self.0.clone()))
    }

    /// `version`, when a string.
    pub fn version(&self) -> Option<&str> {
        self.0.get("version").and_then(Value::as_str)
    }

    /// `revision` as stated by the server, when a string. Untrusted (§17.1).
    pub fn revision(&self) -> Option<&str> {
        self.0.get("revision").and_then(Value::as_str)
    }

    /// The §17.2 digest of this manifest (its stated `revision` is not part of it).
    pub fn compute_revision(&self) -> Result<String, DigestError> {
        manifest_revision(&Value::Object(self.0.clone()))
    }

    /// Sets `revision` to the computed digest, as a server does before presenting it.
    pub fn stamp_revision(&mut self) -> Result<&str, DigestError> {
        let revision = self.compute_revision()?;
        self.0
            .insert("revision".to_owned(), Value::String(revision));
        Ok(self.revision().unwrap_or_default())
    }

    /// Whether the stated revision equals the recomputed one; `None` when none is stated.
    /// A mismatch is a conformance defect, never grounds to reject the manifest (§17.2).
    pub fn revision_is_honest(&self) -> Option<Result<bool, DigestError>> {
        let stated = self.revision()?;
        Some(self.compute_revision().map(|r| r == stated))
    }

    /// Whether the server advertises RFC-014 (`toolHints: true`).
    pub fn has_tool_hints(&self) -> bool {
        self.0.get(TOOL_HINTS_KEY) == Some(&Value::Bool(true))
    }

    /// Whether the manifest advertises the capability `path` (§5.1 shorthand applied).
    pub fn advertises(&self, path: &str) -> bool {
        grant::advertises(&self.0, path)
    }

    /// The manifest a host without `toolHints` should see: RFC-014's members removed, since
    /// such a host classifies them as capabilities (RFC-014 §6.3, §11). The stated revision is
    /// dropped too; stamp it again if the server supports §17.
    pub fn without_toolset_members(&self) -> Manifest {
        let mut map = self.0.clone();
        for key in [TOOL_HINTS_KEY, TOOLSETS_KEY, SURFACE_KEY, "revision"] {
            map.remove(key);
        }
        Manifest(map)
    }

    /// The domains in which `next` differs from `self` (§17.3). An absent member and an
    /// empty one differ; set-valued arrays compare as sets, as in the digest. Fails when
    /// either manifest has no digest (an identifier outside the charset).
    pub fn changed_domains(&self, next: &Manifest) -> Result<BTreeSet<ChangeDomain>, DigestError> {
        let old = normalize_members(&self.0)?;
        let new = normalize_members(&next.0)?;
        let mut changed = BTreeSet::new();
        let members: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for member in members {
            let Some(domain) = ChangeDomain::of_member(member) else {
                continue;
            };
            let (a, b) = (old.get(member.as_str()), new.get(member.as_str()));
            if domain == ChangeDomain::FeatureSets {
                if without_ontologies(a) != without_ontologies(b) {
                    changed.insert(ChangeDomain::FeatureSets);
                }
                if ontologies(a) != ontologies(b) {
                    changed.insert(ChangeDomain::TagOntology);
                }
            } else if a != b {
                changed.insert(domain);
            }
        }
        Ok(changed)
    }
}

/// `featureSets` with every set's `tagOntology` removed (the `featureSets` domain).
fn without_ontologies(feature_sets: Option<&Value>) -> Option<Value> {
    let mut value = feature_sets?.clone();
    if let Value::Object(sets) = &mut value {
        for set in sets.values_mut() {
            if let Value::Object(decl) = set {
                decl.remove("tagOntology");
            }
        }
    }
    Some(value)
}

/// Every set's `tagOntology` by set name (the `tagOntology` domain). Absent `featureSets`
/// is `None`, so a carrier appearing is a change (§17.3).
fn ontologies(feature_sets: Option<&Value>) -> Option<Map<String, Value>> {
    let sets = feature_sets?;
    let mut out = Map::new();
    if let Value::Object(sets) = sets {
        for (name, set) in sets {
            if let Some(ontology) = set.get("tagOntology") {
                out.insert(name.clone(), ontology.clone());
            }
        }
    }
    Some(out)
}

/// A `mcpl/manifestChanged` notification that breaks App. B.3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestChangedError {
    /// `domains` is empty.
    #[error("`domains` is empty; a change names at least one domain")]
    NoDomains,
    /// `revision` does not have the shape `sha256:` + 43 base64url characters.
    #[error("revision `{0}` is not `sha256:` followed by 43 base64url characters")]
    BadRevision(String),
}

/// `mcpl/manifestChanged` params (§17.3): a revision and the changed domains, nothing else
/// (App. B.3 forbids other members, so unknown members are refused here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestChangedParams {
    /// The new manifest's revision.
    pub revision: String,
    /// The changed domains (non-empty).
    pub domains: Vec<ChangeDomain>,
}

impl ManifestChangedParams {
    /// The announcement of a change from `old` to `new`, or `None` when their revisions are
    /// equal (nothing to announce). The server seeds `old` from `initialize`, so no
    /// announcement follows the handshake (§17.10).
    pub fn between(old: &Manifest, new: &Manifest) -> Result<Option<Self>, DigestError> {
        let revision = new.compute_revision()?;
        if old.compute_revision()? == revision {
            return Ok(None);
        }
        let domains: Vec<ChangeDomain> = old.changed_domains(new)?.into_iter().collect();
        Ok((!domains.is_empty()).then_some(ManifestChangedParams { revision, domains }))
    }

    /// Checks what the decoder cannot: a non-empty `domains` and a well-shaped revision.
    pub fn check(&self) -> Result<(), ManifestChangedError> {
        if self.domains.is_empty() {
            return Err(ManifestChangedError::NoDomains);
        }
        if !is_revision(&self.revision) {
            return Err(ManifestChangedError::BadRevision(self.revision.clone()));
        }
        Ok(())
    }
}

/// `mcpl/manifest` (Host → Server, Request): params `{}`, result the whole manifest (§17.4).
#[derive(Debug, Clone, Copy)]
pub enum ManifestRequest {}

impl RequestMethod for ManifestRequest {
    const METHOD: &'static str = methods::MANIFEST;
    type Params = EmptyObject;
    type Result = Manifest;
}

/// `mcpl/manifestChanged` (Server → Host, Notification): a hint to fetch (§17.3).
#[derive(Debug, Clone, Copy)]
pub enum ManifestChanged {}

impl NotificationMethod for ManifestChanged {
    const METHOD: &'static str = methods::MANIFEST_CHANGED;
    type Params = ManifestChangedParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(v: Value) -> Manifest {
        Manifest::from_value(v).unwrap()
    }

    fn domains(old: Value, new: Value) -> Vec<ChangeDomain> {
        manifest(old)
            .changed_domains(&manifest(new))
            .unwrap()
            .into_iter()
            .collect()
    }

    #[test]
    fn s17_4_manifest_result_is_the_object_itself() {
        let wire = json!({"revision": "sha256:QLXa7BigUFzNlw_IWPSqpYbDzdvBX7PVQIPS5lgnkaw",
            "version": "0.5", "pushEvents": true, "contextHooks": {"beforeInference": true},
            "channels": {"register": true, "publish": true, "incoming": true},
            "featureSets": {"…": "…"}});
        let mut m: Manifest = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&m).unwrap(), wire);
        assert_eq!(m.version(), Some("0.5"));
        // The spec elides the sets as `"…"`, which is no identifier: no digest for this one.
        assert_eq!(
            m.revision_is_honest().unwrap().unwrap_err().code(),
            "identifier_charset"
        );
        m.0.remove("featureSets");
        assert_eq!(m.revision_is_honest().map(Result::unwrap), Some(false));
        assert!(m.advertises("channels.publish"));
        let params: EmptyObject = serde_json::from_value(json!({})).unwrap();
        assert_eq!(serde_json::to_value(params).unwrap(), json!({}));
    }

    #[test]
    fn s17_1_stamped_revision_is_honest_and_stable() {
        let mut m = manifest(json!({"version": "0.5", "pushEvents": true}));
        let first = m.stamp_revision().unwrap().to_owned();
        assert!(is_revision(&first));
        assert_eq!(m.revision_is_honest().map(Result::unwrap), Some(true));
        assert_eq!(
            m.stamp_revision().unwrap(),
            first,
            "the revision never covers itself"
        );
        assert!(Manifest::from_value(json!([])).is_err());
    }

    #[test]
    fn s17_3_manifest_changed_example_round_trips_and_is_closed() {
        let wire = json!({"revision": "sha256:QLXa7BigUFzNlw_IWPSqpYbDzdvBX7PVQIPS5lgnkaw",
            "domains": ["capabilities", "featureSets"]});
        let p: ManifestChangedParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(p.check().is_ok());
        let with_payload = json!({"revision": "sha256:x", "domains": ["capabilities"], "diff": {}});
        assert!(serde_json::from_value::<ManifestChangedParams>(with_payload).is_err());
        let bad: ManifestChangedParams =
            serde_json::from_value(json!({"revision": "sha256:x", "domains": []})).unwrap();
        assert_eq!(bad.check(), Err(ManifestChangedError::NoDomains));
        let bad = ManifestChangedParams {
            domains: vec![ChangeDomain::Toolsets],
            ..bad
        };
        assert!(matches!(
            bad.check(),
            Err(ManifestChangedError::BadRevision(_))
        ));
        assert!(
            serde_json::from_value::<ManifestChangedParams>(
                json!({"revision": "r", "domains": ["other"]})
            )
            .is_err()
        );
    }

    #[test]
    fn rfc014_s5_1_toolset_members_make_the_toolsets_domain() {
        for member in ["toolHints", "toolsets", "surface"] {
            assert_eq!(
                ChangeDomain::of_member(member),
                Some(ChangeDomain::Toolsets)
            );
        }
        assert_eq!(
            ChangeDomain::of_member("pushEvents"),
            Some(ChangeDomain::Capabilities)
        );
        assert_eq!(
            ChangeDomain::of_member("vendorX"),
            Some(ChangeDomain::Capabilities)
        );
        assert_eq!(
            ChangeDomain::of_member("featureSets"),
            Some(ChangeDomain::FeatureSets)
        );
        assert_eq!(ChangeDomain::of_member("version"), None);
        assert_eq!(ChangeDomain::of_member("revision"), None);
        assert_eq!(
            ChangeDomain::Toolsets.fixed_impact(),
            Some(ReceiptImpact {
                impact: ChangeImpact::SurfaceChanged,
                disposition: Disposition::Applied
            })
        );
        assert_eq!(
            serde_json::to_value(ChangeDomain::Toolsets).unwrap(),
            json!("toolsets")
        );
        let old = json!({"version": "0.5", "toolHints": true,
            "toolsets": {"go": {"title": "Go", "default": "closed"}}});
        let new = json!({"version": "0.5", "toolHints": true,
            "toolsets": {"go": {"title": "Go!", "default": "closed"}}});
        assert_eq!(domains(old, new), vec![ChangeDomain::Toolsets]);
    }

    #[test]
    fn s17_3_absent_differs_from_empty() {
        assert_eq!(
            domains(
                json!({"version": "0.5"}),
                json!({"version": "0.5", "featureSets": {}})
            ),
            vec![ChangeDomain::FeatureSets, ChangeDomain::TagOntology]
        );
        assert_eq!(
            domains(
                json!({"version": "0.5", "pushEvents": false}),
                json!({"version": "0.5"})
            ),
            vec![ChangeDomain::Capabilities]
        );
    }

    #[test]
    fn s17_3_domains_split_feature_sets_from_ontologies() {
        let base = json!({"version": "0.5", "featureSets": {"a": {"description": "d",
            "uses": ["tools", "pushEvents"], "tagOntology": {"coreTags": ["chat:dm"]}}}});
        let reordered = json!({"version": "0.6", "revision": "sha256:x", "featureSets": {"a": {
            "uses": ["pushEvents", "tools", "tools"], "description": "d",
            "tagOntology": {"coreTags": ["chat:dm"]}}}});
        assert_eq!(
            domains(base.clone(), reordered),
            vec![],
            "version, revision and set order are no change"
        );
        let mut onto = base.clone();
        onto["featureSets"]["a"]["tagOntology"]["coreTags"] = json!(["chat:reply"]);
        assert_eq!(domains(base.clone(), onto), vec![ChangeDomain::TagOntology]);
        let mut uses = base.clone();
        uses["featureSets"]["a"]["uses"] = json!(["tools"]);
        assert_eq!(domains(base, uses), vec![ChangeDomain::FeatureSets]);
    }

    #[test]
    fn s17_10_between_announces_only_real_changes() {
        let old = manifest(json!({"version": "0.5", "pushEvents": true}));
        assert_eq!(ManifestChangedParams::between(&old, &old).unwrap(), None);
        let new = manifest(json!({"version": "0.5", "pushEvents": true, "toolHints": true}));
        let p = ManifestChangedParams::between(&old, &new).unwrap().unwrap();
        assert_eq!(p.domains, vec![ChangeDomain::Toolsets]);
        assert_eq!(p.revision, new.compute_revision().unwrap());
        assert!(p.check().is_ok());
    }

    #[test]
    fn rfc014_s11_tailoring_removes_toolset_members() {
        let m = manifest(
            json!({"version": "0.5", "revision": "sha256:x", "toolHints": true,
            "toolsets": {}, "surface": {"title": "A"}, "pushEvents": true}),
        );
        let plain = m.without_toolset_members();
        assert_eq!(
            Value::Object(plain.0.clone()),
            json!({"version": "0.5", "pushEvents": true})
        );
        assert!(m.has_tool_hints() && !plain.has_tool_hints());
    }

    #[test]
    fn s17_6_impact_vocabulary_on_the_wire() {
        assert_eq!(
            serde_json::to_value(ChangeImpact::CapabilityExpansionPending).unwrap(),
            json!("capability-expansion-pending")
        );
        assert_eq!(
            serde_json::to_value(ChangeImpact::OntologyReferenceUndeclared).unwrap(),
            json!("ontology-reference-undeclared")
        );
        assert_eq!(
            serde_json::to_value(Disposition::DecisionNeeded).unwrap(),
            json!("decision-needed")
        );
    }

    #[test]
    fn typed_view_round_trips_through_the_manifest() {
        let caps = ServerCapabilities {
            push_events: Some(true),
            tool_hints: Some(true),
            ..Default::default()
        };
        let m = Manifest::from_capabilities(&caps).unwrap();
        assert_eq!(m.capabilities().unwrap(), caps);
        assert!(m.has_tool_hints());
    }
}
