//! Applying lists, hint changes and full statements to the snapshot, and computing the change
//! each application made.
//!
//! Every function here either applies its input whole or, for a malformed input, returns an
//! error before touching anything (H03, H06, H22).
//!
//! They are functions over a `&mut Snapshot`, not `impl Snapshot` methods, so that the
//! snapshot's module never names what computing a change takes (`Touched`, `HintOutcome`,
//! the views): this module names `snapshot`, never the other way round.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{
    HintChanges, ListResult, Presence, SuggestEntry, ToolHintEntry, ToolHintsMeta, ToolsetChange,
    ToolsetDecl, ToolsetDefault, ToolsetState,
};
use serde_json::Value;

use super::change::{ChangeItem, CloseCause};
use super::names;
use super::snapshot::{Declared, Definition, Instance, ListedTool, Live, OpenKey, Snapshot};
use crate::config::ToolPolicy;
use crate::names::{InstanceName, ToolsetName};

/// A place a dynamic tool can be used: (tool, instance).
type ViewKey = (String, Option<InstanceName>);

/// The view of dynamic tools a change is computed from: per (tool, instance), whether it is
/// visible and its effective definition as it was.
type View = BTreeMap<ViewKey, (bool, WasDef)>;

/// An effective definition as it was before a change: shared with the snapshot (an
/// override, never copied), copied (a listed one, when the list itself may change), or
/// "the listed one" when the list cannot change in between (hint changes never touch it).
enum WasDef {
    Listed,
    Shared(Arc<Definition>),
    Owned(Box<Definition>),
}

/// What one batch of hint changes may alter: the open keys its toolset entries name, and
/// the view entries of the tools and instances its entries name. A change is computed over
/// these alone, so its cost follows the batch, not everything open.
#[derive(Debug, Default)]
struct Touched {
    open: BTreeSet<OpenKey>,
    view: BTreeSet<ViewKey>,
    /// Open keys, view entries and tools visited while computing the change: the work it
    /// took, counted so a test can show it does not grow with what the batch did not name.
    visits: Cell<usize>,
}

impl Touched {
    /// What `hints` may change, resolved as its entries will be applied: each toolset entry's
    /// open key with the view entries of its toolset's tools there, and each tool entry's one
    /// view entry (its instance, for an instanced toolset). Entries that will be ignored touch
    /// nothing.
    fn of(snap: &Snapshot, hints: &HintChanges) -> Touched {
        let mut touched = Touched::default();
        let mut visits = 0;
        for entry in hints.toolsets.iter().flatten() {
            let Some((ts, decl)) = snap.declared.get_key_value(entry.toolset.as_str()) else {
                continue;
            };
            let instance = names::instance(entry.instance.as_deref());
            if decl.instances != instance.is_some() {
                continue;
            }
            for t in snap
                .tools
                .iter()
                .inspect(|_| visits += 1)
                .filter(|t| t.toolset.as_ref() == Some(ts))
            {
                touched.view.insert((t.tool.name.clone(), instance.clone()));
            }
            touched.open.insert((ts.clone(), instance));
        }
        for entry in hints.tools.iter().flatten() {
            visits += 1;
            let Some(listed) = snap.tool(&entry.name) else {
                continue;
            };
            let instance = match listed.toolset.as_deref() {
                Some(ts) if snap.instanced(ts) => {
                    match names::instance(entry.instance.as_deref()) {
                        Some(i) => Some(i),
                        None => continue,
                    }
                }
                _ => None,
            };
            touched.view.insert((entry.name.clone(), instance));
        }
        touched.visits.set(visits);
        touched
    }

    fn visit(&self) {
        self.visits.set(self.visits.get() + 1);
    }
}

/// The open set a change is computed from: each open key with its title. Only titles are
/// compared, so the per-tool state (definitions included) is not copied.
type OpenTitles = BTreeMap<OpenKey, Option<String>>;

/// An effective definition borrowed from the snapshot: an override, or the listed one.
#[derive(Clone, Copy)]
enum DefRef<'a> {
    Over(&'a Arc<Definition>),
    Listed(&'a Tool),
}

impl DefRef<'_> {
    /// True when it equals `d` field by field (as `Definition`'s `PartialEq` would).
    fn same(self, d: &Definition) -> bool {
        match self {
            DefRef::Over(o) => **o == *d,
            DefRef::Listed(t) => {
                t.description == d.description
                    && t.input_schema == d.input_schema
                    && t.annotations == d.annotations
            }
        }
    }

    /// True when it equals the definition `was`; `listed` is the tool's listed definition,
    /// which [`WasDef::Listed`] stands for.
    fn same_as(self, was: &WasDef, listed: &Tool) -> bool {
        match (self, was) {
            (DefRef::Listed(_), WasDef::Listed) => true,
            (DefRef::Over(o), WasDef::Listed) => DefRef::Listed(listed).same(o),
            (DefRef::Over(o), WasDef::Shared(w)) => Arc::ptr_eq(o, w) || **o == **w,
            (_, WasDef::Shared(w)) => self.same(w),
            (_, WasDef::Owned(w)) => self.same(w),
        }
    }

    /// The definition as it is now, to compare with later: shared when it is an override;
    /// the listed one is copied unless `list_stays` (the list cannot change before then).
    fn was(self, list_stays: bool) -> WasDef {
        match self {
            DefRef::Over(o) => WasDef::Shared(o.clone()),
            DefRef::Listed(_) if list_stays => WasDef::Listed,
            DefRef::Listed(t) => WasDef::Owned(Box::new(Definition::of(t))),
        }
    }
}

