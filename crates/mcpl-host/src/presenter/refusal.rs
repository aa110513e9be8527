//! Why a model's meta-tool call or call by name was refused before anything was sent. The
//! `Display` of each is the text the agent reads.

use std::fmt;

use super::meta_tools::{META_ACT, META_OPEN};
use crate::names::{InstanceName, ServerName, ToolsetName};

/// What a call asked for, in a refusal's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// A toolset by name.
    Toolset(ToolsetName),
    /// A tool by name.
    Tool(String),
}

impl fmt::Display for Wanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wanted::Toolset(t) => write!(f, "toolset `{t}`"),
            Wanted::Tool(t) => write!(f, "tool `{t}`"),
        }
    }
}

/// A refusal: the call was checked and nothing was sent (H56-H58, H64, §5.5).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// H56: a selector that is neither a string nor null.
    NotAString {
        /// The selector.
        key: &'static str,
    },
    /// The call's arguments are not an object.
    NotAnObject,
    /// A required selector is missing.
    Missing {
        /// The selector.
        key: &'static str,
    },
    /// A member that must be an object is not.
    MustBeObject {
        /// The member (`args`, `options`).
        key: &'static str,
    },
    /// No server presents toolsets.
    NoPresentingServer,
    /// The named server does not present toolsets.
    NotPresenting {
        /// The name given.
        server: String,
        /// The servers that do.
        presenting: Vec<ServerName>,
    },
    /// No server has this name.
    UnknownServer {
        /// The name given.
        server: String,
        /// The servers there are.
        servers: Vec<ServerName>,
    },
    /// The named server does not have what was asked for.
    NotOnServer {
        /// What was asked for.
        wanted: Wanted,
        /// The server named.
        server: ServerName,
        /// What it has, in words.
        has: String,
    },
    /// No server has what was asked for.
    NoServerHas {
        /// What was asked for.
        wanted: Wanted,
        /// What each server has, in words.
        has: Vec<String>,
    },
    /// H57: several servers have it; the call must name one.
    Ambiguous {
        /// What was asked for.
        wanted: Wanted,
        /// The servers that have it.
        servers: Vec<ServerName>,
    },
    /// The server went away between resolving and planning.
    ServerGone,
    /// The toolset is not declared.
    NoToolset {
        /// The toolset.
        toolset: ToolsetName,
    },
    /// A toolset name breaks the grammar (no server can have it).
    BadToolsetName {
        /// The name given.
        name: String,
    },
    /// An instance name breaks the grammar.
    BadInstanceName {
        /// The name given.
        name: String,
    },
    /// The toolset has no instances, but one was named.
    NoInstances {
        /// The toolset.
        toolset: ToolsetName,
    },
    /// The named instance is not open.
    NoSuchInstance {
        /// The toolset.
        toolset: ToolsetName,
        /// The name given (as given: it may break the grammar).
        instance: String,
        /// The open instances.
        open: Vec<InstanceName>,
    },
    /// No instance of the toolset is open.
    NoneOpen {
        /// The toolset.
        toolset: ToolsetName,
    },
    /// §4.3: several instances are open; the call must name one.
    SeveralOpen {
        /// The toolset.
        toolset: ToolsetName,
        /// The open instances.
        open: Vec<InstanceName>,
    },
    /// H64: act was asked for a static tool.
    NotDynamic {
        /// The tool's listed name.
        tool: String,
        /// The name to call it by.
        model: String,
    },
    /// No such tool.
    NoTool {
        /// The name given.
        tool: String,
    },
    /// The tool's toolset is not open.
    ToolsetNotOpen {
        /// The server that has it.
        server: ServerName,
        /// The toolset.
        toolset: ToolsetName,
    },
    /// The tool is not usable now.
    NotAvailable {
        /// The tool.
        tool: String,
        /// Where, in words.
        place: String,
    },
    /// The tool has no definition to check against.
    NoDefinition,
    /// §5.5: the arguments do not fit the current definition.
    BadArguments {
        /// The tool.
        tool: String,
        /// One line per problem.
        problems: Vec<String>,
    },
    /// H38: a moved tool is now reached through act.
    ReachedThroughAct {
        /// The tool's listed name.
        tool: String,
        /// Its server.
        server: ServerName,
    },
}

