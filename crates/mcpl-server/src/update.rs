//! Changes to a principal's state, recorded by app code and committed by the SDK (§6).
//!
//! App code never writes hints. It says what is true now ("`play` is visible in `vs-bot`"),
//! the SDK commits that to the principal's state, and each connection turns the touched
//! values into hint changes on its own rev counter, on the carrier §6.2 picks.

use crate::clock::WallClock;
use crate::decl::{Catalog, Home};
use crate::error::Error;
use crate::principal::{ConnectionId, Principal};
use crate::store::{
    OpenKey, OpenState, Opener, Phase, PrincipalState, StoredEnd, ToolState, Versioned,
};
use mcpl_protocol::mcp::{ContentBlock, Tool};
use mcpl_protocol::rfc014::{
    EndedRecord, InstanceName, Presence, SuggestAction, SuggestEntry, ToolHintsMeta,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which scope a tool change is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Tools outside declared toolsets.
    Free,
    /// A declared toolset without instances.
    Toolset(String),
    /// One instance of an instanced toolset.
    Instance(String, String),
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Visible(Scope, String, bool),
    Define(Scope, String, Option<Box<Tool>>),
    Presence(String, Presence),
    Retitle(Scope, String),
    End(Scope, Option<String>),
    Open(Scope, Value, Option<String>),
}

/// A server event for the principal's hosts: sent as `push/event` where `pushEvents` is
/// granted, carrying the hint changes it explains (§6.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What the event shows the agent.
    pub content: Vec<ContentBlock>,
    /// The toolset it is about (set it whenever the event carries hints).
    pub toolset: Option<String>,
    /// The instance it is about.
    pub instance: Option<String>,
    /// MCPL tags (§16).
    pub tags: Vec<String>,
}

impl Event {
    /// An event showing `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Event {
            content: vec![ContentBlock::text(text)],
            ..Event::default()
        }
    }

    /// Says which toolset and instance the event is about.
    pub fn about(mut self, toolset: impl Into<String>, instance: Option<&str>) -> Self {
        self.toolset = Some(toolset.into());
        self.instance = instance.map(str::to_owned);
        self
    }
}

/// Changes to one principal's state, recorded by app code. Values, not differences: stating
/// the same thing twice is harmless.
#[derive(Debug, Clone, Default)]
pub struct Update {
    pub(crate) ops: Vec<Op>,
    pub(crate) event: Option<Event>,
    pub(crate) suggest: Vec<SuggestEntry>,
}

/// Tool changes in one scope; returned by [`Update::tools`], [`Update::toolset`] and
/// [`Update::instance`].
pub struct Scoped<'a> {
    update: &'a mut Update,
    scope: Scope,
}

impl Scoped<'_> {
    /// Sets whether `tool` is usable now in this scope.
    pub fn set_visible(&mut self, tool: impl Into<String>, visible: bool) -> &mut Self {
        self.update
            .ops
            .push(Op::Visible(self.scope.clone(), tool.into(), visible));
        self
    }

    /// Makes `tool` visible.
    pub fn show(&mut self, tool: impl Into<String>) -> &mut Self {
        self.set_visible(tool, true)
    }

    /// Makes `tool` invisible.
    pub fn hide(&mut self, tool: impl Into<String>) -> &mut Self {
        self.set_visible(tool, false)
    }

    /// Gives dynamic tool `definition.name` this scope's own definition (for example the
    /// legal moves of one game, §5.5). Hosts use its description, input schema and
    /// annotations; calls in this scope are checked against its input schema.
    pub fn define(&mut self, definition: Tool) -> &mut Self {
        let name = definition.name.clone();
        self.update.ops.push(Op::Define(
            self.scope.clone(),
            name,
            Some(Box::new(definition)),
        ));
        self
    }

    /// Puts `tool` back on its declared definition.
    pub fn reset_definition(&mut self, tool: impl Into<String>) -> &mut Self {
        self.update
            .ops
            .push(Op::Define(self.scope.clone(), tool.into(), None));
        self
    }

    /// Retitles this toolset or instance (names never change, §5.2).
    pub fn retitle(&mut self, title: impl Into<String>) -> &mut Self {
        self.update
            .ops
            .push(Op::Retitle(self.scope.clone(), title.into()));
        self
    }

    /// Ends this toolset or instance: it closes for every connection of the principal, with
    /// an `ended` record (a game finished, a timeout).
    pub fn end(&mut self, reason: impl Into<String>) -> &mut Self {
        self.update
            .ops
            .push(Op::End(self.scope.clone(), Some(reason.into())));
        self
    }

    /// Opens this toolset or instance on the server's initiative (a no-op when open).
    pub fn open(&mut self, options: Value, title: Option<&str>) -> &mut Self {
        self.update.ops.push(Op::Open(
            self.scope.clone(),
            options,
            title.map(str::to_owned),
        ));
        self
    }
}

