//! `initialize`, `tools/list` (the catalog a host sees), grants and the manifest.

use super::Session;
use super::statement::{presence_of, visible_in};
use crate::decl::{Catalog, Home};
use crate::error::Refusal;
use crate::store::{OpenKey, PrincipalState};
use mcpl_protocol::jsonrpc::{Message, Notification, RequestId};
use mcpl_protocol::mcp::{
    Implementation, InitializeParams, InitializeResult, ServerCapabilities, Tool, ToolsCapability,
    ToolsListResult,
};
use mcpl_protocol::mcpl::{
    FeatureSet, FeatureSetsUpdateParams, FeatureSetsUpdateResult, HostCapabilities, Manifest,
    ManifestChangedParams,
};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{Rev, ToolHintsMeta};
use serde_json::{Map, Value, json};
use std::time::Instant;

pub(super) use crate::decl::{TOOLSET_CHOOSE, TOOLSET_CLOSE, TOOLSET_OPEN};

fn compat_tools(catalog: &Catalog) -> Vec<Tool> {
    let names: Vec<Value> = catalog
        .toolset_names()
        .map(|n| Value::String(n.to_string()))
        .collect();
    let name_rule = mcpl_protocol::rfc014::NAME_RULE;
    let toolset = json!({"type": "string", "enum": names, "description": "The toolset."});
    let instance = json!({"type": "string", "pattern": name_rule,
        "description": "The instance name."});
    let mk = |name: &str, description: &str, schema: Value| {
        let mut t = Tool::new(name);
        t.description = Some(Value::String(description.to_owned()));
        t.input_schema = schema;
        t
    };
    vec![
        mk(
            TOOLSET_OPEN,
            "Open a toolset, or an instance of one, and make it current. Reopening an open \
             instance makes it current and changes nothing else.",
            json!({"type": "object", "required": ["toolset"], "properties": {
                "toolset": toolset, "instance": instance,
                "options": {"type": "object", "description": "Options for the toolset."}}}),
        ),
        mk(
            TOOLSET_CHOOSE,
            "Choose which open instance of a toolset later calls go to. Refuses a name that \
             is not open.",
            json!({"type": "object", "required": ["toolset", "instance"], "properties": {
                "toolset": toolset, "instance": instance}}),
        ),
        mk(
            TOOLSET_CLOSE,
            "Close a toolset, or an instance of one (the current one if none is named).",
            json!({"type": "object", "required": ["toolset"], "properties": {
                "toolset": toolset, "instance": instance}}),
        ),
    ]
}

/// The tools a host sees. With `toolHints`: every tool with presence, coarse visibility and
/// toolset (§4.1). Without: the plain list, no hint `_meta`, plus §11's tools (§6.3).
pub(crate) fn listed_tools(catalog: &Catalog, state: &PrincipalState, hints: bool) -> Vec<Tool> {
    let mut tools = Vec::new();
    for name in catalog.tool_names() {
        let Some(entry) = catalog.tool(name) else {
            continue;
        };
        if !hints {
            let mut tool = entry.def.tool.clone();
            if let Some(meta) = tool.meta.as_mut() {
                ToolHintsMeta::strip(meta);
                if meta.is_empty() {
                    tool.meta = None;
                }
            }
            tools.push(tool);
            continue;
        }
        let visible = match &entry.home {
            // §4.1: a toolset tool is visible when visible in at least one open instance.
            Home::Toolset(t) => state
                .open
                .keys()
                .filter(|k| k.toolset == *t)
                .any(|k| visible_in(catalog, state, Some(k), name)),
            _ => visible_in(catalog, state, None::<&OpenKey>, name),
        };
        let presence = presence_of(catalog, state, name);
        tools.push(catalog.listed(entry, presence, visible));
    }
    if !hints && catalog.needs_compat_tools() {
        tools.extend(compat_tools(catalog));
    }
    tools
}