/// What applying one hinted message found besides the change itself.
#[derive(Debug, Default)]
pub(crate) struct HintOutcome {
    /// The change items, in a stable order.
    pub items: Vec<ChangeItem>,
    /// H18: an entry named a tool the latest list lacks.
    pub unknown_tool: bool,
    /// §7: suggestions, which change nothing.
    pub suggestions: Vec<SuggestEntry>,
    /// For hint changes: how many open keys, view entries and tools computing the change
    /// visited (see `Touched`).
    pub visits: usize,
}

/// Reads the manifest's toolset declarations; returns the items for toolsets whose
/// declaration went away (H30).
pub(crate) fn set_declared(snap: &mut Snapshot, manifest: Option<&Value>) -> Vec<ChangeItem> {
    let mut declared = BTreeMap::new();
    if let Some(Value::Object(sets)) = manifest.and_then(|m| m.get("toolsets")) {
        for (name, decl) in sets {
            // One bad declaration is skipped; the others still count.
            let Ok(d) = serde_json::from_value::<ToolsetDecl>(decl.clone()) else {
                continue;
            };
            let Some(name) = names::toolset(name) else {
                continue;
            };
            declared.insert(
                name,
                Declared {
                    title: Some(d.title.clone()),
                    summary: d.summary.clone(),
                    // Appendix B.9: instances force "closed"; absent reads as closed.
                    default_open: d.effective_default() == ToolsetDefault::Open,
                    instances: d.is_instanced(),
                    options: d.options.clone(),
                },
            );
        }
    }
    let mut items = Vec::new();
    let gone: Vec<OpenKey> = snap
        .open
        .keys()
        .filter(|(t, _)| match (snap.declared.get(t), declared.get(t)) {
            (_, None) => true,
            // Reconstructed §5.1: dropping `instances` (or adding it) is incompatible.
            (Some(a), Some(b)) => a.instances != b.instances,
            (None, Some(_)) => false,
        })
        .cloned()
        .collect();
    for key in gone {
        snap.open.remove(&key);
        snap.opened_here.remove(&key);
        items.push(ChangeItem::Closed {
            toolset: key.0,
            instance: key.1,
            cause: CloseCause::DeclarationRemoved,
            reason: None,
            ended_id: None,
        });
    }
    snap.declared = declared;
    if !items.is_empty() {
        snap.version += 1;
    }
    items
}

/// Each open key with its title, for [`diff`].
fn open_titles(snap: &Snapshot) -> OpenTitles {
    snap.open
        .iter()
        .map(|(k, i)| (k.clone(), i.title.clone()))
        .collect()
}

/// The view of every dynamic tool in every place it can be used.
fn view(snap: &Snapshot) -> View {
    view_ref(snap)
        .into_iter()
        .map(|(k, (v, d))| (k, (v, d.was(false))))
        .collect()
}

/// The view at the keys `touched` names only, for a change computed over them.
fn view_touched(snap: &Snapshot, touched: &Touched) -> View {
    view_at(snap, touched)
        .into_iter()
        .map(|(k, (v, d))| (k, (v, d.was(true))))
        .collect()
}

/// The definition in force for listed tool `t` in one place: the one a hint or statement set
/// there (`live`), else the listed one.
fn def_ref<'s>(live: Option<&'s Live>, t: &'s ListedTool) -> DefRef<'s> {
    live.and_then(|l| l.definition.as_ref())
        .map_or(DefRef::Listed(&t.tool), DefRef::Over)
}

/// The view entries at the keys `touched` names that exist (a tool of a closed instance has none),
/// borrowing each effective definition.
fn view_at<'s>(snap: &'s Snapshot, touched: &Touched) -> BTreeMap<ViewKey, (bool, DefRef<'s>)> {
    let mut view = BTreeMap::new();
    for (name, instance) in &touched.view {
        touched.visit();
        let Some(t) = snap.tool(name).filter(|t| t.presence == Presence::Dynamic) else {
            continue;
        };
        match &t.toolset {
            Some(ts) if snap.declared.contains_key(ts) => {
                let Some(inst) = snap.open.get(&(ts.clone(), instance.clone())) else {
                    continue;
                };
                let live = inst.tools.get(name);
                let visible = live.is_some_and(|l| l.visible);
                let def = def_ref(live, t);
                view.insert((name.clone(), instance.clone()), (visible, def));
            }
            _ if instance.is_none() => {
                let def = def_ref(snap.loose.get(name), t);
                view.insert((name.clone(), None), (snap.visible(name, None), def));
            }
            _ => {}
        }
    }
    view
}

