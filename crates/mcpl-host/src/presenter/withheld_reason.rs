//! Why a server's events cannot reach the agent ([`Withheld`]), worded as the agent reads
//! it, and which of a manifest's feature sets need a capability the host does not grant.
//!
//! A leaf under the presenter: `withheld` records and tells these through the presenter's
//! methods, and this module names nothing that names the presenter.

use serde_json::Value;

use crate::names::ServerName;

/// Why some of a server's events will not reach the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Withheld {
    /// The server offers `pushEvents` but did not acknowledge the host's policy, so nothing
    /// was granted and every push it sends is refused.
    NoPolicy {
        /// The MCPL version the server advertised.
        version: Option<String>,
        /// The JSON-RPC error code of its answer to `featureSets/update` (-32601: it does
        /// not know the method), or `None` when it gave no answer.
        code: Option<i64>,
        /// Its error message, or why there was no answer.
        message: String,
    },
    /// A feature set uses capabilities the host does not grant: its events never start.
    Needs {
        /// The feature set's name.
        feature_set: String,
        /// The capabilities it uses that are not granted.
        missing: Vec<String>,
    },
}

impl Withheld {
    /// The one sentence the agent reads about `server`.
    pub fn sentence(&self, server: &ServerName) -> String {
        match self {
            Withheld::NoPolicy {
                version,
                code: Some(-32601),
                ..
            } => format!(
                "events from `{server}` will not reach you: it speaks an older MCPL ({}) without `featureSets/update` (it answered -32601, method not found), so pushed events could not be granted; its tools still work",
                version.as_deref().unwrap_or("no version given")
            ),
            Withheld::NoPolicy { code, message, .. } => format!(
                "events from `{server}` will not reach you: it did not accept the host's `featureSets/update` ({}{message}), so pushed events could not be granted; its tools still work",
                code.map(|c| format!("{c}: ")).unwrap_or_default()
            ),
            Withheld::Needs {
                feature_set,
                missing,
            } => format!(
                "events of `{server}`'s feature set `{feature_set}` will not reach you: it needs {}, which this host does not grant (it grants pushEvents only)",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }
}

/// The feature sets in a server's MCPL manifest that use a capability outside `granted`
/// (exact names; a use such as `channels.publish` is missing unless granted as is).
pub fn needs_ungranted(manifest: &Value, granted: &[&str]) -> Vec<Withheld> {
    let Some(sets) = manifest.get("featureSets").and_then(Value::as_object) else {
        return Vec::new();
    };
    sets.iter()
        .filter_map(|(name, set)| {
            let missing: Vec<String> = set
                .get("uses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|u| !granted.contains(u))
                .map(str::to_owned)
                .collect();
            (!missing.is_empty()).then(|| Withheld::Needs {
                feature_set: name.clone(),
                missing,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_0_4_server_answering_minus_32601_is_one_sentence_naming_it_and_why() {
        let w = Withheld::NoPolicy {
            version: Some("0.4".into()),
            code: Some(-32601),
            message: "Method not found".into(),
        };
        let s = w.sentence(&ServerName::parse("heartbeat").expect("a name"));
        assert!(
            s.starts_with("events from `heartbeat` will not reach you"),
            "{s}"
        );
        assert!(
            s.contains("older MCPL (0.4)") && s.contains("-32601"),
            "{s}"
        );
    }

    #[test]
    fn a_feature_set_using_channels_or_context_hooks_is_withheld_with_what_it_needs() {
        let manifest = json!({"featureSets": {
            "events": {"uses": ["pushEvents"]},
            "chat": {"uses": ["pushEvents", "channels.publish", "contextHooks.beforeInference"]}
        }});
        let w = needs_ungranted(&manifest, &["pushEvents"]);
        assert_eq!(
            w,
            vec![Withheld::Needs {
                feature_set: "chat".into(),
                missing: vec![
                    "channels.publish".into(),
                    "contextHooks.beforeInference".into()
                ],
            }]
        );
        assert!(needs_ungranted(&json!({}), &["pushEvents"]).is_empty());
    }
}