/// Names as `` `a`, `b` ``, or "none".
pub(super) fn list(names: &[impl fmt::Display]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Refusal {
    /// The refusal's kind as the host names it (`snake_case`, one per variant): free of any
    /// value the server or the model chose, so traces may show it (H65, H81).
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::NotAString { .. } => "not_a_string",
            Refusal::NotAnObject => "not_an_object",
            Refusal::Missing { .. } => "missing",
            Refusal::MustBeObject { .. } => "must_be_object",
            Refusal::NoPresentingServer => "no_presenting_server",
            Refusal::NotPresenting { .. } => "not_presenting",
            Refusal::UnknownServer { .. } => "unknown_server",
            Refusal::NotOnServer { .. } => "not_on_server",
            Refusal::NoServerHas { .. } => "no_server_has",
            Refusal::Ambiguous { .. } => "ambiguous",
            Refusal::ServerGone => "server_gone",
            Refusal::NoToolset { .. } => "no_toolset",
            Refusal::BadToolsetName { .. } => "bad_toolset_name",
            Refusal::BadInstanceName { .. } => "bad_instance_name",
            Refusal::NoInstances { .. } => "no_instances",
            Refusal::NoSuchInstance { .. } => "no_such_instance",
            Refusal::NoneOpen { .. } => "none_open",
            Refusal::SeveralOpen { .. } => "several_open",
            Refusal::NotDynamic { .. } => "not_dynamic",
            Refusal::NoTool { .. } => "no_tool",
            Refusal::ToolsetNotOpen { .. } => "toolset_not_open",
            Refusal::NotAvailable { .. } => "not_available",
            Refusal::NoDefinition => "no_definition",
            Refusal::BadArguments { .. } => "bad_arguments",
            Refusal::ReachedThroughAct { .. } => "reached_through_act",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotAString { key } => write!(f, "`{key}` must be a string (or left out)"),
            Refusal::NotAnObject => write!(f, "the arguments must be an object"),
            Refusal::Missing { key } => write!(f, "`{key}` is required"),
            Refusal::MustBeObject { key } => write!(f, "`{key}` must be an object"),
            Refusal::NoPresentingServer => write!(f, "no server presents toolsets"),
            Refusal::NotPresenting { server, presenting } => write!(
                f,
                "no server `{server}` presents toolsets; servers: {}",
                list(presenting)
            ),
            Refusal::UnknownServer { server, servers } => {
                write!(f, "no server `{server}`; servers: {}", list(servers))
            }
            Refusal::NotOnServer {
                wanted,
                server,
                has,
            } => write!(f, "{wanted} is not on `{server}`; {has}"),
            Refusal::NoServerHas { wanted, has } => {
                write!(f, "no server has {wanted}; {}", has.join("; "))
            }
            Refusal::Ambiguous { wanted, servers } => write!(
                f,
                "{wanted} is on several servers: {}; name one with `server`",
                list(servers)
            ),
            Refusal::ServerGone => write!(f, "server gone"),
            Refusal::NoToolset { toolset } => write!(f, "no toolset `{toolset}`"),
            Refusal::BadToolsetName { name } => write!(
                f,
                "no toolset `{name}`: it is not a valid toolset name ({})",
                mcpl_protocol::rfc014::NAME_RULE
            ),
            Refusal::BadInstanceName { name } => write!(
                f,
                "`{name}` is not a valid instance name ({})",
                mcpl_protocol::rfc014::NAME_RULE
            ),
            Refusal::NoInstances { toolset } => write!(
                f,
                "toolset `{toolset}` has no instances; leave `instance` out"
            ),
            Refusal::NoSuchInstance {
                toolset,
                instance,
                open,
            } => write!(
                f,
                "`{toolset}` has no open instance `{instance}`; open instances: {}",
                list(open)
            ),
            Refusal::NoneOpen { toolset } => write!(
                f,
                "`{toolset}` has no open instance; open one with {META_OPEN}"
            ),
            Refusal::SeveralOpen { toolset, open } => write!(
                f,
                "`{toolset}` has several open instances: {}; name one with `instance`",
                list(open)
            ),
            Refusal::NotDynamic { tool, model } => write!(
                f,
                "`{tool}` is not a dynamic tool; call it by name as `{model}`"
            ),
            Refusal::NoTool { tool } => write!(f, "no tool `{tool}`"),
            Refusal::ToolsetNotOpen { server, toolset } => write!(
                f,
                "toolset `{toolset}` is not open; open it with {}",
                open_call(server, toolset)
            ),
            Refusal::NotAvailable { tool, place } => {
                write!(f, "`{tool}` is not available now in {place}")
            }
            Refusal::NoDefinition => write!(f, "no definition"),
            Refusal::BadArguments { tool, problems } => write!(
                f,
                "the arguments do not fit `{tool}`:\n{}",
                problems.join("\n")
            ),
            Refusal::ReachedThroughAct { tool, server } => write!(
                f,
                "`{tool}` is now reached through {META_ACT} (tool `{tool}`, server `{server}`)"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// The exact call that opens `toolset` on `server`, as the model would make it.
pub fn open_call(server: &ServerName, toolset: &ToolsetName) -> String {
    let args = serde_json::json!({"server": server, "toolset": toolset});
    format!("{META_OPEN} {args}")
}
