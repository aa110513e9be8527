//! Events a server cannot send the agent, and why: an older MCPL server that has no
//! `featureSets/update` (0.4 answers it with -32601), or a feature set that needs a
//! capability this host does not grant (channels, context hooks). The agent is told once per
//! reason, with its next answer, and look shows it for as long as it holds. The reasons
//! themselves are `withheld_reason`'s, a leaf this module's presenter methods name.

use super::queue::Body;
use super::state::Presenter;
use super::withheld_reason::Withheld;
use crate::names::ServerName;

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
