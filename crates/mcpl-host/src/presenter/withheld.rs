//! Events a server cannot send the agent, and why: an older MCPL server that has no
//! `featureSets/update` (0.4 answers it with -32601), or a feature set that needs a
//! capability this host does not grant (channels, context hooks). The agent is told once per
//! reason, with its next answer, and look shows it for as long as it holds.

use serde_json::Value;

use super::queue::Body;
use super::state::Presenter;
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

impl Presenter {
    /// Records what of `server`'s events cannot reach the agent (empty: all can). A reason
    /// not recorded before is owed to every agent once, in read order with the server's
    /// changes; one recorded already (after a reconnect, say) is not told again.
    pub fn set_withheld(&mut self, server: &ServerName, reasons: Vec<Withheld>) {
        let sentences: Vec<String> = reasons.iter().map(|r| r.sentence(server)).collect();
        let before = self.withheld.remove(server).unwrap_or_default();
        for s in &sentences {
            if !before.contains(s) {
                self.push_link(server, s.clone());
            }
        }
        if !sentences.is_empty() {
            self.withheld.insert(server.clone(), sentences);
        }
    }

    /// The sentences about `server`'s withheld events (empty when none).
    pub fn withheld(&self, server: &ServerName) -> &[String] {
        self.withheld.get(server).map_or(&[], Vec::as_slice)
    }

    /// Look's lines about withheld events (for `server`, or every server). What look says
    /// counts as told: the same sentence still owed to `agent` is dropped from its queue.
    pub(super) fn look_withheld(
        &mut self,
        agent: &super::agent::AgentId,
        server: Option<&str>,
    ) -> Vec<String> {
        let lines: Vec<String> = self
            .withheld
            .iter()
            .filter(|(s, _)| server.is_none_or(|q| q == s.as_str()))
            .flat_map(|(_, v)| v.iter().cloned())
            .collect();
        if let Some(a) = self.agents.get_mut(agent) {
            a.forget_owed_links(&lines);
        }
        lines
    }

    /// Owes a new agent what is withheld already.
    pub(super) fn tell_withheld(&mut self, agent: &super::agent::AgentId) {
        let all: Vec<(ServerName, String)> = self
            .withheld
            .iter()
            .flat_map(|(s, v)| v.iter().map(move |t| (s.clone(), t.clone())))
            .collect();
        if let Some(a) = self.agents.get_mut(agent) {
            for (server, text) in all {
                a.push_owed(&server, Body::Link(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presenter::agent::AgentId;
    use crate::presenter::state::PresenterConfig;
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

    #[test]
    fn a_withheld_reason_is_owed_once_even_when_recorded_again_and_look_counts_as_telling() {
        let mut p = Presenter::new(PresenterConfig::default());
        let agent = AgentId::new("a");
        p.add_agent(agent.clone());
        let w = || Withheld::Needs {
            feature_set: "chat".into(),
            missing: vec!["channels.publish".into()],
        };
        let toy = ServerName::parse("toy").expect("a name");
        p.set_withheld(&toy, vec![w()]);
        assert_eq!(p.owed(&agent), 1, "a reason recorded first is owed at once");
        p.set_withheld(&toy, vec![w()]); // a reconnect says the same
        assert_eq!(p.withheld(&toy), [w().sentence(&toy)]);
        assert!(
            p.withheld(&ServerName::parse("other").expect("a name"))
                .is_empty()
        );
        assert_eq!(p.owed(&agent), 1);
        let lines = p.look_withheld(&agent, None);
        assert_eq!(lines, vec![w().sentence(&toy)]);
        assert_eq!(p.owed(&agent), 0, "look told it");
        assert_eq!(
            p.look_withheld(&agent, Some("toy")).len(),
            1,
            "look keeps showing it"
        );
        assert!(p.look_withheld(&agent, Some("other")).is_empty());
        let late = AgentId::new("late");
        p.add_agent(late.clone());
        assert_eq!(p.owed(&late), 1, "a later agent is told too");
    }
}