impl Update {
    /// An empty update.
    pub fn new() -> Self {
        Self::default()
    }

    /// Changes to tools outside declared toolsets (static tools, toolset-less dynamic tools
    /// and undeclared groups).
    pub fn tools(&mut self) -> Scoped<'_> {
        Scoped {
            update: self,
            scope: Scope::Free,
        }
    }

    /// Changes in the declared toolset `toolset` (without instances).
    pub fn toolset(&mut self, toolset: impl Into<String>) -> Scoped<'_> {
        Scoped {
            update: self,
            scope: Scope::Toolset(toolset.into()),
        }
    }

    /// Changes in one instance of an instanced toolset.
    pub fn instance(
        &mut self,
        toolset: impl Into<String>,
        instance: impl Into<String>,
    ) -> Scoped<'_> {
        Scoped {
            update: self,
            scope: Scope::Instance(toolset.into(), instance.into()),
        }
    }

    /// Moves a tool outside toolsets between static and dynamic (§4.2).
    pub fn move_tool(&mut self, tool: impl Into<String>, presence: Presence) -> &mut Self {
        self.ops.push(Op::Presence(tool.into(), presence));
        self
    }

    /// Attaches the event that explains these changes.
    pub fn event(&mut self, event: Event) -> &mut Self {
        self.event = Some(event);
        self
    }

    /// Suggests that the host open something; suggestions change nothing by themselves (§7).
    pub fn suggest_open(
        &mut self,
        toolset: impl Into<String>,
        instance: Option<&str>,
        options: Option<Value>,
        reason: impl Into<String>,
    ) -> &mut Self {
        self.suggest.push(SuggestEntry {
            action: SuggestAction::Open,
            toolset: toolset.into(),
            instance: instance.map(str::to_owned),
            options,
            reason: Some(reason.into()),
            extra: Map::new(),
        });
        self
    }

    /// Suggests that the host close something.
    pub fn suggest_close(
        &mut self,
        toolset: impl Into<String>,
        instance: Option<&str>,
        reason: impl Into<String>,
    ) -> &mut Self {
        self.suggest.push(SuggestEntry {
            action: SuggestAction::Close,
            toolset: toolset.into(),
            instance: instance.map(str::to_owned),
            options: None,
            reason: Some(reason.into()),
            extra: Map::new(),
        });
        self
    }

    /// Whether the update records nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.event.is_none() && self.suggest.is_empty()
    }
}

/// A value that changed: each connection states its current value (§2.5: values, not
/// differences, so publications may arrive in any order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Touch {
    /// A tool's visibility (and, with `definition`, its definition) in a scope.
    Tool {
        key: Option<OpenKey>,
        tool: String,
        definition: bool,
    },
    /// An open, close or retitle. `tools`: also state every tool of the scope.
    State {
        key: OpenKey,
        tools: bool,
        ended: Option<String>,
        reason: Option<String>,
    },
    /// A presence move.
    Presence { tool: String },
}