/// The view of every dynamic tool, borrowing each effective definition (as
/// [`Snapshot::definition`] picks it).
fn view_ref(snap: &Snapshot) -> BTreeMap<ViewKey, (bool, DefRef<'_>)> {
    let mut view = BTreeMap::new();
    for t in snap
        .tools
        .iter()
        .filter(|t| t.presence == Presence::Dynamic)
    {
        let name = &t.tool.name;
        match t.toolset.as_deref() {
            Some(ts) if snap.declared.contains_key(ts) => {
                for (key, inst) in snap.open.iter().filter(|((s, _), _)| s == ts) {
                    let live = inst.tools.get(name);
                    let visible = live.is_some_and(|l| l.visible);
                    let def = def_ref(live, t);
                    view.insert((name.clone(), key.1.clone()), (visible, def));
                }
            }
            _ => {
                let def = def_ref(snap.loose.get(name), t);
                view.insert((name.clone(), None), (snap.visible(name, None), def));
            }
        }
    }
    view
}

/// Items for what changed between `before` (open set, view) and now; with `scope`, only
/// the open keys and view entries it names are compared (`before` holds those alone).
fn diff(
    snap: &Snapshot,
    before_open: &OpenTitles,
    before_view: &View,
    reasons: &BTreeMap<OpenKey, (Option<String>, Option<String>)>,
    away: bool,
    scope: Option<&Touched>,
) -> Vec<ChangeItem> {
    let mut items = Vec::new();
    let open_now: Vec<(&OpenKey, &Instance)> = match scope {
        Some(t) => t
            .open
            .iter()
            .filter_map(|k| snap.open.get_key_value(k))
            .collect(),
        None => snap.open.iter().collect(),
    };
    let visit = || scope.map(Touched::visit);
    for (key, inst) in open_now {
        visit();
        match before_open.get(key) {
            None => items.push(ChangeItem::Opened {
                toolset: key.0.clone(),
                instance: key.1.clone(),
                title: inst.title.clone(),
            }),
            Some(old) if *old != inst.title => {
                if let Some(title) = &inst.title {
                    items.push(ChangeItem::Retitled {
                        toolset: key.0.clone(),
                        instance: key.1.clone(),
                        title: title.clone(),
                    });
                }
            }
            Some(_) => {}
        }
    }
    for key in before_open.keys().filter(|k| !snap.open.contains_key(*k)) {
        visit();
        let (reason, ended_id) = reasons.get(key).cloned().unwrap_or_default();
        let covered = snap
            .ended
            .iter()
            .any(|e| e.toolset == *key.0 && e.instance.as_deref() == key.1.as_deref());
        let cause = if away && !covered && ended_id.is_none() {
            CloseCause::EndedWhileAway
        } else {
            CloseCause::Server
        };
        items.push(ChangeItem::Closed {
            toolset: key.0.clone(),
            instance: key.1.clone(),
            cause,
            reason,
            ended_id,
        });
    }
    let after = match scope {
        Some(t) => view_at(snap, t),
        None => view_ref(snap),
    };
    for (key, (visible, def)) in &after {
        visit();
        let (tool, instance) = key;
        let Some(listed) = snap.tool(tool) else {
            continue; // a view entry is always of a listed tool
        };
        match before_view.get(key) {
            Some((was, old_def)) => {
                if was != visible {
                    items.push(ChangeItem::Visibility {
                        tool: tool.clone(),
                        toolset: listed.toolset.clone(),
                        instance: instance.clone(),
                        visible: *visible,
                    });
                }
                if !def.same_as(old_def, &listed.tool) {
                    items.push(ChangeItem::Redefined {
                        tool: tool.clone(),
                        instance: instance.clone(),
                    });
                }
            }
            None if *visible => items.push(ChangeItem::Visibility {
                tool: tool.clone(),
                toolset: listed.toolset.clone(),
                instance: instance.clone(),
                visible: true,
            }),
            None => {}
        }
    }
    // A view entry that is gone now needs no item of its own: its instance closed (told
    // above), or a list moved or dropped its tool, which `apply_list` tells (to static as
    // `PresenceListed`, out of a toolset or out of the list by `tell_moved_out`).
    items
}

