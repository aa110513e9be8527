//! The snapshot: everything a controller knows about one server, as the presenter reads it.
//!
//! The controller keeps its state in a `Snapshot` and hands out `&Snapshot`; the presenter
//! clones what it needs. Nothing here changes state: the mutators live in `state.rs`.
//!
//! Toolset and instance names are typed ([`ToolsetName`], [`InstanceName`]): a name the
//! server sent outside the RFC-014 grammar never gets in (the entry carrying it is skipped,
//! see `controller/names.rs`), so every name here can be shown, keyed and sent back as it is.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mcpl_protocol::mcp::Tool;
pub use mcpl_protocol::rfc014::{EndedRecord, Presence};
use serde_json::Value;

use crate::names::{InstanceName, Rev, ServerName, ToolsetName};

/// A tool as the latest applied `tools/list` stated it, after the operator's tool policy (H09).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// The listed definition, exactly as read.
    pub tool: Tool,
    /// Presence from the latest list (H31); a tool with a toolset is dynamic (H10).
    pub presence: Presence,
    /// The toolset the tool belongs to, declared or not.
    pub toolset: Option<ToolsetName>,
    /// Coarse visibility from the list (`mcpl/visible`, default true).
    pub listed_visible: bool,
}

/// A toolset the server declares in its manifest (§5.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// Its title, for the catalog (server-written text).
    pub title: Option<String>,
    /// Its summary, for the catalog (server-written text).
    pub summary: Option<String>,
    /// `default: "open"`; never true with `instances` (Appendix B.9).
    pub default_open: bool,
    /// It may be opened several times as named instances.
    pub instances: bool,
    /// The JSON Schema of its open options.
    pub options: Option<Value>,
}

/// The parts of a definition a hint may replace (§6: description, inputSchema, annotations).
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The description, raw: a server may send a non-string (H69).
    pub description: Option<Value>,
    /// The input schema.
    pub input_schema: Value,
    /// The annotations.
    pub annotations: Option<Value>,
}

impl Definition {
    /// The replaceable parts of a listed tool.
    pub fn of(tool: &Tool) -> Definition {
        Definition {
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            annotations: tool.annotations.clone(),
        }
    }
}

/// A dynamic tool's live state in one place (an instance, an open toolset, or outside both).
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    /// Usable now.
    pub visible: bool,
    /// A definition that differs from the listed one, if a hint or statement set one; shared,
    /// so a copy of the snapshot does not copy it.
    pub definition: Option<Arc<Definition>>,
    /// The rev that last set this value (RFC §6.1's stamping technique, H11).
    pub(crate) stamp: u64,
}

/// An open toolset (key instance `None`) or an open instance of an instanced toolset.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Instance {
    /// The title the server gave it (server-written text).
    pub title: Option<String>,
    /// The options in force, as the server reported them.
    pub options: Option<Value>,
    /// Per-tool state in this instance; a tool not here is invisible (§5.2).
    pub tools: BTreeMap<String, Live>,
}

/// Key of an open toolset or instance: the toolset, and the instance for an instanced one.
pub type OpenKey = (ToolsetName, Option<InstanceName>);

/// What one controller knows about its server.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub(crate) server: ServerName,
    pub(crate) principal: String,
    pub(crate) hinted: bool,
    pub(crate) ready: bool,
    pub(crate) version: u64,
    pub(crate) applied: u64,
    pub(crate) listed: bool,
    pub(crate) tools: Vec<ListedTool>,
    pub(crate) index: BTreeMap<String, usize>,
    pub(crate) declared: BTreeMap<ToolsetName, Declared>,
    pub(crate) open: BTreeMap<OpenKey, Instance>,
    pub(crate) loose: BTreeMap<String, Live>,
    pub(crate) groups_open: BTreeSet<ToolsetName>,
    pub(crate) ended: Vec<EndedRecord>,
    pub(crate) opened_here: BTreeSet<OpenKey>,
    pub(crate) statements: u64,
    /// A plain server's grouping, fixed at its first list (host-side toolsets).
    pub(crate) rules: Option<crate::grouping::Rules>,
    /// A closed host-side toolset's tool called through act opens it first.
    pub(crate) auto_open: bool,
}