/// A committed change of one principal's state, for its other connections. The driver hands
/// it to every session of [`PrincipalChange::principal`] through
/// [`Session::handle_principal_change`](crate::Session::handle_principal_change).
#[derive(Debug, Clone)]
pub struct PrincipalChange {
    pub(crate) principal: Principal,
    pub(crate) origin: Option<ConnectionId>,
    pub(crate) touches: Vec<Touch>,
    pub(crate) event: Option<Event>,
    pub(crate) suggest: Vec<SuggestEntry>,
    /// The principal's state as stored by the commit, when the sender has it.
    pub(crate) state: Option<Arc<Versioned>>,
    /// A restatement after an outage ([`PrincipalChange::restate`]): its state replaces the
    /// session's copy whatever the versions say, changes kept only there included.
    pub(crate) restated: bool,
}

impl PrincipalChange {
    /// Attaches the principal's state as stored with (or after) this change: sessions
    /// holding an older copy take it before stating the change. A relay attaches what it
    /// read after receiving a change from another replica.
    pub fn with_state(mut self, stored: Versioned) -> Self {
        self.state = Some(Arc::new(stored));
        self
    }

    /// The state attached with [`with_state`](Self::with_state).
    pub fn state(&self) -> Option<&Versioned> {
        self.state.as_deref()
    }

    /// Whose state changed.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The connection whose request caused it; that connection already reported it.
    pub fn origin(&self) -> Option<ConnectionId> {
        self.origin
    }

    /// Whether there is nothing to tell anyone.
    pub fn is_empty(&self) -> bool {
        self.touches.is_empty() && self.event.is_none() && self.suggest.is_empty()
    }

    /// A change that restates, as `principal`'s state holds them when it is delivered, each
    /// toolset or instance in `keys` (open with its title and every tool, or closed) and each
    /// tool outside toolsets in `free` (visibility and definition). For a relay that may have
    /// missed changes (a replica that lost its Redis connection): its connections then get
    /// the current state as ordinary hint changes on their next revs (§5.6). Attach the
    /// state as the store holds it ([`with_state`](Self::with_state)): sessions take it in
    /// place of their copy, dropping changes they could not store meanwhile.
    pub fn restate(
        principal: Principal,
        keys: impl IntoIterator<Item = OpenKey>,
        free: impl IntoIterator<Item = String>,
    ) -> Self {
        let mut touches: Vec<Touch> = keys
            .into_iter()
            .map(|key| Touch::State {
                key,
                tools: true,
                ended: None,
                reason: None,
            })
            .collect();
        touches.extend(free.into_iter().map(|tool| Touch::Tool {
            key: None,
            tool,
            definition: true,
        }));
        PrincipalChange {
            principal,
            origin: None,
            touches,
            event: None,
            suggest: Vec::new(),
            state: None,
            restated: true,
        }
    }

    /// The change as JSON for another process of the same server (a relay such as Redis
    /// pub/sub): what changed, the event and suggestions, without the principal (the relay
    /// names it) or the origin connection (meaningless in another process).
    pub fn to_wire(&self) -> Value {
        let wire = WireChange {
            touches: self.touches.clone(),
            event: self.event.clone(),
            suggest: self.suggest.clone(),
        };
        serde_json::to_value(wire).expect("a principal change serializes")
    }

    /// A change of `principal` read back from [`to_wire`](Self::to_wire) JSON; it has no
    /// origin, so every local connection of the principal delivers it (§5.6: for them it is
    /// something else's consequence). `None` for JSON that is not such a change.
    pub fn from_wire(principal: Principal, wire: Value) -> Option<Self> {
        let wire: WireChange = serde_json::from_value(wire).ok()?;
        Some(PrincipalChange {
            principal,
            origin: None,
            touches: wire.touches,
            event: wire.event,
            suggest: wire.suggest,
            state: None,
            restated: false,
        })
    }
}

/// [`PrincipalChange`]'s relay form.
#[derive(Serialize, Deserialize)]
struct WireChange {
    touches: Vec<Touch>,
    event: Option<Event>,
    suggest: Vec<SuggestEntry>,
}

/// Limits and clocks a commit needs.
pub(crate) struct CommitEnv<'a> {
    pub(crate) catalog: &'a Catalog,
    pub(crate) now: Instant,
    pub(crate) clock: &'a WallClock,
    pub(crate) ended_ttl: Duration,
}

