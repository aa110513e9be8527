//! The canonical manifest digest (MCPL §17.2):
//! `revision = "sha256:" + base64url_unpadded(SHA-256(JCS(manifest minus root revision)))`.
//!
//! The steps, in order:
//!
//! 1. Strip `revision` from the root object only; a nested `revision` is content, and
//!    `version`, `false` and `null` stay.
//! 2. Sort (by UTF-8 bytes) and deduplicate the three set-valued arrays
//!    `featureSets.*.uses`, `featureSets.*.tagOntology.coreTags` and
//!    `featureSets.*.tagOntology.tags.*.implies`, but only when the value is an all-string
//!    array inside an object-keyed `featureSets`. Every other array is a list and keeps its
//!    order.
//! 3. Refuse (`identifier_charset`) any identifier outside `[A-Za-z0-9._:*-]+`: capability
//!    member names at every depth, feature-set names, `uses`, `coreTags`, `tags` keys,
//!    `implies`, `keyed` keys and values, and `suggestedTreatment` matchers.
//! 4. Canonicalize with RFC 8785 (JCS): members sorted by UTF-16 code units, ECMAScript number
//!    formatting and string escapes.
//! 5. Hash and encode.
//!
//! The digest is total otherwise: a wrong-typed set member, an array-shaped `featureSets` or
//! a set holding a non-string is hashed verbatim (§17.2, "the digest is total"). Validation
//! (§6.4) is a separate, later step.
//!
//! Two readings where the spec and the upstream vector generator differ (DIGEST.md D9.2; no
//! vector pins either): we check `suggestedTreatment` matchers, which §17.2 lists, and do not
//! check `tags.*.facet`, which it does not.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Number, Value};
use sha2::{Digest as _, Sha256};

/// The prefix of every revision.
pub const REVISION_PREFIX: &str = "sha256:";

/// The characters an identifier may hold, as written in errors.
pub const IDENTIFIER_RULE: &str = "[A-Za-z0-9._:*-]+";

/// Why no revision can be computed for a manifest.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// The manifest is not a JSON object (`manifest_not_object`).
    #[error("manifest is not a JSON object but {found}")]
    ManifestNotObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// An identifier is empty or has a character outside [`IDENTIFIER_RULE`]
    /// (`identifier_charset`).
    #[error("identifier `{value}` at `{path}` does not match {IDENTIFIER_RULE}")]
    IdentifierCharset {
        /// Where it was found, as dotted member names (`[]` for array elements).
        path: String,
        /// The offending identifier.
        value: String,
    },
    /// JCS serialization failed. A `serde_json::Value` cannot hold what JCS refuses
    /// (non-finite numbers), so this is not expected; it is an error rather than a panic.
    #[error("canonicalization failed: {0}")]
    Canonicalize(#[source] serde_json::Error),
}

impl DigestError {
    /// The library error name the conformance vectors use (`identifier_charset`,
    /// `manifest_not_object`); these are not wire codes (DIGEST.md D10).
    pub fn code(&self) -> &'static str {
        match self {
            DigestError::ManifestNotObject { .. } => "manifest_not_object",
            DigestError::IdentifierCharset { .. } => "identifier_charset",
            DigestError::Canonicalize(_) => "canonicalize",
        }
    }
}

/// Whether `s` is a non-empty run of `[A-Za-z0-9._:*-]` (§17.2).
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'*' | b'-'))
}

