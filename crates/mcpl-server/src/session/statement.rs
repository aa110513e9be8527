//! Building hint entries from state: the values of touched things (§6), and the full
//! statement of `toolsets/list` (§5.3).

use crate::decl::{Catalog, Home};
use crate::store::{OpenKey, PrincipalState};
use crate::update::Touch;
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{Presence, ToolHintEntry, ToolsetChange, ToolsetState};
use std::sync::Arc;

/// Tool and toolset entries, deduplicated, in first-touched order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Statement {
    pub(crate) tools: Vec<ToolHintEntry>,
    pub(crate) toolsets: Vec<ToolsetChange>,
}

impl Statement {
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.toolsets.is_empty()
    }

    /// Adds or merges a tool entry (a later value for the same tool and instance wins).
    fn tool(&mut self, entry: ToolHintEntry) {
        match self
            .tools
            .iter_mut()
            .find(|e| e.name == entry.name && e.instance == entry.instance)
        {
            Some(e) => {
                e.visible = entry.visible.or(e.visible);
                e.definition = entry.definition.or(e.definition.take());
                e.presence = entry.presence.or(e.presence);
            }
            None => self.tools.push(entry),
        }
    }

    fn toolset(&mut self, change: ToolsetChange) {
        match self
            .toolsets
            .iter_mut()
            .find(|c| c.toolset == change.toolset && c.instance == change.instance)
        {
            Some(c) => *c = change,
            None => self.toolsets.push(change),
        }
    }
}

/// Whether `tool` is visible in `key` (or among free tools), from state or its declaration.
pub(crate) fn visible_in(
    catalog: &Catalog,
    state: &PrincipalState,
    key: Option<&OpenKey>,
    tool: &str,
) -> bool {
    let declared = catalog.tool(tool).is_some_and(|t| t.def.visible);
    match key {
        None => state
            .free
            .get(tool)
            .and_then(|s| s.visible)
            .unwrap_or(declared),
        Some(k) => match state.open.get(k) {
            Some(open) if open.is_listed() => open
                .tools
                .get(tool)
                .and_then(|s| s.visible)
                .unwrap_or(declared),
            _ => false,
        },
    }
}

/// The scope's own definition of `tool`, if it has one (shared, not copied).
pub(crate) fn own_definition(
    state: &PrincipalState,
    key: Option<&OpenKey>,
    tool: &str,
) -> Option<Arc<Tool>> {
    own_definition_in(state, key, tool).cloned()
}

/// [`own_definition`], borrowed.
pub(crate) fn own_definition_ref<'s>(
    state: &'s PrincipalState,
    key: Option<&OpenKey>,
    tool: &str,
) -> Option<&'s Tool> {
    own_definition_in(state, key, tool).map(|d| &**d)
}

/// Where the scope keeps its own definition of `tool`.
fn own_definition_in<'s>(
    state: &'s PrincipalState,
    key: Option<&OpenKey>,
    tool: &str,
) -> Option<&'s Arc<Tool>> {
    match key {
        None => state.free.get(tool)?.definition.as_ref(),
        Some(k) => state.open.get(k)?.tools.get(tool)?.definition.as_ref(),
    }
}

/// The presence in force for `tool` (§4.2): toolset tools are always dynamic.
pub(crate) fn presence_of(catalog: &Catalog, state: &PrincipalState, tool: &str) -> Presence {
    match catalog.tool(tool) {
        None => Presence::Static,
        Some(t) if matches!(t.home, Home::Toolset(_)) => Presence::Dynamic,
        Some(t) => state.presence.get(tool).copied().unwrap_or(t.def.presence),
    }
}

fn entry(name: &str, key: Option<&OpenKey>) -> ToolHintEntry {
    let mut e = ToolHintEntry::new(name);
    e.instance = key.and_then(|k| k.instance.as_ref()).map(|i| i.to_string());
    e
}