/// Seeds default-open toolsets at the start of a principal's session (§5.1).
pub(crate) fn seed(catalog: &Catalog, state: &mut PrincipalState) {
    if state.seeded {
        return;
    }
    state.seeded = true;
    for entry in catalog.toolsets.values() {
        if entry.decl.effective_default() == mcpl_protocol::rfc014::ToolsetDefault::Open {
            let key = OpenKey::new(entry.name.clone(), None);
            state.open.insert(
                key,
                new_open(entry.decl.title.clone(), Value::Null, Opener::Default),
            );
        }
    }
}

pub(crate) fn new_open(title: String, options: Value, opener: Opener) -> OpenState {
    OpenState {
        options,
        title,
        opener,
        tools: BTreeMap::new(),
        phase: Phase::Open,
    }
}

/// Records an end: removes `key`, writes an ended record and returns its id (§5.3).
pub(crate) fn end(
    env: &CommitEnv<'_>,
    state: &mut PrincipalState,
    key: &OpenKey,
    reason: Option<String>,
) -> Option<String> {
    state.open.remove(key)?;
    let id = format!("e-{}", state.next_ended);
    state.next_ended += 1;
    state.ended.push(StoredEnd {
        record: EndedRecord {
            id: id.clone(),
            toolset: key.toolset.to_string(),
            instance: key.instance.as_ref().map(|i| i.to_string()),
            reason,
            at: Some(env.clock.iso8601(env.now)),
            extra: Map::new(),
        },
        expires: env.now + env.ended_ttl,
    });
    Some(id)
}

/// Resolves a scope to a state key, checking it against the declarations.
pub(crate) fn resolve_scope(catalog: &Catalog, scope: &Scope) -> Result<Option<OpenKey>, Error> {
    let bad = |m: String| Err(Error::Update(m));
    match scope {
        Scope::Free => Ok(None),
        Scope::Toolset(t) => {
            let Some(entry) = catalog.entry(t) else {
                return bad(format!("unknown toolset `{t}`"));
            };
            if entry.instanced() {
                return bad(format!("toolset `{t}` has instances; name one"));
            }
            Ok(Some(OpenKey::new(entry.name.clone(), None)))
        }
        Scope::Instance(t, i) => {
            let Some(entry) = catalog.entry(t) else {
                return bad(format!("unknown toolset `{t}`"));
            };
            if !entry.instanced() {
                return bad(format!("toolset `{t}` has no instances"));
            }
            let i = InstanceName::parse(i).map_err(|e| Error::Update(e.to_string()))?;
            Ok(Some(OpenKey::new(entry.name.clone(), Some(i))))
        }
    }
}

fn check_tool(catalog: &Catalog, key: &Option<OpenKey>, tool: &str) -> Result<(), Error> {
    let Some(entry) = catalog.tool(tool) else {
        return Err(Error::Update(format!("unknown tool `{tool}`")));
    };
    match (key, &entry.home) {
        (None, Home::Free | Home::Group(_)) => Ok(()),
        (Some(k), Home::Toolset(t)) if *t == k.toolset => Ok(()),
        (None, Home::Toolset(t)) => Err(Error::Update(format!(
            "tool `{tool}` belongs to toolset `{t}`; change it there"
        ))),
        (Some(k), _) => Err(Error::Update(format!(
            "tool `{tool}` does not belong to toolset `{}`",
            k.toolset
        ))),
    }
}

/// Checks `update` against the declarations alone (a principal's presence moves aside).
pub(crate) fn check(catalog: &Catalog, update: &Update) -> Result<(), Error> {
    resolve(catalog, &PrincipalState::default(), update).map(drop)
}

