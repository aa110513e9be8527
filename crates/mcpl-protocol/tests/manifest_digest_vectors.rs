//! MCPL §17.2: every vector of `conformance/manifest-digest-vectors.json`, one test each.
//!
//! The file is vendored under `tests/data/` (its source is named in `tests/data/README.md`)
//! and read at test time (never transcribed: a copy through an editor can normalize
//! the combining sequence of `unicode-and-json-escapes`). `every_vector_in_the_file_has_a_test`
//! fails when the file gains a vector this list lacks.

use mcpl_protocol::mcpl::digest::{
    canonical_json, is_revision, manifest_revision, revision_of_canonical, sort_set,
};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::sync::OnceLock;

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/manifest-digest-vectors.json"
);

/// SHA-256 of the vendored copy, as `tests/data/README.md` records it.
const VECTORS_SHA256: &str = "b4318cb5f2e47fc640509d814536a55166d68be7938903c91e4552a7cc6f0e90";

fn file() -> &'static Value {
    static FILE: OnceLock<Value> = OnceLock::new();
    FILE.get_or_init(|| {
        let text = std::fs::read_to_string(VECTORS)
            .unwrap_or_else(|e| panic!("cannot read the digest vectors at {VECTORS}: {e}"));
        serde_json::from_str(&text).expect("the vector file is JSON")
    })
}

fn entries(list: &str) -> &'static [Value] {
    file()[list]
        .as_array()
        .unwrap_or_else(|| panic!("`{list}` is not an array"))
}

fn find(list: &str, name: &str) -> &'static Value {
    entries(list)
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no vector named `{name}` in `{list}`"))
}

fn str_field<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("vector `{}` has no string `{field}`", v["name"]))
}

/// Asserts one manifest vector, in the order CONSUMING.md §4 gives: canonical JSON, hex hash,
/// digest, then the cross-vector assertions.
fn check_vector(name: &str) {
    let v = find("vectors", name);
    let input = &v["input"];
    if let Some(code) = v.get("expectError").and_then(Value::as_str) {
        let err = manifest_revision(input).expect_err("a negative vector must be refused");
        assert_eq!(err.code(), code, "{name}: {err}");
        assert!(canonical_json(input).is_err());
        return;
    }
    let canonical = canonical_json(input).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        canonical,
        str_field(v, "canonicalJson"),
        "{name}: canonical JSON"
    );
    let hex: String = Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, str_field(v, "sha256Hex"), "{name}: SHA-256");
    let digest = manifest_revision(input).expect("a positive vector digests");
    assert_eq!(digest, str_field(v, "digest"), "{name}: digest");
    assert_eq!(digest, revision_of_canonical(&canonical));
    assert!(is_revision(&digest));
    if let Some(other) = v.get("sameDigestAs").and_then(Value::as_str) {
        let other = manifest_revision(&find("vectors", other)["input"]).unwrap();
        assert_eq!(digest, other, "{name}: sameDigestAs");
    }
    if let Some(other) = v.get("differentDigestFrom").and_then(Value::as_str) {
        let other = manifest_revision(&find("vectors", other)["input"]).unwrap();
        assert_ne!(digest, other, "{name}: differentDigestFrom");
    }
}

fn check_sort_vector(name: &str) {
    let v = find("sortVectors", name);
    let strings = |field: &str| -> Vec<String> {
        v[field]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: `{field}` is not an array"))
            .iter()
            .map(|s| s.as_str().expect("sort vectors hold strings").to_owned())
            .collect()
    };
    assert_eq!(sort_set(strings("input")), strings("sorted"), "{name}");
}

macro_rules! vectors {
    ($check:ident, $names:ident: $($test:ident => $name:literal,)*) => {
        const $names: &[&str] = &[$($name),*];
        $(
            #[test]
            fn $test() {
                $check($name);
            }
        )*
    };
}

vectors! { check_vector, MANIFEST_VECTORS:
    s17_2_rfc_003_worked_example => "rfc-003-worked-example",
    s17_2_key_ordering_and_set_ordering_independence => "key-ordering-and-set-ordering-independence",
    s17_2_revision_present_is_stripped => "revision-present-is-stripped",
    s17_2_revision_only_stripped_at_root => "revision-only-stripped-at-root",
    s17_2_empty_manifest => "empty-manifest",
    s17_2_minimal_manifest => "minimal-manifest",
    s17_2_unicode_and_json_escapes => "unicode-and-json-escapes",
    s17_2_number_canonicalisation => "number-canonicalisation",
    s17_2_set_sort_is_utf8_byte_order => "set-sort-is-utf8-byte-order",
    s17_2_nested_featuresets_and_list_arrays => "nested-featuresets-and-list-arrays",
    s17_2_boolean_shorthand_is_not_expanded => "boolean-shorthand-is-not-expanded",
    s17_2_boolean_shorthand_expanded_differs => "boolean-shorthand-expanded-differs",
    s17_2_dot_in_capability_member_name => "dot-in-capability-member-name",
    s17_2_null_and_false_members_are_content => "null-and-false-members-are-content",
    s17_2_null_and_false_members_omitted => "null-and-false-members-omitted",
    s17_2_negative_non_ascii_tag_identifier => "negative-non-ascii-tag-identifier",
    s17_2_negative_solidus_in_feature_set_name => "negative-solidus-in-feature-set-name",
    s17_2_negative_trailing_space_in_uses => "negative-trailing-space-in-uses",
    s17_2_negative_space_in_nested_capability_member => "negative-space-in-nested-capability-member",
    s17_2_negative_empty_identifier => "negative-empty-identifier",
    s17_2_wrong_typed_set_field_hashed_verbatim => "wrong-typed-set-field-hashed-verbatim",
    s17_2_array_form_featuresets_hashed_verbatim => "array-form-featuresets-hashed-verbatim",
    s17_2_empty_member_differs_from_absent => "empty-member-differs-from-absent",
    s17_2_non_string_set_member_hashed_verbatim => "non-string-set-member-hashed-verbatim",
    s17_2_non_string_set_member_single => "non-string-set-member-single",
}

vectors! { check_sort_vector, SORT_VECTORS:
    s17_2_sort_ascii_punctuation_and_case => "ascii-punctuation-and-case",
    s17_2_sort_prefix_is_shortest_first => "prefix-is-shortest-first",
    s17_2_sort_utf8_vs_utf16_divergence_above_bmp => "utf8-vs-utf16-divergence-above-bmp",
    s17_2_sort_utf8_equals_codepoint_order => "utf8-equals-codepoint-order",
}

#[test]
fn the_vendored_file_is_the_upstream_copy_byte_for_byte() {
    let bytes = std::fs::read(VECTORS)
        .unwrap_or_else(|e| panic!("cannot read the digest vectors at {VECTORS}: {e}"));
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        hex, VECTORS_SHA256,
        "{VECTORS} differs from the recorded copy"
    );
}

#[test]
fn every_vector_in_the_file_has_a_test() {
    for (list, known) in [("vectors", MANIFEST_VECTORS), ("sortVectors", SORT_VECTORS)] {
        let missing: Vec<&str> = entries(list)
            .iter()
            .map(|v| str_field(v, "name"))
            .filter(|name| !known.contains(name))
            .collect();
        assert!(
            missing.is_empty(),
            "`{list}` in the vector file has vectors without a test here: {missing:?}"
        );
        assert_eq!(
            entries(list).len(),
            known.len(),
            "`{list}`: a listed vector is gone"
        );
    }
}
