//! Changes: what applying a hinted message or a list altered that an agent ought to hear.
//!
//! A change is computed by comparing the dynamic-tool state before and after a message was
//! applied, so every carrier (result, push, `tools/hints`, statement) reports the same way.

use mcpl_protocol::rfc014::SuggestEntry;

use super::pending::Pending;
use crate::names::{InstanceName, ToolsetName};

/// The read position of the message a change arrived in. Changes are told in this order (H41).
pub type ReadSeq = u64;

/// One change, stamped with the read position of its carrier.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Where in read order the carrier was read (H41, H46).
    pub seq: ReadSeq,
    /// The message the change arrived in: it decides who may take the change (H42).
    pub carrier: Carrier,
    /// What changed, in a stable order.
    pub items: Vec<ChangeItem>,
}

/// The message a change arrived in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Carrier {
    /// The result of a command this controller sent (`tools/call`, `toolsets/open|close|list`).
    /// `late` is true when the answer came after the request's timeout (H14): nobody awaits it.
    Result {
        /// The command's handle.
        pending: Pending,
        /// True when the answer came after the request timed out.
        late: bool,
    },
    /// A `push/event`; `accepted` says whether the host accepted the event (H13, H47).
    Push {
        /// The event's id, if it had one.
        event_id: Option<String>,
        /// Whether the host accepted the event for delivery.
        accepted: bool,
    },
    /// A `tools/hints` notification.
    Hints,
    /// A `toolsets/list` read by the connect or recovery path (a full statement).
    Statement,
    /// A `tools/list` (definitions and presence).
    List,
    /// A manifest change (declarations removed, toolHints withdrawn, H30).
    Manifest,
    /// A host-side change: an undeclared group opened or closed by the host (§5.4).
    Host,
}

/// Why a toolset or instance closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseCause {
    /// The server stated the close (a hint or a statement that no longer lists it).
    Server,
    /// H28: after a (re)connect the statement did not list it and no ended record covers it.
    EndedWhileAway,
    /// H30: the manifest no longer declares the toolset.
    DeclarationRemoved,
    /// The host closed an undeclared group itself (§5.4).
    Host,
}

/// One thing that changed.
///
/// Every toolset and instance name here is checked against the RFC-014 grammar (§5.1): the
/// controller skips a server-sent entry whose name breaks it before anything is applied (see
/// [`Snapshot`](super::Snapshot)), so a change never carries a name the host cannot use.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChangeItem {
    /// A toolset (or one of its instances) is now open.
    Opened {
        /// The toolset.
        toolset: ToolsetName,
        /// The instance, for instanced toolsets.
        instance: Option<InstanceName>,
        /// The title the server gave it (server-written text, §10).
        title: Option<String>,
    },
    /// A toolset (or one of its instances) closed.
    Closed {
        /// The toolset.
        toolset: ToolsetName,
        /// The instance, for instanced toolsets.
        instance: Option<InstanceName>,
        /// Why it closed.
        cause: CloseCause,
        /// The server's reason, if it gave one (server-written text).
        reason: Option<String>,
        /// The id of the ended record this close corresponds to (§6: so it is told once).
        ended_id: Option<String>,
    },
    /// An open instance or toolset was retitled.
    Retitled {
        /// The toolset.
        toolset: ToolsetName,
        /// The instance, for instanced toolsets.
        instance: Option<InstanceName>,
        /// The new title.
        title: String,
    },
    /// A dynamic tool became visible or invisible.
    Visibility {
        /// The tool's listed name.
        tool: String,
        /// Its toolset, if any.
        toolset: Option<ToolsetName>,
        /// Its instance, for instanced toolsets.
        instance: Option<InstanceName>,
        /// Visible now.
        visible: bool,
    },
    /// A dynamic tool's effective definition changed.
    Redefined {
        /// The tool's listed name.
        tool: String,
        /// Its instance, for per-instance definitions (§5.5).
        instance: Option<InstanceName>,
    },
    /// An ended record reported by `toolsets/list` (§5.3); told once per id (H48).
    Ended {
        /// The record's id, unique for the principal.
        id: String,
        /// The toolset it ended.
        toolset: ToolsetName,
        /// The instance it ended, for instanced toolsets.
        instance: Option<InstanceName>,
        /// The server's reason (server-written text).
        reason: Option<String>,
    },
    /// A tool's presence in the latest list differs from the one before (H32); the presenter
    /// publishes it at its next rebuild (H33, H34).
    PresenceListed {
        /// The tool's listed name.
        tool: String,
        /// True when the latest list has the tool static.
        now_static: bool,
    },
}

/// Something to show the agent that changes no state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// A server suggestion (§7): it opens or closes nothing by itself.
    Suggestion {
        /// Where in read order it arrived.
        seq: ReadSeq,
        /// The suggestion as the server wrote it (its reason is server-written text).
        entry: SuggestEntry,
    },
}