/// The current values of everything `touches` names.
pub(crate) fn from_touches(
    catalog: &Catalog,
    state: &PrincipalState,
    touches: &[Touch],
) -> Statement {
    let mut st = Statement::default();
    for touch in touches {
        match touch {
            Touch::Tool {
                key,
                tool,
                definition,
            } => {
                if key.as_ref().is_some_and(|k| !state.is_open(k)) {
                    continue; // it closed meanwhile; the close states its tools
                }
                let mut e = entry(tool, key.as_ref());
                e.visible = Some(visible_in(catalog, state, key.as_ref(), tool));
                if *definition {
                    e.definition = own_definition(state, key.as_ref(), tool)
                        .or_else(|| catalog.tool(tool).map(|t| Arc::new(t.def.tool.clone())));
                }
                st.tool(e);
            }
            Touch::State {
                key,
                tools,
                ended,
                reason,
            } => {
                let mut change = ToolsetChange::new(
                    key.toolset.to_string(),
                    key.instance.as_ref().map(|i| i.to_string()),
                );
                let open = state.open.get(key).filter(|o| o.is_listed());
                match open {
                    Some(o) => {
                        change.state = Some(ToolsetState::Open);
                        change.title = Some(o.title.clone());
                    }
                    None => {
                        change.state = Some(ToolsetState::Closed);
                        change.ended = ended.clone();
                        change.reason = reason.clone();
                    }
                }
                st.toolset(change);
                if *tools {
                    for tool in catalog
                        .entry(key.toolset.as_str())
                        .map(|e| e.tools.as_slice())
                        .unwrap_or_default()
                    {
                        let mut e = entry(tool, Some(key));
                        e.visible = Some(visible_in(catalog, state, Some(key), tool));
                        if open.is_some() {
                            e.definition = own_definition(state, Some(key), tool);
                        }
                        st.tool(e);
                    }
                }
            }
            Touch::Presence { tool } => {
                let mut e = entry(tool, None);
                e.presence = Some(presence_of(catalog, state, tool));
                st.tool(e);
            }
        }
    }
    st
}

/// The full statement (§5.3): every tool visible in each open toolset or instance, and every
/// visible dynamic tool outside declared toolsets, with definitions where they differ from the
/// declared ones. A dynamic tool not stated is invisible.
pub(crate) fn full(catalog: &Catalog, state: &PrincipalState) -> Statement {
    let mut st = Statement::default();
    for (key, open) in &state.open {
        if !open.is_listed() {
            continue;
        }
        let Some(ts) = catalog.entry(key.toolset.as_str()) else {
            continue;
        };
        for tool in &ts.tools {
            if visible_in(catalog, state, Some(key), tool) {
                let mut e = entry(tool, Some(key));
                e.visible = Some(true);
                e.definition = own_definition(state, Some(key), tool);
                st.tools.push(e);
            }
        }
    }
    for name in catalog.tool_names() {
        let Some(t) = catalog.tool(name) else {
            continue;
        };
        if matches!(t.home, Home::Toolset(_)) {
            continue;
        }
        let dynamic = presence_of(catalog, state, name) == Presence::Dynamic;
        if dynamic && visible_in(catalog, state, None, name) {
            let mut e = entry(name, None);
            e.visible = Some(true);
            e.definition = own_definition(state, None, name);
            st.tools.push(e);
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::WallClock;
    use crate::decl::{Declarations, ToolDef};
    use crate::update::{CommitEnv, Update, commit};
    use std::time::{Duration, Instant, SystemTime};

    #[test]
    fn s6_a_stated_definition_is_the_states_own_not_a_copy() {
        let catalog = Declarations::new("s", "1")
            .tool(ToolDef::new("hint", "Get a hint.").dynamic())
            .build()
            .unwrap();
        let now = Instant::now();
        let clock = WallClock::new(now, SystemTime::UNIX_EPOCH);
        let env = CommitEnv {
            catalog: &catalog,
            now,
            clock: &clock,
            ended_ttl: Duration::from_secs(60),
        };
        let mut hint = Tool::new("hint");
        hint.description = Some(serde_json::json!("A hint for the position now."));
        let mut update = Update::new();
        update.tools().define(hint.clone());
        let mut state = PrincipalState::default();
        let touches = commit(&env, &mut state, &update).unwrap();

        let stated = from_touches(&catalog, &state, &touches);
        let held = state.free["hint"].definition.as_ref().expect("defined");
        let told = stated.tools[0].definition.as_ref().expect("stated");
        assert_eq!(**told, hint);
        assert!(
            Arc::ptr_eq(held, told),
            "the entry shares the state's definition"
        );
        // A copy of the state (copy on write) shares it too.
        let copy = state.clone();
        let copied = copy.free["hint"].definition.as_ref().unwrap();
        assert!(Arc::ptr_eq(held, copied));
    }
}