/// Whether `s` has the shape of a revision, `^sha256:[A-Za-z0-9_-]{43}$` (App. B.3).
///
/// Revisions are compared only for equality (§17.1); this checks the shape, nothing more.
pub fn is_revision(s: &str) -> bool {
    s.strip_prefix(REVISION_PREFIX).is_some_and(|rest| {
        rest.len() == 43
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

/// Sorts a set by UTF-8 bytes and removes duplicates (§17.2 set ordering). `str: Ord` is
/// UTF-8 byte order, which differs from UTF-16 order above U+FFFF.
pub fn sort_set(mut set: Vec<String>) -> Vec<String> {
    set.sort();
    set.dedup();
    set
}

/// The manifest after steps 1 to 3: root `revision` stripped, sets sorted and deduplicated,
/// identifiers checked. Feed it to JCS for step 4.
pub fn normalize_manifest(manifest: &Value) -> Result<Value, DigestError> {
    let root = manifest.as_object().ok_or(DigestError::ManifestNotObject {
        found: json_type(manifest),
    })?;
    normalize_members(root).map(Value::Object)
}

/// [`normalize_manifest`] over the root object's members.
pub(crate) fn normalize_members(
    root: &Map<String, Value>,
) -> Result<Map<String, Value>, DigestError> {
    let mut out = Map::with_capacity(root.len());
    for (key, value) in root {
        let value = match key.as_str() {
            "revision" => continue,
            "version" => value.clone(),
            "featureSets" => normalize_feature_sets(value)?,
            _ => {
                // Every other root member is a capability (or vendor) member: its name and
                // every member name below it are identifiers (§17.2, §5.4 generic walk).
                check_identifier(key, key)?;
                check_member_names(value, key)?;
                value.clone()
            }
        };
        out.insert(key.clone(), es_numbers(value));
    }
    Ok(out)
}

/// The JCS string of the normalized manifest: the exact text that is hashed.
pub fn canonical_json(manifest: &Value) -> Result<String, DigestError> {
    let normalized = normalize_manifest(manifest)?;
    serde_json_canonicalizer::to_string(&normalized).map_err(DigestError::Canonicalize)
}

/// The revision of canonical JSON text: `sha256:` and the unpadded base64url SHA-256.
pub fn revision_of_canonical(canonical: &str) -> String {
    let hash = Sha256::digest(canonical.as_bytes());
    format!("{REVISION_PREFIX}{}", URL_SAFE_NO_PAD.encode(hash))
}

/// The §17.2 revision of a manifest (the whole `experimental.mcpl` object).
pub fn manifest_revision(manifest: &Value) -> Result<String, DigestError> {
    canonical_json(manifest).map(|c| revision_of_canonical(&c))
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_identifier(path: &str, value: &str) -> Result<(), DigestError> {
    if is_identifier(value) {
        Ok(())
    } else {
        Err(DigestError::IdentifierCharset {
            path: path.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// Checks every member name at every depth below a capability member, including the members
/// of objects inside arrays.
fn check_member_names(value: &Value, path: &str) -> Result<(), DigestError> {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                check_identifier(&child_path, key)?;
                check_member_names(child, &child_path)?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let child_path = format!("{path}.[]");
            items
                .iter()
                .try_for_each(|item| check_member_names(item, &child_path))
        }
        _ => Ok(()),
    }
}

/// The strings of an all-string array; `None` for anything else (hashed verbatim then).
fn all_strings(value: &Value) -> Option<Vec<&str>> {
    value.as_array()?.iter().map(Value::as_str).collect()
}

/// A set position: an all-string array is checked, sorted and deduplicated; anything else is
/// kept verbatim (§17.2 totality).
fn normalize_set(value: &Value, path: &str) -> Result<Value, DigestError> {
    let Some(items) = all_strings(value) else {
        return Ok(value.clone());
    };
    let path = format!("{path}.[]");
    for item in &items {
        check_identifier(&path, item)?;
    }
    let set = sort_set(items.into_iter().map(str::to_owned).collect());
    Ok(Value::Array(set.into_iter().map(Value::String).collect()))
}

/// A list position whose strings are identifiers (`keyed.*.values`, matchers): checked when
/// all-string, never reordered.
fn check_identifier_list(value: &Value, path: &str) -> Result<(), DigestError> {
    if let Some(items) = all_strings(value) {
        let path = format!("{path}.[]");
        for item in items {
            check_identifier(&path, item)?;
        }
    }
    Ok(())
}

fn normalize_feature_sets(value: &Value) -> Result<Value, DigestError> {
    // The set paths are written against the object-keyed shape (§6.1); an array-shaped
    // `featureSets` is hashed verbatim.
    let Some(sets) = value.as_object() else {
        return Ok(value.clone());
    };
    let mut out = Map::with_capacity(sets.len());
    for (name, set) in sets {
        let path = format!("featureSets.{name}");
        check_identifier(&path, name)?;
        let set = match set.as_object() {
            Some(decl) => Value::Object(normalize_feature_set(decl, &path)?),
            None => set.clone(),
        };
        out.insert(name.clone(), set);
    }
    Ok(Value::Object(out))
}

fn normalize_feature_set(
    decl: &Map<String, Value>,
    path: &str,
) -> Result<Map<String, Value>, DigestError> {
    let mut out = decl.clone();
    if let Some(uses) = decl.get("uses") {
        out.insert("uses".into(), normalize_set(uses, &format!("{path}.uses"))?);
    }
    if let Some(Value::Object(ontology)) = decl.get("tagOntology") {
        let ontology = normalize_ontology(ontology, &format!("{path}.tagOntology"))?;
        out.insert("tagOntology".into(), Value::Object(ontology));
    }
    Ok(out)
}

fn normalize_ontology(
    ontology: &Map<String, Value>,
    path: &str,
) -> Result<Map<String, Value>, DigestError> {
    let mut out = ontology.clone();
    if let Some(core) = ontology.get("coreTags") {
        out.insert(
            "coreTags".into(),
            normalize_set(core, &format!("{path}.coreTags"))?,
        );
    }
    if let Some(Value::Object(tags)) = ontology.get("tags") {
        let mut tags_out = Map::with_capacity(tags.len());
        for (tag, desc) in tags {
            let tag_path = format!("{path}.tags.{tag}");
            check_identifier(&tag_path, tag)?;
            let desc = match desc {
                Value::Object(d) => {
                    let mut d_out = d.clone();
                    if let Some(implies) = d.get("implies") {
                        let implies = normalize_set(implies, &format!("{tag_path}.implies"))?;
                        d_out.insert("implies".into(), implies);
                    }
                    Value::Object(d_out)
                }
                other => other.clone(),
            };
            tags_out.insert(tag.clone(), desc);
        }
        out.insert("tags".into(), Value::Object(tags_out));
    }
    if let Some(Value::Object(keyed)) = ontology.get("keyed") {
        for (key, family) in keyed {
            let key_path = format!("{path}.keyed.{key}");
            check_identifier(&key_path, key)?;
            if let Some(values) = family.get("values") {
                check_identifier_list(values, &format!("{key_path}.values"))?;
            }
        }
    }
    if let Some(Value::Array(rules)) = ontology.get("suggestedTreatment") {
        let rules_path = format!("{path}.suggestedTreatment.[]");
        for rule in rules {
            for matcher in ["tagsAny", "tagsAll", "tagsNone"] {
                if let Some(list) = rule.get(matcher) {
                    check_identifier_list(list, &format!("{rules_path}.{matcher}"))?;
                }
            }
        }
    }
    Ok(out)
}

/// JCS reads every number as an IEEE double (RFC 8785 §3.2.2.3): integers beyond 2^53 are
/// rounded to the nearest double, as an ECMAScript parser would.
fn es_numbers(value: Value) -> Value {
    const EXACT: u64 = 1 << 53;
    match value {
        Value::Number(n) => {
            let exact = n
                .as_u64()
                .map(|u| u <= EXACT)
                .or_else(|| n.as_i64().map(|i| i.unsigned_abs() <= EXACT));
            match (exact, n.as_f64()) {
                (Some(false), Some(f)) => {
                    Number::from_f64(f).map_or(Value::Number(n), Value::Number)
                }
                _ => Value::Number(n),
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(es_numbers).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, es_numbers(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn s17_2_worked_example_reproduces() {
        let m = json!({"version":"0.5","pushEvents":true,"contextHooks":{"beforeInference":true},
            "inferenceLifecycle":true,"channels":{"register":true,"publish":true,"incoming":true},
            "featureSets":{"demo.messaging":{"description":"Demo",
            "uses":["channels.publish","channels.incoming","pushEvents","tools"]}}});
        assert_eq!(
            manifest_revision(&m).unwrap(),
            "sha256:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H4"
        );
    }

    #[test]
    fn s17_2_anchors_from_the_digest_notes() {
        for (m, rev) in [
            (
                json!({}),
                "sha256:RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o",
            ),
            (
                json!({"version": "0.5"}),
                "sha256:bzEkFjhXH4ynFLptjb7MFQkzMSEXiRkRuGnA1GVxF8g",
            ),
            (
                json!({"version": "0.5", "featureSets": {}}),
                "sha256:aEDlkA19fCpu5SqlupfEYFGheDMJEdU68cKRn6pw4_Q",
            ),
        ] {
            assert_eq!(manifest_revision(&m).unwrap(), rev);
            assert!(is_revision(rev));
        }
    }

    #[test]
    fn s17_2_not_an_object_is_refused() {
        let err = manifest_revision(&json!([1])).unwrap_err();
        assert_eq!(err.code(), "manifest_not_object");
        assert!(err.to_string().contains("an array"));
    }

    #[test]
    fn s17_2_identifier_charset() {
        for ok in ["a", "chat:dm", "channels.*", "x-1_y:z"] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in ["", "a b", "a/b", "naïve", "a=b", "$ref"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn s17_2_suggested_treatment_matchers_are_identifiers() {
        let m = json!({"featureSets": {"f": {"description": "d", "uses": ["tools"],
            "tagOntology": {"suggestedTreatment": [{"tagsAll": ["chat:dm", "bad tag"],
            "behavior": "immediate"}]}}}});
        let err = manifest_revision(&m).unwrap_err();
        assert_eq!(err.code(), "identifier_charset");
        assert!(err.to_string().contains("bad tag"));
    }

    #[test]
    fn s17_2_keys_inside_arrays_of_capability_members_are_identifiers() {
        let m = json!({"vendorX": {"list": [{"ok": 1}, {"not ok": 2}]}});
        let err = manifest_revision(&m).unwrap_err();
        assert!(
            matches!(err, DigestError::IdentifierCharset { ref value, .. } if value == "not ok")
        );
    }

    #[test]
    fn rfc014_b16_option_schema_keys_outside_the_charset_are_refused() {
        let m = json!({"version": "0.5", "toolHints": true,
            "toolsets": {"go": {"title": "Go", "default": "closed",
            "options": {"$defs": {}}}}});
        assert_eq!(
            manifest_revision(&m).unwrap_err().code(),
            "identifier_charset"
        );
    }

    #[test]
    fn large_integers_hash_as_their_double() {
        let exact = json!({"n": 9007199254740993u64});
        let double = json!({"n": 9007199254740992u64});
        assert_eq!(canonical_json(&exact).unwrap(), r#"{"n":9007199254740992}"#);
        assert_eq!(
            manifest_revision(&exact).unwrap(),
            manifest_revision(&double).unwrap()
        );
        assert_eq!(canonical_json(&json!({"n": -3})).unwrap(), r#"{"n":-3}"#);
    }

    /// Reverses every object's member order and every set-valued array, and repeats a set
    /// member: a different byte stream for the same manifest.
    fn scramble(value: &Value, key: Option<&str>) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .rev()
                    .map(|(k, v)| (k.clone(), scramble(v, Some(k))))
                    .collect(),
            ),
            Value::Array(items) if matches!(key, Some("uses" | "coreTags" | "implies")) => {
                let mut items: Vec<Value> = items.iter().rev().cloned().collect();
                if let Some(first) = items.first().cloned() {
                    items.push(first);
                }
                Value::Array(items)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| scramble(v, None)).collect()),
            other => other.clone(),
        }
    }

    fn arb_manifest() -> impl Strategy<Value = Value> {
        let ident = "[A-Za-z0-9._:*-]{1,8}";
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            (-1.0e30f64..1.0e30).prop_map(Value::from),
            ".{0,6}".prop_map(Value::from),
        ];
        let capability = leaf.prop_recursive(3, 16, 4, move |inner| {
            prop::collection::btree_map(ident, inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        });
        let uses = prop::collection::vec(
            prop::sample::select(super::super::grant::USES_VOCABULARY),
            0..5,
        );
        let set = (".{0,10}", uses, prop::collection::vec("chat:[a-z]{1,5}", 0..4)).prop_map(
            |(description, uses, core)| {
                json!({"description": description, "uses": uses,
                       "tagOntology": {"coreTags": core, "tags": {"demo:t": {"implies": ["chat:dm", "chat:addressed"]}}}})
            },
        );
        (
            prop::collection::btree_map(ident, capability, 0..4),
            prop::collection::btree_map(ident, set, 0..3),
        )
            .prop_map(|(caps, sets)| {
                let mut root: Map<String, Value> = caps.into_iter().collect();
                root.insert("version".into(), json!("0.5"));
                root.insert(
                    "featureSets".into(),
                    Value::Object(sets.into_iter().collect()),
                );
                Value::Object(root)
            })
    }

    proptest! {
        #[test]
        fn s17_2_digest_ignores_member_order_set_order_duplicates_and_revision(m in arb_manifest()) {
            let rev = manifest_revision(&m).unwrap();
            let mut other = scramble(&m, None);
            other.as_object_mut().unwrap().insert("revision".into(), json!(rev.clone()));
            prop_assert_eq!(manifest_revision(&other).unwrap(), rev.clone());
            prop_assert!(is_revision(&rev));
        }

        #[test]
        fn s17_2_canonical_json_is_a_fixed_point(m in arb_manifest()) {
            let canonical = canonical_json(&m).unwrap();
            let reparsed: Value = serde_json::from_str(&canonical).unwrap();
            prop_assert_eq!(canonical_json(&reparsed).unwrap(), canonical);
        }
    }

    #[test]
    fn revision_shape() {
        assert!(!is_revision("sha256:short"));
        assert!(!is_revision(
            "md5:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H4"
        ));
        assert!(!is_revision(
            "sha256:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H+"
        ));
    }
}