/// Resolves every op's scope, checking it against the declarations and `state`.
fn resolve(
    cat: &Catalog,
    state: &PrincipalState,
    update: &Update,
) -> Result<Vec<Option<OpenKey>>, Error> {
    let mut resolved = Vec::with_capacity(update.ops.len());
    for op in &update.ops {
        let r = match op {
            Op::Visible(s, tool, _) => {
                let key = resolve_scope(cat, s)?;
                check_tool(cat, &key, tool)?;
                key
            }
            Op::Define(s, tool, _) => {
                let key = resolve_scope(cat, s)?;
                check_tool(cat, &key, tool)?;
                let entry = cat.tool(tool).expect("checked above");
                let presence = state
                    .presence
                    .get(tool)
                    .copied()
                    .unwrap_or(entry.def.presence);
                if key.is_none() && presence == Presence::Static {
                    return Err(Error::Update(format!(
                        "tool `{tool}` is static; its definition changes only through \
                         tools/list_changed (§4.2)"
                    )));
                }
                key
            }
            Op::Presence(tool, _) => {
                check_tool(cat, &None, tool)?;
                None
            }
            Op::Retitle(s, _) | Op::End(s, _) | Op::Open(s, _, _) => {
                let key = resolve_scope(cat, s)?;
                if key.is_none() {
                    return Err(Error::Update(
                        "retitle, end and open need a toolset or an instance".into(),
                    ));
                }
                key
            }
        };
        resolved.push(r);
    }
    Ok(resolved)
}

/// Checks every op of `update`, then applies them all; a bad op changes nothing.
pub(crate) fn commit(
    env: &CommitEnv<'_>,
    state: &mut PrincipalState,
    update: &Update,
) -> Result<Vec<Touch>, Error> {
    let cat = env.catalog;
    // Pass 1: check, so a bad op changes nothing.
    let resolved = resolve(cat, state, update)?;
    // Pass 2: apply. Changes to something that is not open are dropped: it closed meanwhile.
    let mut touches = Vec::new();
    for (op, key) in update.ops.iter().zip(resolved) {
        match op {
            Op::Visible(_, tool, visible) => {
                if let Some(ts) = tool_state(state, &key, tool) {
                    ts.visible = Some(*visible);
                    touches.push(Touch::Tool {
                        key,
                        tool: tool.clone(),
                        definition: false,
                    });
                }
            }
            Op::Define(_, tool, def) => {
                if let Some(ts) = tool_state(state, &key, tool) {
                    // §6: hosts use only description, schema and annotations; send nothing
                    // that could read as a rename or a presence change.
                    ts.definition = def.clone().map(|mut d| {
                        d.name = tool.clone();
                        if let Some(meta) = d.meta.as_mut() {
                            ToolHintsMeta::strip(meta);
                            if meta.is_empty() {
                                d.meta = None;
                            }
                        }
                        Arc::new(*d)
                    });
                    touches.push(Touch::Tool {
                        key,
                        tool: tool.clone(),
                        definition: true,
                    });
                }
            }
            Op::Presence(tool, p) => {
                state.presence.insert(tool.clone(), *p);
                touches.push(Touch::Presence { tool: tool.clone() });
            }
            Op::Retitle(_, title) => {
                let key = key.expect("checked in pass 1");
                if let Some(open) = state.open.get_mut(&key) {
                    open.title = title.clone();
                    touches.push(Touch::State {
                        key,
                        tools: false,
                        ended: None,
                        reason: None,
                    });
                }
            }
            Op::End(_, reason) => {
                let key = key.expect("checked in pass 1");
                if let Some(id) = end(env, state, &key, reason.clone()) {
                    touches.push(Touch::State {
                        key,
                        tools: true,
                        ended: Some(id),
                        reason: reason.clone(),
                    });
                }
            }
            Op::Open(_, options, title) => {
                let key = key.expect("checked in pass 1");
                if !state.open.contains_key(&key) {
                    let entry = cat.entry(key.toolset.as_str()).expect("checked in pass 1");
                    let title = title.clone().unwrap_or_else(|| default_title(entry, &key));
                    state.open.insert(
                        key.clone(),
                        new_open(title, options.clone(), Opener::Server),
                    );
                    touches.push(Touch::State {
                        key,
                        tools: true,
                        ended: None,
                        reason: None,
                    });
                }
            }
        }
    }
    Ok(touches)
}

