//! Capability paths, advertisement and grant matching (MCPL §5.1, §5.4, §6.2).
//!
//! Three rules decide every match (§5.4):
//!
//! - `*` matches exactly one path segment, and a pattern matches a path only when both have
//!   the same number of segments: `channels.*` grants `channels.publish`, not
//!   `channels.publish.x`; a bare `*` matches only depth-1 paths.
//! - A parent path grants only itself, never its leaves: `channels` grants `channels` alone.
//! - `effectiveCapabilities` is the only allowlist: a path no entry matches is denied.
//!
//! Advertisement is a different thing: there a boolean `true` at any node is shorthand for
//! every leaf below it (§5.1). [`advertised_leaves`] applies that shorthand; grants never do.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The 17 capability paths a feature set's `uses` may name (§6.2, App. B.2): the leaves
/// that the grant is computed over.
pub const USES_VOCABULARY: &[&str] = &[
    "pushEvents",
    "tools",
    "modelInfo",
    "inferenceRequest",
    "inferenceRequest.streaming",
    "inferenceLifecycle",
    "contextHooks.beforeInference.observe",
    "contextHooks.beforeInference.inject.system",
    "contextHooks.beforeInference.inject.beforeUser",
    "contextHooks.beforeInference.inject.afterUser",
    "channels.register",
    "channels.lifecycle",
    "channels.publish",
    "channels.incoming",
    "channels.streaming",
    "channels.acknowledge",
    "channels.typing",
];

/// The capability path of push events (§9): the grant `push/event` needs.
pub const PUSH_EVENTS: &str = "pushEvents";

/// Root members of `experimental.mcpl` that are not capability trees: protocol identity,
/// the digest, the feature-set declarations, and RFC-014's members (`toolHints` is an
/// advertisement, not a grant path; RFC-014 §6.3).
pub const NON_CAPABILITY_MEMBERS: &[&str] = &[
    "version",
    "revision",
    "featureSets",
    "toolHints",
    "toolsets",
    "surface",
];

/// Whether `pattern` (an `effectiveCapabilities` entry) grants `path` (§5.4).
///
/// Segments are compared one by one; `*` stands for exactly one segment and the segment
/// counts must be equal. Nothing else is special: a pattern naming a parent grants the parent
/// path only.
pub fn pattern_matches(pattern: &str, path: &str) -> bool {
    let mut pattern = pattern.split('.');
    let mut path = path.split('.');
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some(p), Some(s)) if p == "*" || p == s => continue,
            _ => return false,
        }
    }
}

/// An effective capability grant: the entries of `effectiveCapabilities` (§5.3, §5.4).
///
/// The default grant is empty and allows nothing: an absent `effectiveCapabilities` grants
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    patterns: Vec<String>,
}

impl Grant {
    /// The grant of nothing.
    pub fn none() -> Self {
        Grant::default()
    }

    /// A grant of the given paths or patterns.
    pub fn new<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Grant {
            patterns: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// The entries, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether the grant allows the concrete capability `path`.
    pub fn allows(&self, path: &str) -> bool {
        self.patterns.iter().any(|p| pattern_matches(p, path))
    }

    /// The first of `paths` the grant does not allow (for a `-32002 {capability}` error).
    pub fn first_denied<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        paths.into_iter().find(|p| !self.allows(p))
    }

    /// The leaves of `leaves` this grant allows and `narrower` does not: what changing from
    /// `self` to `narrower` revokes (§6.7: revocations apply host-first).
    pub fn revoked_by<'a>(
        &self,
        narrower: &Grant,
        leaves: impl IntoIterator<Item = &'a str>,
    ) -> Vec<&'a str> {
        leaves
            .into_iter()
            .filter(|p| self.allows(p) && !narrower.allows(p))
            .collect()
    }
}

/// The capability leaves a peer advertises in its `experimental.mcpl` object (§5.1).
///
/// A generic recursive walk over every capability member (never a fixed list of nestable
/// keys, §5.4): a `true` node contributes its own path and every path of `vocabulary` below
/// it; `false`, `null` and other values contribute nothing; objects are walked. Members in
/// [`NON_CAPABILITY_MEMBERS`] are skipped.
pub fn advertised_leaves(mcpl: &Map<String, Value>, vocabulary: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (key, value) in mcpl {
        if !NON_CAPABILITY_MEMBERS.contains(&key.as_str()) {
            walk(key.clone(), value, vocabulary, &mut out);
        }
    }
    out
}

fn walk(path: String, value: &Value, vocabulary: &[&str], out: &mut BTreeSet<String>) {
    match value {
        Value::Bool(true) => {
            let below = format!("{path}.");
            out.extend(
                vocabulary
                    .iter()
                    .filter(|leaf| leaf.starts_with(&below))
                    .map(|leaf| (*leaf).to_owned()),
            );
            out.insert(path);
        }
        Value::Object(map) => {
            for (key, child) in map {
                walk(format!("{path}.{key}"), child, vocabulary, out);
            }
        }
        _ => {}
    }
}

/// Whether the peer advertises `path` (§5.1): the node at `path` or one of its ancestors is
/// `true`, or the node is an object with an advertised leaf below it.
pub fn advertises(mcpl: &Map<String, Value>, path: &str) -> bool {
    let mut node: Option<&Value> = None;
    for segment in path.split('.') {
        let next = match node {
            None => mcpl.get(segment),
            Some(Value::Object(map)) => map.get(segment),
            Some(_) => None,
        };
        match next {
            Some(Value::Bool(true)) => return true,
            Some(v @ Value::Object(_)) => node = Some(v),
            _ => return false,
        }
    }
    node.is_some_and(has_true_leaf)
}

