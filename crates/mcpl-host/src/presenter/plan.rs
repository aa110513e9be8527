//! What a model's meta-tool or tool call comes to once checked ([`Plan`]), and what look was
//! asked about ([`LookQuery`]).
//!
//! A leaf under the presenter: the presenter's methods that take or return them (planning in
//! `meta`, the answers' text and look in `answer`) name this module, and it names no module
//! that names the presenter.

use crate::controller::{CallRequest, CloseRequest, OpenRequest};
use crate::names::{InstanceName, ServerName, ToolsetName};

/// What a model's tool call asks the embedder to do, once selectors and routes are checked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Plan {
    /// Call [`crate::Controller::open`] on `server`.
    Open {
        /// The server.
        server: ServerName,
        /// The request (an instance name is always proposed for instanced toolsets, H59).
        req: OpenRequest,
    },
    /// Open an undeclared group: [`crate::Controller::set_group`] (nothing is sent, §5.4).
    OpenGroup {
        /// The server.
        server: ServerName,
        /// The group.
        group: ToolsetName,
    },
    /// Call [`crate::Controller::close`] on `server`.
    Close {
        /// The server.
        server: ServerName,
        /// The request.
        req: CloseRequest,
    },
    /// Close an undeclared group on the host side.
    CloseGroup {
        /// The server.
        server: ServerName,
        /// The group.
        group: ToolsetName,
    },
    /// A plain server's closed host-side toolset with `autoOpen`: open the group
    /// ([`crate::Controller::set_group`]), then call as [`Plan::Act`].
    ActOpening {
        /// The server.
        server: ServerName,
        /// The host-side toolset to open first.
        group: ToolsetName,
        /// The call.
        req: CallRequest,
    },
    /// Call a dynamic tool through act: [`crate::Controller::call`].
    Act {
        /// The server.
        server: ServerName,
        /// The call (with an instance only for instanced toolsets).
        req: CallRequest,
    },
    /// A call to a static tool by its model-facing name, or to a projected tool.
    Call {
        /// The server.
        server: ServerName,
        /// The call.
        req: CallRequest,
    },
    /// Refresh these servers ([`crate::Controller::refresh`]) and then render
    /// [`Presenter::look`](super::state::Presenter::look).
    Look {
        /// The servers that present toolsets (to re-read, H62).
        servers: Vec<ServerName>,
        /// What to show.
        query: LookQuery,
    },
}

impl Plan {
    /// The server and tool a call resolves to, for prose routing (H67): an act counts as a
    /// call to the tool it resolves to. `None` for opens, closes, groups and look.
    pub fn target(&self) -> Option<(&ServerName, &str)> {
        match self {
            Plan::Act { server, req }
            | Plan::Call { server, req }
            | Plan::ActOpening { server, req, .. } => Some((server, &req.tool)),
            _ => None,
        }
    }
}

/// What look was asked about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LookQuery {
    /// Only this server.
    pub server: Option<ServerName>,
    /// Only this toolset. A name outside the grammar is refused before look reads anything
    /// ([`Refusal::BadToolsetName`](super::refusal::Refusal::BadToolsetName)).
    pub toolset: Option<ToolsetName>,
    /// Only this instance (of the tool asked about); a name outside the grammar is refused
    /// ([`Refusal::BadInstanceName`](super::refusal::Refusal::BadInstanceName)).
    pub instance: Option<InstanceName>,
    /// One tool.
    pub tool: Option<String>,
    /// Search words: rank every server's toolsets and tools by them instead.
    pub query: Option<String>,
}