/// Applies a whole, validated list (H02): definitions, presence, coarse visibility and
/// toolset membership as one step. `list_rev` is the list's `mcpl/rev`; a loose value
/// stamped with a higher rev is kept (H11 on Streamable HTTP).
pub(crate) fn apply_list(
    snap: &mut Snapshot,
    tools: Vec<Tool>,
    list_rev: u64,
    policy: &ToolPolicy,
    grouping: Option<&crate::grouping::Grouping>,
) -> Vec<ChangeItem> {
    let before_open = open_titles(snap);
    let before_view = view(snap);
    let old_presence: BTreeMap<String, Presence> = snap
        .tools
        .iter()
        .map(|t| (t.tool.name.clone(), t.presence))
        .collect();
    if let (false, None, Some(g)) = (snap.hinted, &snap.rules, grouping) {
        // Grouping is fixed at the first read (a later list is never regrouped).
        let names: Vec<&str> = tools
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| policy.permits(n))
            .collect();
        snap.rules = Some(g.fix(&snap.server, &names));
    }
    let mut listed = Vec::new();
    let mut index = BTreeMap::new();
    for tool in tools {
        if index.contains_key(&tool.name) {
            // H08: the first entry counts.
            tracing::debug!(server = %snap.server, "duplicate tool name in tools/list ignored");
            continue;
        }
        if !policy.permits(&tool.name) {
            continue;
        }
        let meta = ToolHintsMeta::of(&tool);
        let toolset = meta
            .toolset
            .clone()
            .as_deref()
            .and_then(names::toolset)
            .filter(|_| snap.hinted);
        // A plain server's tools go to the host's toolsets by the fixed rules.
        let host_set = match (&snap.rules, snap.hinted) {
            (Some(r), false) => r.place(&tool.name),
            _ => None,
        };
        let toolset = toolset.or(host_set);
        // H10: a toolset makes a tool dynamic whatever its presence says.
        let presence = if !snap.hinted && toolset.is_none() {
            Presence::Static
        } else if toolset.is_some() || meta.presence == Some(Presence::Dynamic) {
            Presence::Dynamic
        } else {
            Presence::Static
        };
        // H12: a hint-less server's `mcpl/visible` is hint `_meta`, ignored like the rest.
        let listed_visible = !snap.hinted || meta.effective_visible();
        index.insert(tool.name.clone(), listed.len());
        listed.push(super::snapshot::ListedTool {
            tool,
            presence,
            toolset,
            listed_visible,
        });
    }
    for t in &listed {
        if t.toolset.is_none() {
            let live = snap.loose.entry(t.tool.name.clone()).or_insert(Live {
                visible: t.listed_visible,
                definition: None,
                stamp: 0,
            });
            if list_rev >= live.stamp {
                live.visible = t.listed_visible;
                live.stamp = list_rev;
            }
        }
    }
    let mut items: Vec<ChangeItem> = listed
        .iter()
        .filter_map(|t| {
            let old = old_presence.get(&t.tool.name)?;
            (*old != t.presence).then(|| ChangeItem::PresenceListed {
                tool: t.tool.name.clone(),
                now_static: t.presence == Presence::Static,
            })
        })
        .collect();
    let old_toolsets: BTreeMap<String, ToolsetName> = snap
        .tools
        .iter()
        .filter_map(|t| Some((t.tool.name.clone(), t.toolset.clone()?)))
        .collect();
    snap.tools = listed;
    snap.index = index;
    snap.listed = true;
    let mut rest = diff(
        snap,
        &before_open,
        &before_view,
        &BTreeMap::new(),
        false,
        None,
    );
    // A list never opens or closes; only visibility and definitions can move with it.
    rest.retain(|i| {
        matches!(
            i,
            ChangeItem::Visibility { .. } | ChangeItem::Redefined { .. }
        )
    });
    tell_moved_out(snap, &before_view, &old_toolsets, &mut rest);
    items.extend(rest);
    snap.version += 1;
    items
}

/// A visible tool a list took out of where the model saw it is told once, as invisible
/// there: a tool moved out of its toolset (to another, to none, or to static) left the
/// open instances of the toolset it was in, and is told under the toolset it left; a
/// dynamic tool the list no longer has at all is told gone from every place it was visible
/// (`diff` tells no departed view entry).
fn tell_moved_out(
    snap: &Snapshot,
    before_view: &View,
    old_toolsets: &BTreeMap<String, ToolsetName>,
    items: &mut Vec<ChangeItem>,
) {
    let left = |tool: &str| match (snap.tool(tool), old_toolsets.get(tool)) {
        (None, _) => true,
        (Some(t), Some(old)) => t.toolset.as_ref() != Some(old),
        (Some(_), None) => false,
    };
    // Almost every list moves and drops nothing: then there is no view to build again.
    if !before_view.keys().any(|(tool, _)| left(tool)) {
        return;
    }
    let after = view(snap);
    for ((tool, instance), (was, _)) in before_view {
        let key = (tool.clone(), instance.clone());
        if !*was || !left(tool) || after.contains_key(&key) {
            continue;
        }
        // Where the model saw it: an instance of a declared toolset, or loose.
        let toolset = old_toolsets
            .get(tool)
            .filter(|ts| snap.declared.contains_key(*ts));
        let dropped = snap.tool(tool).is_none();
        if !dropped
            && !toolset.is_some_and(|ts| snap.open.contains_key(&(ts.clone(), instance.clone())))
        {
            continue;
        }
        items.push(ChangeItem::Visibility {
            tool: tool.clone(),
            toolset: toolset.cloned(),
            instance: instance.clone(),
            visible: false,
        });
    }
}