fn has_true_leaf(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Object(map) => map.values().any(has_true_leaf),
        _ => false,
    }
}

/// The effective grant of §5.4: the advertised leaves (shorthand expanded over
/// `vocabulary`) that host `policy` allows. Advertisement is an input, never an
/// authorization: a leaf the policy does not match is left out.
pub fn effective_capabilities(
    mcpl: &Map<String, Value>,
    policy: &Grant,
    vocabulary: &[&str],
) -> Vec<String> {
    advertised_leaves(mcpl, vocabulary)
        .into_iter()
        .filter(|leaf| policy.allows(leaf))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn s5_4_star_matches_exactly_one_segment() {
        assert!(pattern_matches("channels.*", "channels.publish"));
        assert!(!pattern_matches("channels.*", "channels.publish.anything"));
        assert!(!pattern_matches("channels.*", "channels"));
        assert!(pattern_matches("*", "pushEvents"));
        assert!(!pattern_matches("*", "channels.publish"));
        assert!(pattern_matches("*.publish", "channels.publish"));
        assert!(pattern_matches(
            "contextHooks.*.inject.*",
            "contextHooks.beforeInference.inject.system"
        ));
    }

    #[test]
    fn s5_4_context_hooks_star_grants_no_depth_four_leaf() {
        let g = Grant::new(["contextHooks.*"]);
        for leaf in USES_VOCABULARY
            .iter()
            .filter(|l| l.starts_with("contextHooks."))
        {
            assert!(!g.allows(leaf), "{leaf}");
        }
        assert!(g.allows("contextHooks.beforeInference"));
    }

    #[test]
    fn s5_4_a_parent_grants_no_leaves() {
        let g = Grant::new(["channels", "contextHooks.beforeInference"]);
        assert!(g.allows("channels"));
        assert!(!g.allows("channels.publish"));
        assert!(!g.allows("contextHooks.beforeInference.observe"));
    }

    #[test]
    fn s5_4_absence_is_denial() {
        assert!(!Grant::none().allows("pushEvents"));
        let g = Grant::new(["tools", "channels.publish"]);
        assert_eq!(
            g.first_denied(["tools", "pushEvents", "channels.typing"]),
            Some("pushEvents")
        );
        assert_eq!(g.first_denied(["tools"]), None);
    }

    #[test]
    fn s6_7_revoked_leaves() {
        let wide = Grant::new(["channels.*", "pushEvents"]);
        let narrow = Grant::new(["channels.publish"]);
        let revoked = wide.revoked_by(&narrow, USES_VOCABULARY.iter().copied());
        assert!(revoked.contains(&"pushEvents"));
        assert!(revoked.contains(&"channels.typing"));
        assert!(!revoked.contains(&"channels.publish"));
    }

    #[test]
    fn s5_1_shorthand_expands_for_advertisement_only() {
        let mcpl = json!({"version": "0.5", "pushEvents": true, "channels": true,
            "contextHooks": {"beforeInference": {"observe": false, "inject": {"beforeUser": true}}},
            "inferenceRequest": {"streaming": true}, "modelInfo": false,
            "featureSets": {"x": {"uses": ["tools"]}}, "toolHints": true});
        let mcpl = mcpl.as_object().unwrap();
        let leaves = advertised_leaves(mcpl, USES_VOCABULARY);
        assert!(leaves.contains("pushEvents"));
        assert!(leaves.contains("channels.typing"));
        assert!(leaves.contains("contextHooks.beforeInference.inject.beforeUser"));
        assert!(!leaves.contains("contextHooks.beforeInference.observe"));
        assert!(leaves.contains("inferenceRequest.streaming"));
        assert!(!leaves.contains("modelInfo"));
        assert!(
            !leaves
                .iter()
                .any(|l| l.starts_with("featureSets") || l == "toolHints")
        );
        assert!(advertises(mcpl, "channels.publish"));
        assert!(advertises(mcpl, "contextHooks.beforeInference"));
        assert!(!advertises(mcpl, "contextHooks.beforeInference.observe"));
        assert!(!advertises(mcpl, "modelInfo"));
        assert!(!advertises(mcpl, "tools"));
    }

    #[test]
    fn s5_4_effective_grant_is_advertisement_intersect_policy() {
        let mcpl = json!({"pushEvents": true, "channels": {"publish": true, "typing": true}});
        let policy = Grant::new(["channels.*", "modelInfo", "*"]);
        let eff = effective_capabilities(mcpl.as_object().unwrap(), &policy, USES_VOCABULARY);
        assert_eq!(
            eff,
            vec!["channels.publish", "channels.typing", "pushEvents"]
        );
    }

    proptest! {
        #[test]
        fn s5_4_matching_needs_equal_segment_counts(
            path in proptest::collection::vec("[a-z]{1,4}", 1..5),
            extra in proptest::collection::vec("[a-z]{1,4}", 1..3),
        ) {
            let path_s = path.join(".");
            let stars = vec!["*"; path.len()].join(".");
            prop_assert!(pattern_matches(&stars, &path_s));
            prop_assert!(pattern_matches(&path_s, &path_s));
            let deeper = format!("{path_s}.{}", extra.join("."));
            // Neither a parent nor a trailing `*` reaches deeper paths.
            prop_assert!(!pattern_matches(&path_s, &deeper));
            let trailing_star = format!("{path_s}.*");
            let deeper_still = format!("{deeper}.x");
            prop_assert!(!pattern_matches(&trailing_star, &deeper_still));
            prop_assert!(!pattern_matches(&stars, &deeper));
        }
    }
}
