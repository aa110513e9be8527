//! Each agent's window queue: changes owed as notices, in read order, told once; changes that
//! ride with a result; and the told marks (ended ids, shown first sentences, announcements)
//! that are committed only once the text carrying them was stored (H41-H54).

use crate::names::ServerName;
use std::collections::BTreeSet;

use mcpl_protocol::rfc014::Presence;

use super::agent::AgentId;
use super::notice::{finish, key_text, quote, render_body};
use super::queue::{
    Agent, Body, EARLY_EVENTS, Entry, Marks, ShownKey, State, Token, Waiting, WaitingState,
    WindowItem,
};
use super::state::Presenter;
use crate::controller::{Carrier, Change, Notice, Pending, PushEvent};

impl Presenter {
    /// The agents with a window, sorted.
    pub fn agents(&self) -> Vec<&AgentId> {
        self.agents.keys().collect()
    }

    /// The news `agent` is still owed, in read order, each rendered on its own. A read-only
    /// look (for an inspector): nothing is handed out or marked told, and an entry with
    /// nothing left to tell is left out.
    pub fn waiting(&self, agent: &AgentId) -> Vec<Waiting> {
        let Some(a) = self.agents.get(agent) else {
            return Vec::new();
        };
        a.entries
            .iter()
            .filter_map(|e| {
                let mut marks = Marks::default();
                let lines = render_body(self, a, &e.server, &e.body, &mut marks, false);
                let text = finish(&e.server, lines)?;
                let state = match e.state {
                    State::Owed => WaitingState::Owed,
                    State::Claimed(_) => WaitingState::Claimed,
                    State::AwaitEvent(_) => WaitingState::AwaitingPush,
                    State::Out(_) => WaitingState::HandedOut,
                };
                Some(Waiting {
                    server: e.server.clone(),
                    state,
                    text,
                })
            })
            .collect()
    }

    /// Registers an agent window; changes read from now on are owed to it.
    pub fn add_agent(&mut self, agent: AgentId) {
        if !self.agents.contains_key(&agent) {
            self.agents.entry(agent.clone()).or_default();
            self.tell_withheld(&agent);
        }
    }

    /// Forgets an agent. Changes claimed for it are lost with it only if no other agent
    /// owes them; each agent has its own queue.
    pub fn remove_agent(&mut self, agent: &AgentId) {
        self.agents.remove(agent);
    }

    /// Registers the agent as the taker of a request's change, before the request is sent
    /// (H42): a change its answer carries rides with the answer.
    pub fn register_taker(&mut self, agent: &AgentId, server: &ServerName, pending: Pending) {
        if let Some(a) = self.agents.get_mut(agent) {
            a.takers.insert((server.to_owned(), pending));
        }
    }

    fn push_entry(&mut self, server: &ServerName, body: Body, state_for: impl Fn(&Agent) -> State) {
        for a in self.agents.values_mut() {
            let state = state_for(a);
            a.entries.push(Entry {
                server: server.to_owned(),
                body: body.clone(),
                state,
            });
        }
    }

    /// A controller's `Changed` effect, handled as it is polled (read time, H42): claimed by
    /// the request's registered taker, kept for the push's delivery, or owed as a notice.
    pub fn handle_change(&mut self, server: &ServerName, change: &Change) {
        let body = Body::Change(change.clone());
        let carrier = change.carrier.clone();
        let seq = change.seq;
        self.push_entry(server, body, |a| match &carrier {
            Carrier::Result {
                pending,
                late: false,
            } if a.takers.contains(&(server.to_owned(), *pending)) => State::Claimed(*pending),
            Carrier::Push { accepted: true, .. }
                if !a.early_events.contains(&(server.to_owned(), seq)) =>
            {
                State::AwaitEvent(seq)
            }
            _ => State::Owed,
        });
    }

    /// A controller's `Event` effect: the push is delivered with its own change (H47).
    pub fn handle_event(&mut self, server: &ServerName, ev: &PushEvent) {
        self.handle_event_told(server, ev, &BTreeSet::new());
    }

    /// [`handle_event`](Self::handle_event) where the agents in `told` were told the event
    /// already (an MCPL client of a surface, as its own `push/event`): they are not told it
    /// again as news; the change it carried is still owed to them.
    pub fn handle_event_told(
        &mut self,
        server: &ServerName,
        ev: &PushEvent,
        told: &BTreeSet<AgentId>,
    ) {
        for (id, a) in &mut self.agents {
            if told.contains(id) {
                if let Some(e) = a
                    .entries
                    .iter_mut()
                    .find(|e| &e.server == server && e.state == State::AwaitEvent(ev.seq))
                {
                    e.state = State::Owed;
                } else {
                    a.early_events.push_back((server.to_owned(), ev.seq));
                    if a.early_events.len() > EARLY_EVENTS {
                        a.early_events.pop_front();
                    }
                }
                continue;
            }
            let waiting = a
                .entries
                .iter_mut()
                .find(|e| &e.server == server && e.state == State::AwaitEvent(ev.seq));
            match waiting {
                Some(e) => {
                    if let Body::Change(c) = &e.body {
                        e.body = Body::Event {
                            ev: ev.clone(),
                            change: Some(c.clone()),
                        };
                    }
                    e.state = State::Owed;
                }
                None => {
                    if a.early_events.len() >= EARLY_EVENTS {
                        a.early_events.pop_front();
                    }
                    a.early_events.push_back((server.to_owned(), ev.seq));
                    a.entries.push(Entry {
                        server: server.to_owned(),
                        body: Body::Event {
                            ev: ev.clone(),
                            change: None,
                        },
                        state: State::Owed,
                    });
                }
            }
        }
    }