/// Applies one message's hint changes at `rev` (already placed in rev order).
pub(crate) fn apply_hints(
    snap: &mut Snapshot,
    rev: u64,
    mut hints: HintChanges,
    policy: &ToolPolicy,
) -> HintOutcome {
    // Only what the batch names can move; the rest would diff to nothing.
    let touched = Touched::of(snap, &hints);
    let before_open: OpenTitles = touched
        .open
        .iter()
        .inspect(|_| touched.visit())
        .filter_map(|k| snap.open.get(k).map(|i| (k.clone(), i.title.clone())))
        .collect();
    let before_view = view_touched(snap, &touched);
    let mut out = HintOutcome::default();
    let mut reasons = BTreeMap::new();
    for entry in hints.toolsets.iter().flatten() {
        apply_toolset_entry(snap, entry, &mut reasons);
    }
    // Entries are consumed, so a new definition moves into the snapshot uncopied.
    for entry in hints.tools.iter_mut().flatten() {
        if !apply_tool_entry(snap, rev, entry, policy) {
            out.unknown_tool = true;
        }
    }
    out.suggestions = hints.suggest.take().unwrap_or_default();
    snap.applied = rev;
    out.items = diff(
        snap,
        &before_open,
        &before_view,
        &reasons,
        false,
        Some(&touched),
    );
    out.visits = touched.visits.get();
    snap.version += 1;
    out
}

fn apply_toolset_entry(
    snap: &mut Snapshot,
    entry: &ToolsetChange,
    reasons: &mut BTreeMap<OpenKey, (Option<String>, Option<String>)>,
) {
    // A name outside the grammar is declared by no one: the entry is skipped.
    let Some((ts, decl)) = snap.declared.get_key_value(entry.toolset.as_str()) else {
        return; // undeclared groups are the host's (§5.4)
    };
    let instance = names::instance(entry.instance.as_deref());
    if decl.instances != instance.is_some() {
        return; // §5.5: instance iff instanced
    }
    let key = (ts.clone(), instance);
    match entry.state {
        Some(ToolsetState::Closed) => {
            snap.open.remove(&key);
            reasons.insert(key, (entry.reason.clone(), entry.ended.clone()));
        }
        Some(ToolsetState::Open) => {
            let inst = snap.open.entry(key).or_default();
            if let Some(title) = &entry.title {
                inst.title = Some(title.clone());
            }
        }
        None => {
            if let (Some(inst), Some(title)) = (snap.open.get_mut(&key), &entry.title) {
                inst.title = Some(title.clone());
            }
        }
    }
}

/// Applies one `tools[]` entry; false when it names a tool the latest list lacks (H18).
fn apply_tool_entry(
    snap: &mut Snapshot,
    rev: u64,
    entry: &mut ToolHintEntry,
    policy: &ToolPolicy,
) -> bool {
    let name = entry.name.as_str();
    if !policy.permits(name) {
        return true; // H09: a denied tool stays out, hints or not
    }
    // Borrowed, not cloned: only `open` and `loose` change below.
    let Some(listed) = snap.index.get(name).map(|&i| &snap.tools[i]) else {
        return false;
    };
    let moves_dynamic = entry.presence == Some(Presence::Dynamic);
    // §6: a definition counts for dynamic tools, or for a static one this entry moves (H20).
    let def = entry
        .definition
        .take()
        .filter(|_| listed.presence == Presence::Dynamic || moves_dynamic)
        .map(|d| {
            // A decoded entry holds the only reference: moved out, not copied.
            let d = Arc::unwrap_or_clone(d);
            Definition {
                description: d.description,
                input_schema: d.input_schema,
                annotations: d.annotations,
            }
        });
    let target: &mut Live = match &listed.toolset {
        Some(ts) if snap.declared.contains_key(ts) => {
            let instanced = snap.instanced(ts);
            let instance = names::instance(entry.instance.as_deref());
            if instanced && instance.is_none() {
                return true; // §5.5: hosts ignore instanced entries without an instance
            }
            let key = (ts.clone(), instance.filter(|_| instanced));
            let Some(inst) = snap.open.get_mut(&key) else {
                return true; // not open here: nothing to apply
            };
            if !inst.tools.contains_key(name) {
                inst.tools.insert(
                    name.to_owned(),
                    Live {
                        visible: false,
                        definition: None,
                        stamp: 0,
                    },
                );
            }
            let Some(live) = inst.tools.get_mut(name) else {
                return true;
            };
            live
        }
        _ => snap.loose.entry(name.to_owned()).or_insert(Live {
            visible: listed.listed_visible,
            definition: None,
            stamp: 0,
        }),
    };
    if let Some(v) = entry.visible {
        target.visible = v;
    }
    if let Some(d) = def {
        target.definition = (!DefRef::Listed(&listed.tool).same(&d)).then(|| Arc::new(d));
    }
    target.stamp = rev;
    true
}

