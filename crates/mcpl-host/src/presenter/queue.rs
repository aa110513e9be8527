//! The data of each agent's window queue: the entries owed, their states, the told marks
//! that storing a text commits, and what the queue hands out ([`WindowItem`]) or shows as
//! owed ([`Waiting`]). The presenter's window methods (`window`) and the notice
//! renderer (`notice`) both read it; it depends on neither.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use mcpl_protocol::rfc014::SuggestEntry;

use crate::controller::{Change, Pending, PushEvent, ReadSeq};
use crate::names::{InstanceName, ServerName, ToolsetName};

/// Names one piece of text handed to the embedder; report it with
/// [`Presenter::stored`](super::state::Presenter::stored) or
/// [`Presenter::not_stored`](super::state::Presenter::not_stored). Also the row tag reminders look
/// for.
pub type Token = u64;

/// The longest notice, in bytes, before "(too long to show)" (H73).
pub const MAX_NOTICE: usize = 8_000;

/// Text for an agent's window (a notice, an event, a change riding with a result, a look).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowItem {
    /// Report the outcome of storing this text under this token.
    pub token: Token,
    /// The server the text is about; `None` for text about several (look, a reminder).
    pub server: Option<ServerName>,
    /// The text, with every server-written part attributed to the server (H54).
    pub text: String,
}

/// Where an entry an agent is owed stands (see [`Presenter::waiting`](super::state::Presenter::waiting)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitingState {
    /// To be told: as a notice, or with the server's next answer without the grant (H47).
    Owed,
    /// Claimed by a request whose answer it will ride with (H42).
    Claimed,
    /// A push's change, waiting for the push's own delivery (H47).
    AwaitingPush,
    /// Handed out in a text not yet reported stored (H45).
    HandedOut,
}

impl std::fmt::Display for WaitingState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WaitingState::Owed => "owed",
            WaitingState::Claimed => "rides with an answer",
            WaitingState::AwaitingPush => "waits for its push",
            WaitingState::HandedOut => "handed out, not yet stored",
        })
    }
}

/// One piece of news an agent has not been told yet, as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The server it is about.
    pub server: ServerName,
    /// Where it stands.
    pub state: WaitingState,
    /// The text it would be told as now, on its own.
    pub text: String,
}

#[derive(Debug, Clone)]
pub(super) enum Body {
    Change(Change),
    Event {
        ev: PushEvent,
        change: Option<Change>,
    },
    Suggestion(SuggestEntry),
    Move {
        tool: String,
        now_static: bool,
    },
    /// The host's own word about a connection (lost, back).
    Link(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// To be told as a notice (or by the next carrier, without the grant).
    Owed,
    /// Claimed at read time by a taker registered for this request (H42).
    Claimed(Pending),
    /// A push's change, waiting for the push's own delivery (H47).
    AwaitEvent(ReadSeq),
    /// Handed out under this token; not yet stored.
    Out(Token),
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) server: ServerName,
    pub(super) body: Body,
    pub(super) state: State,
}

pub(super) type ShownKey = (ServerName, String, String);
pub(super) type EndedKey = (ServerName, String, String);
pub(super) type AnnounceKey = (ServerName, ToolsetName, Option<InstanceName>);

/// What storing a piece of text commits.
#[derive(Debug, Clone, Default)]
pub(super) struct Marks {
    pub(super) ended: Vec<EndedKey>,
    pub(super) shown: Vec<ShownKey>,
    pub(super) announced: Vec<AnnounceKey>,
}

/// One agent's queue and told state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Agent {
    pub(super) entries: Vec<Entry>,
    pub(super) takers: BTreeSet<(ServerName, Pending)>,
    pub(super) told_ended: BTreeSet<EndedKey>,
    pub(super) shown: BTreeSet<ShownKey>,
    pub(super) announced: BTreeMap<AnnounceKey, Token>,
    pub(super) out: BTreeMap<Token, Marks>,
    /// Pushes delivered before their change was applied (held on Streamable HTTP): their
    /// change, when it comes, is owed as a notice instead of waiting for the push.
    pub(super) early_events: VecDeque<(ServerName, ReadSeq)>,
}

/// How many early pushes an agent remembers.
pub(super) const EARLY_EVENTS: usize = 256;

impl Agent {
    pub(super) fn push_owed(&mut self, server: &ServerName, body: Body) {
        self.entries.push(Entry {
            server: server.clone(),
            body,
            state: State::Owed,
        });
    }

    /// Drops owed host words (link and withheld sentences) equal to one of `texts`.
    pub(super) fn forget_owed_links(&mut self, texts: &[String]) {
        self.entries.retain(|e| {
            !(e.state == State::Owed && matches!(&e.body, Body::Link(t) if texts.contains(t)))
        });
    }

    pub(super) fn forget_ended(&mut self, server: &ServerName, principal: &str, id: &str) {
        self.told_ended
            .remove(&(server.clone(), principal.to_owned(), id.to_owned()));
    }

    pub(super) fn forget_server(&mut self, server: &ServerName) {
        self.entries.retain(|e| &e.server != server);
        self.takers.retain(|(s, _)| s != server);
        self.told_ended.retain(|(s, _, _)| s != server);
        self.shown.retain(|(s, _, _)| s != server);
        self.announced.retain(|(s, _, _), _| s != server);
    }

    pub(super) fn is_shown(&self, key: &ShownKey) -> bool {
        self.shown.contains(key)
    }
}