impl Snapshot {
    /// An empty picture of `server`, before anything was read.
    pub(crate) fn empty(server: ServerName, principal: String) -> Snapshot {
        Snapshot {
            server,
            principal,
            hinted: false,
            ready: false,
            version: 0,
            applied: 0,
            listed: false,
            tools: Vec::new(),
            index: BTreeMap::new(),
            declared: BTreeMap::new(),
            open: BTreeMap::new(),
            loose: BTreeMap::new(),
            groups_open: BTreeSet::new(),
            ended: Vec::new(),
            opened_here: BTreeSet::new(),
            statements: 0,
            rules: None,
            auto_open: false,
        }
    }

    /// Starts the picture on a new connection (H11): `applied` is 0 and every value's stamp
    /// is 0, since the old connection's revs rank nothing on the new one; the connect reads'
    /// values overwrite what the old connection set.
    pub(crate) fn new_connection(&mut self) {
        self.applied = 0;
        for live in self.loose.values_mut() {
            live.stamp = 0;
        }
        for inst in self.open.values_mut() {
            for live in inst.tools.values_mut() {
                live.stamp = 0;
            }
        }
    }

    /// The host's id for the server (its configuration name).
    pub fn server(&self) -> &ServerName {
        &self.server
    }
    /// The principal this connection acts for; ended records are keyed by it (H48).
    pub fn principal(&self) -> &str {
        &self.principal
    }
    /// True when both sides switched toolHints on (H12).
    pub fn hinted(&self) -> bool {
        self.hinted
    }
    /// True once a `tools/list` has been applied.
    pub fn listed(&self) -> bool {
        self.listed
    }
    /// True once the server's picture is read: for an MCPL server with toolHints, once the
    /// first `toolsets/list` was applied (§5.3: before dynamic tools are shown); for a plain
    /// server (no toolHints), once its first `tools/list` was.
    pub fn ready(&self) -> bool {
        self.ready || (self.listed && !self.hinted)
    }
    /// Counts every state change, so a reader can tell two snapshots apart cheaply.
    pub fn version(&self) -> u64 {
        self.version
    }
    /// The last applied rev (§6.1).
    pub fn applied(&self) -> Rev {
        Rev(self.applied)
    }
    /// Every listed tool, in list order.
    pub fn tools(&self) -> &[ListedTool] {
        &self.tools
    }
    /// One listed tool by name.
    pub fn tool(&self, name: &str) -> Option<&ListedTool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }
    /// True for a plain server whose tools the host groups into toolsets of its own.
    pub fn host_grouped(&self) -> bool {
        !self.hinted && self.rules.is_some()
    }
    /// True when act on a closed host-side toolset's tool opens the toolset first.
    pub fn auto_open(&self) -> bool {
        self.auto_open && self.host_grouped()
    }
    /// The toolsets the manifest declares.
    pub fn declared(&self) -> &BTreeMap<ToolsetName, Declared> {
        &self.declared
    }
    /// Every toolset name: declared ones and those only named by tools (undeclared, §5.4).
    pub fn toolset_names(&self) -> BTreeSet<&ToolsetName> {
        let mut names: BTreeSet<&ToolsetName> = self.declared.keys().collect();
        names.extend(self.tools.iter().filter_map(|t| t.toolset.as_ref()));
        names
    }
    /// True when the toolset is not declared but named by a listed tool.
    pub fn is_undeclared(&self, toolset: &str) -> bool {
        !self.declared.contains_key(toolset)
            && self
                .tools
                .iter()
                .any(|t| t.toolset.as_ref().is_some_and(|n| n == toolset))
    }
    /// Open toolsets and instances.
    pub fn open(&self) -> &BTreeMap<OpenKey, Instance> {
        &self.open
    }
    /// The open instances of one toolset (`None` for an open toolset without instances), as
    /// a list: [`open_instances`](Self::open_instances) collected.
    pub fn instances<'a>(&'a self, toolset: &'a ToolsetName) -> Vec<Option<&'a InstanceName>> {
        self.open_instances(toolset).collect()
    }
    /// The open instances of `toolset` (`None` for a toolset without instances), read from
    /// its own part of the open map rather than by walking every open toolset.
    pub fn open_instances<'a>(
        &'a self,
        toolset: &'a ToolsetName,
    ) -> impl Iterator<Item = Option<&'a InstanceName>> + 'a {
        self.open
            .range((toolset.clone(), None)..)
            .take_while(move |((t, _), _)| t == toolset)
            .map(|((_, i), _)| i.as_ref())
    }
    /// True when the toolset (or the host's undeclared group) is open, in any instance.
    pub fn is_open(&self, toolset: &str) -> bool {
        if self.declared.contains_key(toolset) {
            self.open.keys().any(|(t, _)| t == toolset)
        } else {
            self.groups_open.contains(toolset)
        }
    }
    /// Undeclared groups the host has open (§5.4).
    pub fn groups_open(&self) -> &BTreeSet<ToolsetName> {
        &self.groups_open
    }
    /// How many full statements were applied; a reader sees a new one when this grows.
    pub fn statements(&self) -> u64 {
        self.statements
    }
    /// The ended records the last `toolsets/list` reported, less any whose toolset or
    /// instance name breaks the grammar (skipped whole).
    pub fn ended(&self) -> &[EndedRecord] {
        &self.ended
    }
    /// Toolsets and instances this host opened, kept across reconnects (§5.2 policy closes).
    pub fn opened_here(&self) -> &BTreeSet<OpenKey> {
        &self.opened_here
    }
    /// True when the toolset is declared with instances.
    pub fn instanced(&self, toolset: &str) -> bool {
        self.declared.get(toolset).is_some_and(|d| d.instances)
    }

    /// Whether a dynamic tool is usable now in `instance` (ignored for tools without one).
    ///
    /// A tool of a declared toolset is visible only where its instance or toolset is open and
    /// the server stated it visible; an undeclared group's tool also needs the host to have the
    /// group open (§5.4).
    pub fn visible(&self, tool: &str, instance: Option<&InstanceName>) -> bool {
        let Some(listed) = self.tool(tool) else {
            return false;
        };
        match &listed.toolset {
            Some(ts) if self.declared.contains_key(ts) => {
                let key = (ts.clone(), self.instance_key(ts, instance));
                self.open
                    .get(&key)
                    .and_then(|i| i.tools.get(tool))
                    .is_some_and(|l| l.visible)
            }
            Some(ts) => self.groups_open.contains(ts) && self.loose_visible(tool, listed),
            None => self.loose_visible(tool, listed),
        }
    }

    fn loose_visible(&self, tool: &str, listed: &ListedTool) -> bool {
        self.loose
            .get(tool)
            .map_or(listed.listed_visible, |l| l.visible)
    }

    /// The instance key a tool of `toolset` is stored under: the instance only when instanced.
    pub(crate) fn instance_key(
        &self,
        toolset: &str,
        instance: Option<&InstanceName>,
    ) -> Option<InstanceName> {
        if self.instanced(toolset) {
            instance.cloned()
        } else {
            None
        }
    }

    /// The definition act checks a call against: the instance's own if it has one (§5.5),
    /// else a hint-set one, else the listed one. Borrowed when the state has its own (every
    /// call of an instance's tool reads it), built from the listed tool otherwise.
    pub fn definition(
        &self,
        tool: &str,
        instance: Option<&InstanceName>,
    ) -> Option<Cow<'_, Definition>> {
        let (listed, over) = self.definition_parts(tool, instance)?;
        Some(over.map_or_else(|| Cow::Owned(Definition::of(&listed.tool)), Cow::Borrowed))
    }

    /// The input schema of [`definition`](Self::definition), borrowed: the argument check
    /// act makes on every call copies nothing.
    pub fn input_schema(&self, tool: &str, instance: Option<&InstanceName>) -> Option<&Value> {
        let (listed, over) = self.definition_parts(tool, instance)?;
        Some(over.map_or(&listed.tool.input_schema, |d| &d.input_schema))
    }

    /// The listed tool, and the definition that replaces its own in this place, if any.
    fn definition_parts(
        &self,
        tool: &str,
        instance: Option<&InstanceName>,
    ) -> Option<(&ListedTool, Option<&Definition>)> {
        let listed = self.tool(tool)?;
        let over = match &listed.toolset {
            Some(ts) if self.declared.contains_key(ts) => {
                let key = (ts.clone(), self.instance_key(ts, instance));
                self.open
                    .get(&key)
                    .and_then(|i| i.tools.get(tool))
                    .and_then(|l| l.definition.as_deref())
            }
            _ => self.loose.get(tool).and_then(|l| l.definition.as_deref()),
        };
        Some((listed, over))
    }
}