    /// A controller's `Notice` effect (a suggestion): owed like a change (§7).
    pub fn handle_notice(&mut self, server: &ServerName, notice: &Notice) {
        match notice {
            Notice::Suggestion { entry, .. } => {
                self.push_entry(server, Body::Suggestion(entry.clone()), |_| State::Owed);
            }
        }
    }

    pub(super) fn push_move(&mut self, server: &ServerName, tool: &str, now_static: bool) {
        let body = Body::Move {
            tool: tool.to_owned(),
            now_static,
        };
        self.push_entry(server, body, |_| State::Owed);
    }

    fn token(&mut self) -> Token {
        self.next_token += 1;
        self.next_token
    }

    fn noticeable(&self, e: &Entry) -> bool {
        // H47: a notice needs the grant; a push's own delivery already had it.
        matches!(e.body, Body::Event { .. } | Body::Link(_))
            || self.servers.get(&e.server).is_some_and(|s| s.push_events)
    }

    /// The next notice for the agent's window, in read order. Returns `None` while an earlier
    /// change is claimed or handed out and not yet stored (H41, H46), and skips changes of a
    /// server without the `pushEvents` grant, which stay owed for its next carrier (H47).
    pub fn poll_window(&mut self, agent: &AgentId) -> Option<WindowItem> {
        loop {
            let a = self.agents.get(agent)?;
            let mut pick = None;
            for (i, e) in a.entries.iter().enumerate() {
                match e.state {
                    State::Owed if self.noticeable(e) => {
                        pick = Some(i);
                        break;
                    }
                    // Owed but not for the window now (no `pushEvents` grant, or its
                    // server is gone): it waits for the server's next carrier.
                    State::Owed => {}
                    _ => return None,
                }
            }
            let i = pick?;
            let e = a.entries[i].clone();
            let mut marks = Marks::default();
            let lines = render_body(self, a, &e.server, &e.body, &mut marks, false);
            match finish(&e.server, lines) {
                None => {
                    // Nothing left to tell (already told): drop it and look further.
                    if let Some(a) = self.agents.get_mut(agent) {
                        a.entries.remove(i);
                    }
                }
                Some(text) => {
                    let token = self.token();
                    let a = self.agents.get_mut(agent)?;
                    a.entries[i].state = State::Out(token);
                    a.out.insert(token, marks);
                    return Some(WindowItem {
                        token,
                        server: Some(e.server),
                        text,
                    });
                }
            }
        }
    }

    /// The change that rides with a request's answer (H42, H44), together with earlier
    /// changes of the same server still owed (H66; H47 without the grant). `room` is what the
    /// result's inline cap leaves (H84): if the change does not fit, it stays owed as a
    /// notice and `None` comes back. Unregisters the taker.
    pub fn take(
        &mut self,
        agent: &AgentId,
        server: &ServerName,
        pending: Pending,
        room: Option<usize>,
    ) -> Option<WindowItem> {
        let a = self.agents.get_mut(agent)?;
        a.takers.remove(&(server.to_owned(), pending));
        let claimed = a
            .entries
            .iter()
            .position(|e| &e.server == server && e.state == State::Claimed(pending))?;
        // Earlier changes of this server still owed ride along, in read order (H46, H66;
        // without the grant this is their only way to the agent, H47).
        let picks: Vec<usize> = (0..=claimed)
            .filter(|&i| {
                let e = &a.entries[i];
                i == claimed || (&e.server == server && e.state == State::Owed)
            })
            .collect();
        let a = self.agents.get(agent)?;
        let mut marks = Marks::default();
        let mut lines = Vec::new();
        for &i in &picks {
            let e = &a.entries[i];
            lines.extend(render_body(self, a, server, &e.body, &mut marks, false));
        }
        let text = finish(server, lines);
        let a = self.agents.get_mut(agent)?;
        let Some(text) = text else {
            a.entries.remove(claimed);
            return None;
        };
        if room.is_some_and(|r| text.len() > r) {
            a.entries[claimed].state = State::Owed; // H84: told as a notice instead
            return None;
        }
        self.next_token += 1;
        let token = self.next_token;
        let a = self.agents.get_mut(agent)?;
        for &i in &picks {
            a.entries[i].state = State::Out(token);
        }
        a.out.insert(token, marks);
        Some(WindowItem {
            token,
            server: Some(server.clone()),
            text,
        })
    }

