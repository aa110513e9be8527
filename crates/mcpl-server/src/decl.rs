//! Declarations: the tools and toolsets a server offers, checked once and compiled into a
//! [`Catalog`] (§4.1, §5.1).

use crate::error::Error;
use crate::schema::Schema;
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{
    ManifestToolsetMembers, Presence, Surface, ToolHintsMeta, ToolsetDecl, ToolsetDefault,
    ToolsetName,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// §11: the compatibility tool that opens (or adopts) and makes current.
pub const TOOLSET_OPEN: &str = "toolset_open";
/// §11: the compatibility tool that closes.
pub const TOOLSET_CLOSE: &str = "toolset_close";
/// §11: the compatibility tool that only chooses among open instances.
pub const TOOLSET_CHOOSE: &str = "toolset_choose";

/// A tool as the author declares it: its MCP definition plus RFC-014 presence and initial
/// visibility.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) presence: Presence,
    pub(crate) visible: bool,
    pub(crate) group: Option<String>,
}

impl ToolDef {
    /// A static, visible tool with an object input schema. Make the description's first
    /// sentence self-contained: hosts quote it in reminders (§8.3).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        let mut tool = Tool::new(name);
        tool.description = Some(Value::String(description.into()));
        ToolDef {
            tool,
            presence: Presence::Static,
            visible: true,
            group: None,
        }
    }

    /// Sets the JSON Schema (draft 2020-12) of the arguments.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets MCP annotations (read-only, destructive, ...).
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Makes the tool dynamic: presented outside the host's stable header (§3).
    pub fn dynamic(mut self) -> Self {
        self.presence = Presence::Dynamic;
        self
    }

    /// Makes the tool start invisible (for a toolset tool: in each newly opened instance).
    pub fn hidden(mut self) -> Self {
        self.visible = false;
        self
    }

    /// Puts the tool in an undeclared group that the host opens and closes itself (§5.4).
    /// Implies dynamic.
    pub fn group(mut self, name: impl Into<String>) -> Self {
        self.group = Some(name.into());
        self.presence = Presence::Dynamic;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }
}

/// A declared toolset and its tools (§5.1).
#[derive(Debug, Clone)]
pub struct ToolsetDef {
    pub(crate) name: String,
    pub(crate) decl: ToolsetDecl,
    pub(crate) tools: Vec<ToolDef>,
}

impl ToolsetDef {
    /// A closed toolset named `name` (the name grammar applies) titled `title`.
    pub fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        ToolsetDef {
            name: name.into(),
            decl: ToolsetDecl::new(title),
            tools: Vec::new(),
        }
    }

    /// Sets the summary shown in the host's catalog.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.decl.summary = Some(summary.into());
        self
    }

    /// Opens the toolset at the start of each session of a principal (`default: "open"`).
    pub fn default_open(mut self) -> Self {
        self.decl.default = Some(ToolsetDefault::Open);
        self
    }

    /// Lets the toolset be opened several times, as named instances.
    pub fn instances(mut self) -> Self {
        self.decl.instances = Some(true);
        self
    }

    /// Sets the JSON Schema (draft 2020-12) of `toolsets/open`'s `options`. Keep its keys
    /// within `[A-Za-z0-9._:*-]` (no `$ref`, Appendix B.16).
    pub fn options_schema(mut self, schema: Value) -> Self {
        self.decl.options = Some(schema);
        self
    }

    /// Adds a tool; it becomes dynamic and belongs to this toolset.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }
}

/// Where a tool lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Home {
    /// No toolset: a static tool, or a dynamic tool outside any toolset.
    Free,
    /// An undeclared group the host gates (§5.4).
    Group(String),
    /// A declared toolset.
    Toolset(ToolsetName),
}

/// A compiled tool.
#[derive(Debug, Clone)]
pub(crate) struct ToolEntry {
    pub(crate) def: ToolDef,
    pub(crate) home: Home,
    pub(crate) schema: Schema,
}

/// A compiled toolset.
#[derive(Debug, Clone)]
pub(crate) struct ToolsetEntry {
    pub(crate) name: ToolsetName,
    pub(crate) decl: ToolsetDecl,
    pub(crate) tools: Vec<String>,
    pub(crate) options: Option<Schema>,
    /// §6.3: a toolset whose options schema refuses `{}` cannot sensibly be open without
    /// options, so it is not implicitly open for hosts without `toolHints`.
    pub(crate) needs_options: bool,
}