/// Applies a `toolsets/list` result as a full statement (H21). `away` marks a statement
/// read on (re)connect, so an instance that vanished without an ended record is told as
/// ended while away (H28).
pub(crate) fn apply_statement(
    snap: &mut Snapshot,
    rev: u64,
    result: &ListResult,
    policy: &ToolPolicy,
    away: bool,
) -> HintOutcome {
    let before_open = open_titles(snap);
    let before_view = view(snap);
    let mut open = BTreeMap::new();
    for entry in &result.open {
        let Some((ts, decl)) = snap.declared.get_key_value(entry.toolset.as_str()) else {
            continue;
        };
        let instance = names::instance(entry.instance.as_deref());
        if decl.instances != instance.is_some() {
            continue;
        }
        let key = (ts.clone(), instance);
        let keep_title = snap.open.get(&key).and_then(|i| i.title.clone());
        open.insert(
            key,
            Instance {
                title: entry.title.clone().or(keep_title),
                options: entry.options.clone(),
                tools: BTreeMap::new(),
            },
        );
    }
    // An ended record naming a toolset or instance outside the grammar is skipped whole
    // (its instance does not read as absent: that would end the wrong thing).
    let mut ended = Vec::new();
    let mut ended_items = Vec::new();
    for e in result.ended.iter().flatten() {
        let Some(toolset) = names::toolset(&e.toolset) else {
            continue;
        };
        let instance = match e.instance.as_deref() {
            None => None,
            Some(i) => match InstanceName::parse(i) {
                Ok(i) => Some(i),
                Err(_) => continue,
            },
        };
        ended_items.push(ChangeItem::Ended {
            id: e.id.clone(),
            toolset,
            instance,
            reason: e.reason.clone(),
        });
        ended.push(e.clone());
    }
    snap.ended = ended;
    // Replace all dynamic state: a dynamic tool not stated visible is invisible.
    snap.open = open;
    let dynamic: BTreeSet<String> = snap
        .tools
        .iter()
        .filter(|t| t.presence == Presence::Dynamic)
        .map(|t| t.tool.name.clone())
        .collect();
    for name in &dynamic {
        snap.loose.insert(
            name.clone(),
            Live {
                visible: false,
                definition: None,
                stamp: rev,
            },
        );
    }
    let keep: BTreeSet<OpenKey> = snap.open.keys().cloned().collect();
    snap.opened_here.retain(|k| keep.contains(k));
    let mut out = HintOutcome::default();
    for entry in result.hints().tools.iter().flatten() {
        // A statement is rare; its entries are copied as they always were.
        if !apply_tool_entry(snap, rev, &mut entry.clone(), policy) {
            out.unknown_tool = true;
        }
    }
    snap.applied = rev;
    snap.ready = true;
    snap.statements += 1;
    out.items = diff(
        snap,
        &before_open,
        &before_view,
        &BTreeMap::new(),
        away,
        None,
    );
    out.items.extend(ended_items);
    snap.version += 1;
    out
}

/// Opens or closes an undeclared group on the host side (§5.4); the change it made.
pub(crate) fn set_group(snap: &mut Snapshot, group: &ToolsetName, open: bool) -> Vec<ChangeItem> {
    let before_view = view(snap);
    let was = snap.groups_open.contains(group);
    if was == open {
        return Vec::new();
    }
    if open {
        snap.groups_open.insert(group.clone());
    } else {
        snap.groups_open.remove(group);
    }
    let mut items = vec![if open {
        ChangeItem::Opened {
            toolset: group.clone(),
            instance: None,
            title: None,
        }
    } else {
        ChangeItem::Closed {
            toolset: group.clone(),
            instance: None,
            cause: CloseCause::Host,
            reason: None,
            ended_id: None,
        }
    }];
    let open_now = open_titles(snap);
    items.extend(diff(
        snap,
        &open_now,
        &before_view,
        &BTreeMap::new(),
        false,
        None,
    ));
    snap.version += 1;
    items
}