    /// Whether a change read for this request is claimed by the agent, waiting to ride with
    /// its answer.
    pub fn claims(&self, agent: &AgentId, server: &ServerName, pending: Pending) -> bool {
        self.agents.get(agent).is_some_and(|a| {
            a.entries
                .iter()
                .any(|e| &e.server == server && e.state == State::Claimed(pending))
        })
    }

    /// The taker stopped waiting (turn cancelled, call failed after its result was read,
    /// H45, H87): its claimed change becomes owed again, at its place in read order.
    pub fn release(&mut self, agent: &AgentId, server: &ServerName, pending: Pending) {
        if let Some(a) = self.agents.get_mut(agent) {
            a.takers.remove(&(server.to_owned(), pending));
            for e in &mut a.entries {
                if &e.server == server && e.state == State::Claimed(pending) {
                    e.state = State::Owed;
                }
            }
        }
    }

    /// The text under `token` was stored in the agent's window: its changes count as told,
    /// its ended ids and first sentences as shown (H42, H48, H50).
    pub fn stored(&mut self, agent: &AgentId, token: Token) {
        let Some(a) = self.agents.get_mut(agent) else {
            return;
        };
        a.entries.retain(|e| e.state != State::Out(token));
        if let Some(m) = a.out.remove(&token) {
            a.told_ended.extend(m.ended);
            a.shown.extend(m.shown);
            for k in m.announced {
                a.announced.insert(k, token);
            }
        }
    }

    /// The text under `token` could not be stored: its changes are owed again (H45).
    pub fn not_stored(&mut self, agent: &AgentId, token: Token) {
        let Some(a) = self.agents.get_mut(agent) else {
            return;
        };
        a.out.remove(&token);
        for e in &mut a.entries {
            if e.state == State::Out(token) {
                e.state = State::Owed;
            }
        }
    }

    /// How many entries the agent is still owed (notices, claimed or handed-out changes).
    pub fn owed(&self, agent: &AgentId) -> usize {
        self.agents.get(agent).map_or(0, |a| a.entries.len())
    }

    /// Renders a change for a result that may never reach an agent (H52): every tool it
    /// names is described in full, and nothing is marked.
    pub fn render_detached(&self, server: &ServerName, change: &Change) -> Option<String> {
        let agent = Agent::default();
        let mut marks = Marks::default();
        let lines = render_body(
            self,
            &agent,
            server,
            &Body::Change(change.clone()),
            &mut marks,
            true,
        );
        finish(server, lines)
    }

    /// Hands out text under a fresh token with the given marks (look, reminders).
    pub(super) fn hand_out(
        &mut self,
        agent: &AgentId,
        server: Option<&ServerName>,
        text: String,
        marks: Marks,
    ) -> WindowItem {
        let token = self.token();
        if let Some(a) = self.agents.get_mut(agent) {
            a.out.insert(token, marks);
        }
        WindowItem {
            token,
            server: server.cloned(),
            text,
        }
    }

    /// H53: a compact reminder of open toolsets whose announcement is no longer whole in the
    /// agent's compiled context (`compiled`: the tokens of the rows in it). Only servers with
    /// the `pushEvents` grant are reminded. Storing the reminder makes it the announcement.
    pub fn reminder(&mut self, agent: &AgentId, compiled: &BTreeSet<Token>) -> Option<WindowItem> {
        let a = self.agents.get(agent)?;
        let mut lines = Vec::new();
        let mut marks = Marks::default();
        for (id, e) in &self.servers {
            if !e.push_events {
                continue;
            }
            for ((ts, inst), open) in e.snap.open() {
                let key = (id.clone(), ts.clone(), inst.clone());
                if a.announced.get(&key).is_some_and(|t| compiled.contains(t)) {
                    continue;
                }
                let tools: Vec<String> = e
                    .snap
                    .tools()
                    .iter()
                    .filter(|t| t.presence == Presence::Dynamic && t.toolset.as_ref() == Some(ts))
                    .filter(|t| e.snap.visible(&t.tool.name, inst.as_ref()))
                    .map(|t| format!("`{}`", t.tool.name))
                    .collect();
                let mut line = format!("- {id}: {} is open", key_text(ts, inst.as_deref()));
                if let Some(t) = &open.title {
                    line.push_str(&format!(" ({})", quote(id, t)));
                }
                if !tools.is_empty() {
                    line.push_str(&format!("; tools: {}", tools.join(", ")));
                }
                lines.push(line);
                marks.announced.push(key);
            }
        }
        if lines.is_empty() {
            return None;
        }
        let text = format!(
            "Open toolsets (use {}):\n{}",
            super::meta_tools::META_ACT,
            lines.join("\n")
        );
        Some(self.hand_out(agent, None, text, marks))
    }

    /// Marks look's rendered tools as shown once its text is stored (H51).
    pub(super) fn look_marks(&self, shown: Vec<ShownKey>) -> Marks {
        Marks {
            shown,
            ..Marks::default()
        }
    }
}