/// The title of a newly opened toolset or instance when the app gives none.
pub(crate) fn default_title(entry: &crate::decl::ToolsetEntry, key: &OpenKey) -> String {
    match &key.instance {
        Some(i) => format!("{} ({i})", entry.decl.title),
        None => entry.decl.title.clone(),
    }
}

fn tool_state<'s>(
    state: &'s mut PrincipalState,
    key: &Option<OpenKey>,
    tool: &str,
) -> Option<&'s mut ToolState> {
    match key {
        None => Some(state.free.entry(tool.to_owned()).or_default()),
        Some(k) => state
            .open
            .get_mut(k)
            .map(|o| o.tools.entry(tool.to_owned()).or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_is_empty_only_when_it_records_nothing() {
        assert!(Update::new().is_empty());
        let mut ops = Update::new();
        ops.tools().show("hint");
        assert!(!ops.is_empty(), "an update with only a tool change");
        let mut event = Update::new();
        event.event(Event::text("White played E5"));
        assert!(!event.is_empty(), "an update with only an event");
        let mut suggest = Update::new();
        suggest.suggest_close("game", Some("g1"), "the game is over");
        assert!(!suggest.is_empty(), "an update with only a suggestion");
    }

    /// A change with one touch of each kind, an event and a suggestion.
    fn full_change(principal: Principal) -> PrincipalChange {
        let g1 = OpenKey::new(
            "game".parse().expect("a valid toolset name"),
            Some(InstanceName::parse("g1").expect("a valid instance name")),
        );
        let mut suggest = Update::new();
        suggest.suggest_open("game", Some("vs-bob"), None, "bob challenged you");
        PrincipalChange {
            principal,
            origin: Some(ConnectionId(3)),
            touches: vec![
                Touch::Tool {
                    key: Some(g1.clone()),
                    tool: "play".into(),
                    definition: true,
                },
                Touch::State {
                    key: g1,
                    tools: true,
                    ended: Some("e-4".into()),
                    reason: Some("White resigned.".into()),
                },
                Touch::Presence {
                    tool: "hint".into(),
                },
            ],
            event: Some(Event::text("White resigned.").about("game", Some("g1"))),
            suggest: suggest.suggest,
            state: None,
            restated: false,
        }
    }

    #[test]
    fn s5_6_a_principal_change_crosses_the_wire_unchanged_but_for_its_origin() {
        // A relay between replicas (`mcpl-server-redis`) sends `to_wire` and delivers
        // `from_wire`: the other replica's connections state the same touches, event and
        // suggestions, and none of them is the origin.
        let ada = Principal::authenticated("ada");
        let change = full_change(ada.clone());
        let back = PrincipalChange::from_wire(ada.clone(), change.to_wire())
            .expect("to_wire output reads back");
        assert_eq!(back.principal, ada);
        assert_eq!(back.origin, None);
        assert_eq!(back.touches, change.touches);
        assert_eq!(back.event, change.event);
        assert_eq!(back.suggest, change.suggest);
        // The relay names the principal, so the same JSON serves any of them.
        let bob = Principal::authenticated("bob");
        let as_bob = PrincipalChange::from_wire(bob.clone(), change.to_wire()).unwrap();
        assert_eq!(as_bob.principal, bob);
        assert!(!as_bob.is_empty());
    }

    #[test]
    fn a_principal_change_is_not_read_from_json_that_is_not_one() {
        let ada = Principal::authenticated("ada");
        let mut missing = full_change(ada.clone()).to_wire();
        missing
            .as_object_mut()
            .expect("the wire form is an object")
            .remove("touches");
        let bad_touch =
            serde_json::json!({"touches": [{"Teleport": {}}], "event": null, "suggest": []});
        for garbage in [
            Value::Null,
            Value::String("garbage".into()),
            serde_json::json!([]),
            missing,
            bad_touch,
        ] {
            assert!(
                PrincipalChange::from_wire(ada.clone(), garbage.clone()).is_none(),
                "{garbage}"
            );
        }
    }
}