/// Drops all hint state (toolHints withdrawn, §5.1): every tool becomes static.
pub(crate) fn drop_hints(snap: &mut Snapshot) {
    snap.hinted = false;
    snap.open.clear();
    snap.loose.clear();
    snap.groups_open.clear();
    snap.declared.clear();
    for t in &mut snap.tools {
        t.presence = Presence::Static;
        t.toolset = None;
    }
    snap.version += 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::ServerName;
    use serde_json::json;

    /// A hinted snapshot with `n` open instances of the instanced toolset `go`, each with
    /// `play` (a per-instance definition) and `pass` visible, at rev 1.
    fn with_open(n: usize) -> Snapshot {
        let mut snap = Snapshot::empty(ServerName::sanitized("arcade"), "p".into());
        snap.hinted = true;
        let manifest = json!({"toolsets": {"go": {"title": "Go", "instances": true}}});
        set_declared(&mut snap, Some(&manifest));
        let meta = json!({"mcpl/toolset": "go", "mcpl/visible": false});
        let tools = ["play", "pass"]
            .map(|name| Tool::from_value(json!({"name": name, "_meta": meta})).unwrap());
        let policy = ToolPolicy::default();
        apply_list(&mut snap, tools.to_vec(), 0, &policy, None);
        let open: Vec<Value> = (0..n)
            .map(|i| json!({"toolset": "go", "instance": format!("g{i}")}))
            .collect();
        let hints: Vec<Value> = (0..n)
            .flat_map(|i| {
                let definition = json!({"name": "play", "inputSchema": {"type": "object",
                    "properties": {"move": {"enum": [format!("A{i}")]}}}});
                [
                    json!({"name": "play", "instance": format!("g{i}"), "visible": true,
                           "definition": definition}),
                    json!({"name": "pass", "instance": format!("g{i}"), "visible": true}),
                ]
            })
            .collect();
        let statement: ListResult = serde_json::from_value(
            json!({"open": open, "_meta": {"mcpl/hints": {"rev": 1, "tools": hints}}}),
        )
        .unwrap();
        let out = apply_statement(&mut snap, 1, &statement, &policy, false);
        assert!(!out.unknown_tool);
        assert_eq!(snap.open().len(), n);
        snap
    }

    /// Applies `batch` at rev 2 with `n` instances open: its items and its visits.
    fn change_with(n: usize, batch: Value) -> (Vec<ChangeItem>, usize) {
        let mut snap = with_open(n);
        let hints = HintChanges::from_value(batch).unwrap();
        let out = apply_hints(&mut snap, 2, hints, &ToolPolicy::default());
        assert!(!out.unknown_tool);
        (out.items, out.visits)
    }

    /// Issue 18, `change_cost_1000_vs_1`: a change costs what it names. The same batch with
    /// 1 and with 1,000 instances open visits the same open keys, view entries and tools
    /// and tells the same items: a visibility change, a new per-instance definition, an
    /// instance closed and one opened.
    #[test]
    fn s6_a_change_visits_what_it_names_not_every_open_instance() {
        let batches = [
            json!({"rev": 2, "tools": [{"name": "pass", "instance": "g0", "visible": false}]}),
            json!({"rev": 2, "tools": [{"name": "play", "instance": "g0", "definition":
                {"name": "play", "inputSchema": {"type": "object"}}}]}),
            json!({"rev": 2, "toolsets": [
                {"toolset": "go", "instance": "g0", "state": "closed", "reason": "over"},
                {"toolset": "go", "instance": "fresh", "state": "open", "title": "New"}],
                "tools": [{"name": "play", "instance": "fresh", "visible": true}]}),
        ];
        for batch in batches {
            let (one_items, one_visits) = change_with(1, batch.clone());
            let (many_items, many_visits) = change_with(1000, batch.clone());
            assert!(!one_items.is_empty(), "{batch}");
            assert_eq!(one_items, many_items, "{batch}");
            assert_eq!(one_visits, many_visits, "{batch}");
            assert!(one_visits > 0 && one_visits < 40, "{batch}: {one_visits}");
        }
    }

    /// §5.1, the host's rule for names off the wire: a toolset or instance name that breaks
    /// the grammar is not a name. The declaration, tool membership, open entry, ended record or
    /// hint entry carrying it is skipped whole, the rest of the message applies, and nothing
    /// in the snapshot or its changes holds the bad name.
    #[test]
    fn s5_1_a_server_sent_name_outside_the_grammar_is_skipped_whole() {
        let policy = ToolPolicy::default();
        let mut snap = Snapshot::empty(ServerName::sanitized("arcade"), "p".into());
        snap.hinted = true;
        let manifest = json!({"toolsets": {
            "go": {"title": "Go", "instances": true},
            "bad name": {"title": "Bad"}}});
        set_declared(&mut snap, Some(&manifest));
        let names = |snap: &Snapshot| -> Vec<String> {
            snap.toolset_names().iter().map(|n| n.to_string()).collect()
        };
        assert_eq!(names(&snap), ["go"]);
        let tools = [
            json!({"name": "play", "_meta": {"mcpl/toolset": "go", "mcpl/visible": false}}),
            json!({"name": "odd", "_meta": {"mcpl/toolset": "no/such", "mcpl/presence": "dynamic"}}),
        ]
        .map(|t| Tool::from_value(t).unwrap());
        apply_list(&mut snap, tools.to_vec(), 0, &policy, None);
        assert_eq!(snap.tool("odd").map(|t| t.toolset.clone()), Some(None));
        assert_eq!(
            snap.tool("odd").map(|t| t.presence),
            Some(Presence::Dynamic)
        );
        assert_eq!(names(&snap), ["go"]);

        let statement: ListResult = serde_json::from_value(json!({
            "open": [
                {"toolset": "go", "instance": "g1"},
                {"toolset": "go", "instance": "g 2"},
                {"toolset": "bad name"}],
            "ended": [
                {"id": "e1", "toolset": "go", "instance": "g0", "reason": "over"},
                {"id": "e2", "toolset": "go", "instance": "g 9", "reason": "over"},
                {"id": "e3", "toolset": "bad name", "reason": "over"}],
            "_meta": {"mcpl/hints": {"rev": 1, "tools": []}}}))
        .unwrap();
        let out = apply_statement(&mut snap, 1, &statement, &policy, false);
        let g = |n: &str| InstanceName::parse(n).unwrap();
        let go = ToolsetName::parse("go").unwrap();
        assert_eq!(
            snap.open().keys().cloned().collect::<Vec<_>>(),
            [(go.clone(), Some(g("g1")))]
        );
        let ended: Vec<&str> = snap.ended().iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ended, ["e1"]);
        let told: Vec<&ChangeItem> = out
            .items
            .iter()
            .filter(|i| matches!(i, ChangeItem::Ended { .. }))
            .collect();
        assert_eq!(
            told,
            [&ChangeItem::Ended {
                id: "e1".into(),
                toolset: go.clone(),
                instance: Some(g("g0")),
                reason: Some("over".into()),
            }]
        );

        // One hint entry with a bad instance is skipped; its neighbour applies.
        let hints = HintChanges::from_value(json!({"rev": 2,
            "toolsets": [
                {"toolset": "go", "instance": "g 3", "state": "open"},
                {"toolset": "go", "instance": "g3", "state": "open"}],
            "tools": [{"name": "play", "instance": "g 3", "visible": true}]}))
        .unwrap();
        let out = apply_hints(&mut snap, 2, hints, &policy);
        assert_eq!(
            snap.open().keys().cloned().collect::<Vec<_>>(),
            [(go.clone(), Some(g("g1"))), (go.clone(), Some(g("g3")))]
        );
        assert_eq!(
            out.items,
            [ChangeItem::Opened {
                toolset: go,
                instance: Some(g("g3")),
                title: None,
            }]
        );
    }

    /// The scoped change tells what a whole-view diff tells: a redefinition with the same
    /// schema again is no change, and an instance not named keeps its definition.
    #[test]
    fn s6_a_definition_sent_again_unchanged_is_no_change() {
        let mut snap = with_open(3);
        let same = json!({"rev": 2, "tools": [{"name": "play", "instance": "g1",
            "definition": {"name": "play", "inputSchema": {"type": "object",
                "properties": {"move": {"enum": ["A1"]}}}}}]});
        let out = apply_hints(
            &mut snap,
            2,
            HintChanges::from_value(same).unwrap(),
            &ToolPolicy::default(),
        );
        assert_eq!(out.items, Vec::new());
        let g2 = InstanceName::parse("g2").unwrap();
        let other = snap.definition("play", Some(&g2)).expect("a definition");
        assert_eq!(
            other.input_schema["properties"]["move"]["enum"],
            json!(["A2"])
        );
    }

    /// §5.5: an instance's own definition is read where the state keeps it, not copied (act
    /// reads it on every call); a tool without one gets the listed definition, built.
    #[test]
    fn s5_5_an_instances_own_definition_is_read_in_place() {
        let snap = with_open(2);
        let g1 = InstanceName::parse("g1").unwrap();
        let own = snap.definition("play", Some(&g1)).expect("a definition");
        assert!(matches!(own, std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            own.input_schema["properties"]["move"]["enum"],
            json!(["A1"])
        );
        let listed = snap
            .definition("pass", Some(&g1))
            .expect("the listed definition");
        assert!(matches!(listed, std::borrow::Cow::Owned(_)));
        assert!(snap.definition("nope", Some(&g1)).is_none());
        // The check on every act borrows the same schema, the instance's own or the listed one.
        assert_eq!(
            snap.input_schema("play", Some(&g1)),
            Some(&own.input_schema)
        );
        assert_eq!(
            snap.input_schema("pass", Some(&g1)),
            Some(&snap.tool("pass").unwrap().tool.input_schema)
        );
        assert_eq!(snap.input_schema("nope", Some(&g1)), None);
    }

    /// §4.3: a toolset's open instances are read from its own part of the open map: every one
    /// of them, in order, and none of a toolset whose name sorts beside it.
    #[test]
    fn s4_3_open_instances_are_the_toolsets_own() {
        let snap = with_open(3);
        let go = ToolsetName::parse("go").unwrap();
        let names: Vec<&str> = snap
            .open_instances(&go)
            .flatten()
            .map(InstanceName::as_str)
            .collect();
        assert_eq!(names, ["g0", "g1", "g2"]);
        assert_eq!(snap.instances(&go).len(), 3);
        for beside in ["g", "gn", "goa", "gp"] {
            let ts = ToolsetName::parse(beside).unwrap();
            assert_eq!(snap.open_instances(&ts).count(), 0, "{beside}");
        }
    }
}