impl ToolsetEntry {
    pub(crate) fn instanced(&self) -> bool {
        self.decl.is_instanced()
    }
}

/// Builder of a server's declarations; [`Declarations::build`] checks and compiles them.
#[derive(Debug, Clone)]
pub struct Declarations {
    name: String,
    version: String,
    instructions: Option<String>,
    surface: Option<Surface>,
    tools: Vec<ToolDef>,
    toolsets: Vec<ToolsetDef>,
    event_feature_set: String,
}

impl Declarations {
    /// Declarations of the server `name` at `version` (its MCP `serverInfo`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Declarations {
            name: name.into(),
            version: version.into(),
            instructions: None,
            surface: None,
            tools: Vec::new(),
            toolsets: Vec::new(),
            event_feature_set: "events".to_owned(),
        }
    }

    /// Sets how the server as a whole is presented (`surface`, §5.1).
    pub fn surface(mut self, title: impl Into<String>, summary: Option<&str>) -> Self {
        self.surface = Some(Surface {
            title: title.into(),
            summary: summary.map(str::to_owned),
            extra: Map::new(),
        });
        self
    }

    /// Sets the MCP `instructions` for the model.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Adds a tool outside any declared toolset: static, dynamic, or in an undeclared group.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a declared toolset with its tools.
    pub fn toolset(mut self, toolset: ToolsetDef) -> Self {
        self.toolsets.push(toolset);
        self
    }

    /// Names the feature set (declared with `uses: ["pushEvents"]`) that `push/event`s carry;
    /// `events` by default.
    pub fn event_feature_set(mut self, name: impl Into<String>) -> Self {
        self.event_feature_set = name.into();
        self
    }

    /// Checks names, schemas and uniqueness, and compiles the schemas.
    pub fn build(self) -> Result<Catalog, Error> {
        let mut tools: BTreeMap<String, ToolEntry> = BTreeMap::new();
        let mut order = Vec::new();
        let mut toolsets = BTreeMap::new();
        let mut add = |def: ToolDef, home: Home| -> Result<(), Error> {
            let name = def.tool.name.clone();
            if name.is_empty() {
                return Err(Error::Declaration("a tool has an empty name".into()));
            }
            if [TOOLSET_OPEN, TOOLSET_CLOSE, TOOLSET_CHOOSE].contains(&name.as_str()) {
                return Err(Error::Declaration(format!(
                    "tool name `{name}` is reserved for the compatibility tools (§11)"
                )));
            }
            if tools.contains_key(&name) {
                return Err(Error::Declaration(format!(
                    "tool `{name}` is declared twice"
                )));
            }
            let schema = Schema::compile(&def.tool.input_schema).map_err(|e| {
                Error::Declaration(format!("tool `{name}` has an invalid input schema: {e}"))
            })?;
            order.push(name.clone());
            tools.insert(name, ToolEntry { def, home, schema });
            Ok(())
        };
        for def in self.tools {
            let home = match &def.group {
                Some(g) => {
                    ToolsetName::parse(g).map_err(|e| Error::Declaration(e.to_string()))?;
                    Home::Group(g.clone())
                }
                None => Home::Free,
            };
            add(def, home)?;
        }
        for ts in self.toolsets {
            let name =
                ToolsetName::parse(&ts.name).map_err(|e| Error::Declaration(e.to_string()))?;
            if toolsets.contains_key(&name) {
                return Err(Error::Declaration(format!(
                    "toolset `{name}` is declared twice"
                )));
            }
            if ts.decl.is_instanced() && ts.decl.default == Some(ToolsetDefault::Open) {
                return Err(Error::Declaration(format!(
                    "toolset `{name}` has instances and so cannot be default-open (Appendix B.9)"
                )));
            }
            let options = match &ts.decl.options {
                Some(s) => Some(Schema::compile(s).map_err(|e| {
                    Error::Declaration(format!(
                        "toolset `{name}` has an invalid options schema: {e}"
                    ))
                })?),
                None => None,
            };
            let needs_options = options.as_ref().is_some_and(|s| !s.is_valid(&json!({})));
            let mut names = Vec::new();
            for mut def in ts.tools {
                def.presence = Presence::Dynamic;
                def.group = None;
                names.push(def.tool.name.clone());
                add(def, Home::Toolset(name.clone()))?;
            }
            toolsets.insert(
                name.clone(),
                ToolsetEntry {
                    name,
                    decl: ts.decl,
                    tools: names,
                    options,
                    needs_options,
                },
            );
        }
        for group in tools.values().filter_map(|t| match &t.home {
            Home::Group(g) => Some(g),
            _ => None,
        }) {
            if toolsets.keys().any(|k: &ToolsetName| k.as_str() == group) {
                return Err(Error::Declaration(format!(
                    "group `{group}` is also a declared toolset; add the tool to the toolset instead"
                )));
            }
        }
        let catalog = Catalog {
            name: self.name,
            version: self.version,
            instructions: self.instructions,
            surface: self.surface,
            order,
            tools,
            toolsets,
            event_feature_set: self.event_feature_set,
            manifests: Default::default(),
        };
        // §17.2: the manifest must have a digest; keys outside the identifier charset (`$ref`
        // in an options schema, Appendix B.16) would leave it without a revision.
        mcpl_protocol::mcpl::digest::manifest_revision(&catalog.manifest_body(true))
            .map_err(|e| Error::Declaration(format!("the manifest has no digest: {e}")))?;
        Ok(catalog)
    }
}