impl Session {
    pub(super) fn initialize(&mut self, id: RequestId, params: Option<Value>) {
        let params: InitializeParams = match params.map(serde_json::from_value) {
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                let r = Refusal::invalid_params(format!("invalid initialize params: {e}"));
                return self.respond(id, Err(r));
            }
            None => {
                return self.respond(id, Err(Refusal::invalid_params("initialize needs params")));
            }
        };
        let host: Option<HostCapabilities> = params.capabilities.mcpl().and_then(Result::ok);
        self.host.tool_hints = host.as_ref().is_some_and(HostCapabilities::has_tool_hints);
        self.host.push_advertised = host.as_ref().is_some_and(|h| h.push_events == Some(true));
        let catalog = self.server.catalog();
        let manifest = catalog.shared_manifest(self.host.tool_hints);
        let mut caps = ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                extra: Map::new(),
            }),
            ..ServerCapabilities::default()
        };
        caps.experimental = Some(Map::from_iter([(
            "mcpl".to_owned(),
            Value::clone(&manifest),
        )]));
        self.announced = Some(manifest);
        let mut result = InitializeResult::answer(
            &params,
            caps,
            Implementation::new(catalog.name.clone(), catalog.version.clone()),
        );
        result.instructions = catalog.instructions.clone();
        let result = serde_json::to_value(&result).expect("initialize result serializes");
        self.respond(id, Ok(result));
    }

    pub(super) fn tools_list(&mut self, _now: Instant, id: RequestId) {
        let catalog = self.server.catalog();
        let hints = self.host.tool_hints;
        let tools = listed_tools(&catalog, &self.state, hints);
        let mut result = ToolsListResult::new(tools);
        if hints {
            // §6.1: no rev of its own; it names the last rev taken (0 before any).
            Rev::set_on_list(&mut result, Some(self.rev));
        }
        let result = serde_json::to_value(&result).expect("tools/list result serializes");
        self.respond(id, Ok(result));
    }

    pub(super) fn feature_sets_update(&mut self, id: RequestId, params: Option<Value>) {
        let params: FeatureSetsUpdateParams =
            match serde_json::from_value(params.unwrap_or_else(|| json!({}))) {
                Ok(p) => p,
                Err(e) => {
                    let r = Refusal::invalid_params(format!("invalid featureSets/update: {e}"));
                    return self.respond(id, Err(r));
                }
            };
        if let Err(e) = params.check() {
            // §5.4: a contradictory policy is malformed; fail closed.
            self.host.push_granted = false;
            return self.respond(id, Err(Refusal::invalid_params(e.to_string())));
        }
        let catalog = self.server.catalog();
        let set = FeatureSet::new("events", ["pushEvents"]);
        self.host.push_granted = params
            .feature_set_state(&catalog.event_feature_set, &set)
            .is_ok();
        let receipt =
            serde_json::to_value(FeatureSetsUpdateResult::accepted()).expect("receipt serializes");
        self.respond(id, Ok(receipt));
    }

    pub(super) fn manifest(&mut self, id: RequestId) {
        let manifest = self.server.catalog().manifest(self.host.tool_hints);
        self.respond(id, Ok(manifest));
    }

    pub(super) fn announce_catalog(&mut self) {
        let catalog = self.server.catalog();
        let new = catalog.shared_manifest(self.host.tool_hints);
        let old = self.announced.replace(new.clone());
        if let (Some(old), Ok(new)) = (old, Manifest::from_value(Value::clone(&new))) {
            if let Ok(old) = Manifest::from_value(Value::clone(&old)) {
                if let Ok(Some(params)) = ManifestChangedParams::between(&old, &new) {
                    let params = serde_json::to_value(&params).expect("params serialize");
                    self.send(Message::Notification(Notification::new(
                        methods::MANIFEST_CHANGED,
                        Some(params),
                    )));
                }
            }
        }
        self.send(Message::Notification(Notification::new(
            methods::TOOLS_LIST_CHANGED,
            None,
        )));
    }
}
