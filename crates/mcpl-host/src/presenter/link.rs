//! Where each server's connection stands, as the embedder reports it: shown by look, named in
//! refusals, and told once when a connection is lost or comes back.

use crate::names::ServerName;

use super::link_state::LinkState;
use super::queue::Body;
use super::state::Presenter;

impl Presenter {
    /// Records where a server's connection stands. Losing a live connection and getting it
    /// back are each told once, in read order with the server's changes.
    pub fn set_link(&mut self, server: &ServerName, state: LinkState) {
        let was = self.links.insert(server.clone(), state.clone());
        let text = match (&was, &state) {
            (Some(LinkState::Up), LinkState::Down { error, .. }) => Some(format!(
                "connection to `{server}` lost ({error}); reconnecting"
            )),
            (Some(LinkState::Up), _) | (_, LinkState::Down { .. }) => None,
            (_, LinkState::Up) if self.ever_up.contains(server) => Some(format!(
                "`{server}` reconnected; its toolsets were re-read (nothing was re-opened)"
            )),
            _ => None,
        };
        if state == LinkState::Up {
            self.ever_up.insert(server.clone());
        }
        if let Some(text) = text {
            self.push_link(server, text);
        }
    }

    /// Where a server's connection stands, when the embedder reports it.
    pub fn link(&self, server: &ServerName) -> Option<&LinkState> {
        self.links.get(server)
    }

    /// Every server the embedder reported a connection state for, sorted.
    pub fn linked(&self) -> Vec<&ServerName> {
        self.links.keys().collect()
    }

    pub(super) fn push_link(&mut self, server: &ServerName, text: String) {
        for a in self.agents.values_mut() {
            a.push_owed(server, Body::Link(text.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_down_state_names_its_error_and_next_retry() {
        let down = LinkState::Down {
            attempt: 2,
            error: "connection closed".into(),
            retry_in: Duration::from_millis(400),
        };
        assert_eq!(
            down.to_string(),
            "down (connection closed); retry 3 within 400 ms"
        );
        assert_eq!(
            LinkState::Connecting { attempt: 3 }.to_string(),
            "reconnecting (attempt 3)"
        );
    }

    #[test]
    fn a_link_lost_with_no_wait_says_reconnecting_now_not_retry_in_0_ms() {
        let just_lost = LinkState::Down {
            attempt: 1,
            error: "connection closed".into(),
            retry_in: Duration::ZERO,
        };
        assert_eq!(
            just_lost.to_string(),
            "down (connection closed); reconnecting now"
        );
    }
}
