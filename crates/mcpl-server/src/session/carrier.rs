//! Carriers and revs (§6.1, §6.2): which message carries a hint change, and the rev it takes.
//!
//! A rev is taken only when the message carrying it is queued, in the same call, so the
//! order of `Effect::Send`s is the order of revs.

use super::statement::{Statement, from_touches};
use super::{Effect, Session};
use crate::store::OpenKey;
use crate::update::{Event, PrincipalChange, Touch};
use mcpl_protocol::jsonrpc::{Message, Notification, Request, RequestId};
use mcpl_protocol::mcpl::PushEventParams;
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{HintChanges, SuggestEntry};
use std::time::Instant;

impl Session {
    /// The statement of `touches` as this principal's state holds them now.
    pub(super) fn statement_for(&self, touches: &[Touch]) -> Statement {
        let catalog = self.server.catalog();
        from_touches(&catalog, &self.state, touches)
    }

    /// Takes the next rev for a message about to be queued (§6.1: consecutive from 1).
    fn take_rev(&mut self) -> mcpl_protocol::rfc014::Rev {
        self.rev = self.rev.next();
        self.rev
    }

    /// Stamps `statement` (and `suggest`) with the next rev, or returns `None` without taking
    /// one when there is nothing to say or the host has no `toolHints` (§6.3). Call it only
    /// right before queuing the message that carries the result.
    pub(super) fn stamp(
        &mut self,
        statement: Statement,
        suggest: Vec<SuggestEntry>,
    ) -> Option<HintChanges> {
        if !self.host.tool_hints || self.disconnected {
            return None;
        }
        if statement.is_empty() && suggest.is_empty() {
            return None;
        }
        let mut hints = HintChanges::new(self.take_rev());
        hints.tools = (!statement.tools.is_empty()).then_some(statement.tools);
        hints.toolsets = (!statement.toolsets.is_empty()).then_some(statement.toolsets);
        hints.suggest = (!suggest.is_empty()).then_some(suggest);
        Some(hints)
    }

    /// A full statement always takes a rev (§5.3), even when empty.
    pub(super) fn stamp_full(&mut self, statement: Statement) -> HintChanges {
        let mut hints = HintChanges::new(self.take_rev());
        hints.tools = (!statement.tools.is_empty()).then_some(statement.tools);
        hints
    }

    /// Queues `tools/hints`: a change with nothing to explain it (§6.2).
    pub(super) fn send_tools_hints(&mut self, statement: Statement, suggest: Vec<SuggestEntry>) {
        if let Some(hints) = self.stamp(statement, suggest) {
            let params = serde_json::to_value(&hints).expect("hint changes serialize");
            self.send(Message::Notification(Notification::new(
                methods::TOOLS_HINTS,
                Some(params),
            )));
        }
    }

    /// Queues a `push/event` showing `event`, carrying `hints` if given. Never retried when it
    /// carries hints (§6.1); nothing here retries at all.
    fn send_push(&mut self, now: Instant, event: &Event, hints: Option<HintChanges>) {
        let n = self.next_out;
        self.next_out += 1;
        let catalog = self.server.catalog();
        let mut params = PushEventParams::new(
            catalog.event_feature_set.clone(),
            format!("{}-{}-ev-{n}", self.event_prefix, self.connection),
            self.server.config().clock.iso8601(now),
            event.content.clone(),
        );
        params.tags = (!event.tags.is_empty()).then(|| event.tags.clone());
        if self.host.tool_hints {
            params.toolset = event.toolset.clone();
            params.instance = event.instance.clone();
        }
        params.hints = hints;
        let id = RequestId::String(format!("push-{n}"));
        self.pending_events.insert(id.clone());
        let params = serde_json::to_value(&params).expect("push params serialize");
        self.send(Message::Request(Request::new(
            id,
            methods::PUSH_EVENT,
            Some(params),
        )));
    }

    /// Something else's consequences (§6.2): on the push that explains them when there is an
    /// event and `pushEvents` is granted; otherwise as `tools/hints`.
    pub(super) fn deliver(&mut self, now: Instant, change: &PrincipalChange) {
        let statement = if self.host.tool_hints {
            self.statement_for(&change.touches)
        } else {
            Statement::default()
        };
        let suggest = change.suggest.clone();
        let limit = self.server.config().max_pending_events;
        if change.event.is_some() && self.push_granted() && self.pending_events.len() >= limit {
            // The host is not answering its pushes: the event is dropped, its hints are not.
            tracing::warn!(
                connection = %self.connection,
                pending = self.pending_events.len(),
                limit,
                "push/event dropped: {} events are unanswered, the limit \
                 (`max_pending_events`); its hints go as tools/hints",
                self.pending_events.len()
            );
            return self.send_tools_hints(statement, suggest);
        }
        match &change.event {
            Some(event) if self.push_granted() => {
                let mut event = event.clone();
                if event.toolset.is_none() {
                    // §6: a push carrying hints should name its toolset and instance; when
                    // every change is in one place, that place is what the event is about.
                    if let Some(key) = single_scope(&change.touches) {
                        event.toolset = Some(key.toolset.to_string());
                        event.instance = key.instance.as_ref().map(|i| i.to_string());
                    }
                }
                let hints = self.stamp(statement, suggest);
                self.send_push(now, &event, hints);
            }
            // Fallback (§6.2): no push on this connection, so the change goes alone.
            _ => self.send_tools_hints(statement, suggest),
        }
    }

    /// Hands a committed change to the driver for the principal's other connections.
    pub(super) fn publish(&mut self, change: PrincipalChange) {
        if !change.is_empty() {
            self.effects.push_back(Effect::Publish(change));
        }
    }
}

/// The one toolset or instance every touch is in, if there is exactly one.
fn single_scope(touches: &[Touch]) -> Option<&OpenKey> {
    let mut keys = touches.iter().map(|t| match t {
        Touch::Tool { key, .. } => key.as_ref(),
        Touch::State { key, .. } => Some(key),
        Touch::Presence { .. } => None,
    });
    let first = keys.next()??;
    keys.all(|k| k == Some(first)).then_some(first)
}