/// Checked and compiled declarations: what the server offers.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) surface: Option<Surface>,
    pub(crate) order: Vec<String>,
    pub(crate) tools: BTreeMap<String, ToolEntry>,
    pub(crate) toolsets: BTreeMap<ToolsetName, ToolsetEntry>,
    pub(crate) event_feature_set: String,
    /// The manifests shown to hosts with and without `toolHints`, built on first use and
    /// shared by every session (a session keeps the one it announced).
    pub(crate) manifests: [OnceLock<Arc<Value>>; 2],
}

impl Catalog {
    /// The declared toolsets' names, in name order.
    pub fn toolset_names(&self) -> impl Iterator<Item = &ToolsetName> {
        self.toolsets.keys()
    }

    /// The declared tools' names, in declaration order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    /// The declaration of `toolset`, if declared.
    pub fn toolset(&self, toolset: &str) -> Option<&ToolsetDecl> {
        self.toolsets.get(toolset).map(|t| &t.decl)
    }

    pub(crate) fn entry(&self, toolset: &str) -> Option<&ToolsetEntry> {
        self.toolsets.get(toolset)
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    /// Whether any declared toolset needs §11's compatibility tools for hosts without
    /// `toolHints` (an instanced toolset, or one that needs options).
    pub(crate) fn needs_compat_tools(&self) -> bool {
        self.toolsets
            .values()
            .any(|t| t.instanced() || t.needs_options)
    }

    /// The RFC-014 manifest members (§5.1).
    pub fn manifest_members(&self) -> ManifestToolsetMembers {
        ManifestToolsetMembers {
            tool_hints: Some(true),
            toolsets: Some(
                self.toolsets
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.decl.clone()))
                    .collect(),
            ),
            surface: self.surface.clone(),
            extra: Map::new(),
        }
    }

    /// The manifest (`experimental.mcpl`) this server shows a host, with its §17.2 revision.
    /// Hosts without `toolHints` get no RFC-014 members (Appendix B.16).
    pub fn manifest(&self, tool_hints: bool) -> Value {
        Value::clone(&self.shared_manifest(tool_hints))
    }

    /// [`Catalog::manifest`], built once per catalog and shared.
    pub(crate) fn shared_manifest(&self, tool_hints: bool) -> Arc<Value> {
        self.manifests[usize::from(tool_hints)]
            .get_or_init(|| Arc::new(self.build_manifest(tool_hints)))
            .clone()
    }

    fn build_manifest(&self, tool_hints: bool) -> Value {
        let mut manifest = self.manifest_body(tool_hints);
        // §17.2: the revision is the digest, never hand-kept (`build` checked that it exists).
        if let Ok(rev) = mcpl_protocol::mcpl::digest::manifest_revision(&manifest) {
            if let Value::Object(m) = &mut manifest {
                m.insert("revision".into(), rev.into());
            }
        }
        manifest
    }

    /// The manifest without its revision.
    fn manifest_body(&self, tool_hints: bool) -> Value {
        let mut m = Map::new();
        m.insert("version".into(), "0.5".into());
        m.insert("pushEvents".into(), true.into());
        m.insert(
            "featureSets".into(),
            json!({ self.event_feature_set.clone(): {
                "description": "Events from the server's world, such as an opponent's move",
                "uses": ["pushEvents"]
            }}),
        );
        if tool_hints {
            if let Ok(Value::Object(members)) = serde_json::to_value(self.manifest_members()) {
                m.extend(members);
            }
        }
        Value::Object(m)
    }

    /// The definition of `name` as listed, with RFC-014 `_meta` for hosts with `toolHints`.
    pub(crate) fn listed(&self, entry: &ToolEntry, presence: Presence, visible: bool) -> Tool {
        let mut tool = entry.def.tool.clone();
        let mut meta = tool.meta.take().unwrap_or_default();
        let toolset = match &entry.home {
            Home::Free => None,
            Home::Group(g) => Some(g.clone()),
            Home::Toolset(t) => Some(t.to_string()),
        };
        ToolHintsMeta {
            presence: (presence == Presence::Dynamic && toolset.is_none()).then_some(presence),
            visible: Some(visible),
            toolset,
        }
        .write(&mut meta);
        tool.meta = Some(meta);
        tool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_1_names_and_default_rules_are_checked() {
        let bad = Declarations::new("s", "1")
            .toolset(ToolsetDef::new("bad name", "Bad"))
            .build();
        assert!(bad.unwrap_err().to_string().contains("`bad name`"));
        let bad = Declarations::new("s", "1")
            .toolset(ToolsetDef::new("go", "Go").instances().default_open())
            .build();
        assert!(bad.unwrap_err().to_string().contains("Appendix B.9"));
        let bad = Declarations::new("s", "1")
            .tool(ToolDef::new("a", "A."))
            .tool(ToolDef::new("a", "A again."))
            .build();
        assert!(bad.unwrap_err().to_string().contains("declared twice"));
    }

    #[test]
    fn appendix_b16_option_keys_outside_the_charset_are_refused() {
        let bad = Declarations::new("s", "1")
            .toolset(
                ToolsetDef::new("g", "G")
                    .options_schema(json!({"$defs": {"x": {}}, "type": "object"})),
            )
            .build();
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("no digest"), "{err}");
    }

    #[test]
    fn a_tool_def_keeps_its_declared_name_through_the_builder() {
        let play = ToolDef::new("play", "Play a move.")
            .title("Play")
            .dynamic()
            .hidden();
        assert_eq!(play.name(), "play");
        let fortune = ToolDef::new("fortune", "Tell a fortune.").group("extras");
        assert_eq!(fortune.name(), "fortune");
    }

    #[test]
    fn s6_3_options_that_refuse_empty_need_an_explicit_open() {
        let c = Declarations::new("s", "1")
            .toolset(ToolsetDef::new("a", "A").options_schema(json!({"type": "object"})))
            .toolset(
                ToolsetDef::new("b", "B")
                    .options_schema(json!({"type": "object", "required": ["size"]})),
            )
            .build()
            .unwrap();
        assert!(!c.entry("a").unwrap().needs_options);
        assert!(c.entry("b").unwrap().needs_options);
        assert!(c.needs_compat_tools());
    }

    #[test]
    fn s17_2_manifest_carries_the_digest_and_is_tailored() {
        let c = Declarations::new("s", "1")
            .surface("Arcade", Some("Games"))
            .toolset(ToolsetDef::new("go", "Go").instances())
            .build()
            .unwrap();
        let full = c.manifest(true);
        assert_eq!(full["toolHints"], json!(true));
        assert_eq!(full["toolsets"]["go"]["default"], json!("closed"));
        assert!(full["revision"].as_str().unwrap().starts_with("sha256:"));
        let plain = c.manifest(false);
        assert!(plain.get("toolHints").is_none());
        assert!(plain.get("toolsets").is_none());
        assert_ne!(full["revision"], plain["revision"]);
    }
}
