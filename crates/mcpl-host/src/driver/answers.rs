//! Answering agents: the outcome text, the change that rides with it (H42-H45, H83, H84),
//! and, for an agent whose results are its window, the news it is owed in read order.

use serde_json::Value;

use super::answer::Answer;
use super::reply::{Asked, Replier};
use super::task::{LookWait, Task, Waiting};
use crate::controller::{Outcome, Pending};
use crate::names::ServerName;
use crate::presenter::{AgentId, Plan, Token, can_carry};

/// Marks a part of an answer whose marks were already committed.
const NO_TOKEN: Token = 0;

impl Task {
    pub(super) fn inline(&self, agent: &AgentId) -> bool {
        self.agents
            .get(agent)
            .is_some_and(|a| a.results_are_window())
    }

    /// Owed notices for an agent whose results are its window, in read order, while they fit
    /// in `room` bytes; stops at the first that does not (it waits for the next answer).
    ///
    /// Each counts as stored as soon as it is taken into the answer: the answer is the
    /// agent's window, and the next notice is only handed out once the one before it is
    /// stored (H46). An answer that then cannot be delivered means the client is gone.
    pub(super) fn owed_text(
        &mut self,
        agent: &AgentId,
        room: &mut usize,
        out: &mut Vec<(Token, String)>,
    ) {
        while let Some(item) = self.pres.poll_window(agent) {
            if item.text.len() + 1 > *room {
                self.pres.not_stored(agent, item.token);
                *room = 0;
                return;
            }
            *room -= item.text.len() + 1;
            self.pres.stored(agent, item.token);
            out.push((NO_TOKEN, item.text));
        }
    }

    /// Answers an agent's call with `text`; an agent whose results are its window also gets
    /// what it is owed (unless `carries` is `Some(false)`: the result must read as it would
    /// without RFC-014, H85, H86).
    pub(super) fn reply(
        &mut self,
        agent: &AgentId,
        reply: Replier,
        text: String,
        is_error: bool,
        carries: Option<bool>,
    ) {
        let mut parts = Vec::new();
        if self.inline(agent) && carries != Some(false) {
            let mut room = self.room(&text);
            self.owed_text(agent, &mut room, &mut parts);
        }
        self.deliver(agent, reply, text, is_error, parts, None);
    }

    pub(super) fn room(&self, text: &str) -> usize {
        self.policy
            .inline_cap
            .map_or(usize::MAX, |cap| cap.saturating_sub(text.len()))
    }

    /// Sends the answer with the parts appended; their marks commit only if it reached the
    /// caller (H44, H45).
    pub(super) fn deliver(
        &mut self,
        agent: &AgentId,
        reply: Replier,
        text: String,
        is_error: bool,
        parts: Vec<(Token, String)>,
        result: Option<Value>,
    ) {
        let news = parts
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(_, p)| p.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let text = if news.is_empty() {
            text
        } else {
            format!("{text}\n{news}")
        };
        let answer = Answer {
            text,
            is_error,
            news,
            result,
        };
        let delivered = reply.send(Asked::Answered(answer));
        for (token, _) in parts.into_iter().filter(|(t, _)| *t != NO_TOKEN) {
            if delivered {
                self.pres.stored(agent, token);
            } else {
                self.pres.not_stored(agent, token);
            }
        }
    }

    pub(super) fn answered(&mut self, server: &ServerName, pending: Pending, outcome: Outcome) {
        let key = (server.to_owned(), pending);
        if let Some(w) = self.waiting.remove(&key) {
            self.answer_call(server, pending, outcome, w);
            return;
        }
        for look in &mut self.looks {
            if let Some(at) = look.left.iter().position(|k| *k == key) {
                look.left.remove(at);
                if !matches!(outcome, Outcome::Result(_)) {
                    look.unreachable.push(server.to_owned());
                }
            }
        }
        self.finish_looks();
    }

    pub(super) fn answer_call(
        &mut self,
        server: &ServerName,
        pending: Pending,
        outcome: Outcome,
        w: Waiting,
    ) {
        let Waiting { agent, plan, reply } = w;
        let text = self.pres.answer_text(&plan, Ok(&outcome));
        let is_error = match &outcome {
            Outcome::Result(v) => v.get("isError") == Some(&Value::Bool(true)),
            _ => true,
        };
        let carries = match &outcome {
            Outcome::Result(v) => {
                !matches!(plan, Plan::Act { .. } | Plan::Call { .. }) || can_carry(v)
            }
            _ => true,
        };
        let result = match (outcome, &plan) {
            // The server's own result moves into the answer, uncopied.
            (Outcome::Result(v), Plan::Act { .. } | Plan::Call { .. }) => Some(v),
            _ => None,
        };
        let inline = self.inline(&agent);
        let mut room = self.room(&text);
        let mut parts = Vec::new();
        if !carries {
            self.pres.release(&agent, server, pending);
            return self.deliver(&agent, reply, text, is_error, parts, result);
        }
        // In read order: what was owed before this result's change, the change (H83, H84),
        // then what came after.
        if inline {
            self.owed_text(&agent, &mut room, &mut parts);
        }
        let claimed = self.pres.claims(&agent, server, pending);
        let owed_before = self.pres.owed(&agent);
        match self.pres.take(&agent, server, pending, Some(room)) {
            Some(item) => {
                room = room.saturating_sub(item.text.len() + 1);
                if inline {
                    self.pres.stored(&agent, item.token);
                    parts.push((NO_TOKEN, item.text));
                    self.owed_text(&agent, &mut room, &mut parts);
                } else {
                    parts.push((item.token, item.text));
                }
            }
            // Did not fit (H84) or nothing to tell: the rest waits for the next answer.
            None if claimed && self.pres.owed(&agent) == owed_before => {}
            None => {
                if inline {
                    self.owed_text(&agent, &mut room, &mut parts);
                }
            }
        }
        self.deliver(&agent, reply, text, is_error, parts, result);
    }

    pub(super) fn finish_looks(&mut self) {
        let done: Vec<LookWait> = {
            let (done, rest) = std::mem::take(&mut self.looks)
                .into_iter()
                .partition(|l| l.left.is_empty());
            self.looks = rest;
            done
        };
        for l in done {
            let item = self.pres.look(&l.agent, &l.query, &l.unreachable);
            // The look's own text leads. For an agent whose results are its window, what the
            // look restated counts as shown before the news after it is rendered, so the
            // news does not repeat it (H51).
            let mut parts = Vec::new();
            if self.inline(&l.agent) {
                self.pres.stored(&l.agent, item.token);
            } else {
                parts.push((item.token, String::new()));
            }
            if self.inline(&l.agent) {
                // Look is how such an agent asks for its news: it carries all of it (the
                // inline cap guards tool results, H84; here nothing is cut, H88).
                let mut room = usize::MAX;
                self.owed_text(&l.agent, &mut room, &mut parts);
            }
            self.deliver(&l.agent, l.reply, item.text, false, parts, None);
        }
    }
}
