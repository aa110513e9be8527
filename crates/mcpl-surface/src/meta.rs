//! The four meta-tools (§8.2, H55-H64): `toolsets_open`, `toolsets_look`, `toolsets_act`,
//! `toolsets_close`, and the routing of the servers' static tools.
//!
//! Every selector is checked once, at entry (H56). Names held by several servers are refused
//! with the candidates named (H57); names a server lacks are refused with what it has (H58).
//! Each result carries its own text, then the news the hub queued (see `news`).

use std::sync::Arc;

use mcpl_host::controller::{
    CallRequest, CloseRequest, OpenRequest, Outcome, Presence, Snapshot, Unconfirmed,
};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use serde_json::{Map, Value, json};

use crate::hub::{Hub, Inner};
use crate::link::LinkStatus;
use crate::news::place;
use crate::render;

/// `toolsets_open`.
pub const OPEN: &str = "toolsets_open";
/// `toolsets_look`.
pub const LOOK: &str = "toolsets_look";
/// `toolsets_act`.
pub const ACT: &str = "toolsets_act";
/// `toolsets_close`.
pub const CLOSE: &str = "toolsets_close";

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let mut t = Tool::new(name);
    t.description = Some(Value::String(description.to_owned()));
    t.input_schema = schema;
    t
}

/// The meta-tools' definitions: constant, whatever the servers do.
pub fn meta_tools() -> Vec<Tool> {
    let server =
        json!({"type": "string", "description": "The server, when a name is offered by several."});
    let instance = json!({"type": "string", "description": "The instance, for toolsets opened more than once (for example one game of several)."});
    vec![
        tool(
            OPEN,
            "Open a toolset (for example a new game) on a server; its tools are then used through toolsets_act. Toolsets with instances can be open several times: name each instance.",
            json!({"type": "object", "required": ["toolset"], "properties": {
                "server": server, "toolset": {"type": "string", "description": "The toolset to open."},
                "instance": instance, "options": {"type": "object", "description": "Options the toolset declares (see toolsets_look)."}}}),
        ),
        tool(
            LOOK,
            "Show the toolsets, what is open, the tools usable now, and any news since your last call; with `tool`, that tool's current arguments.",
            json!({"type": "object", "properties": {
                "server": server, "toolset": {"type": "string"}, "instance": instance,
                "tool": {"type": "string", "description": "A tool whose current definition to show."}}}),
        ),
        tool(
            ACT,
            "Call a tool of an open toolset. `args` must fit the tool's current definition (toolsets_look shows it).",
            json!({"type": "object", "required": ["tool"], "properties": {
                "server": server, "tool": {"type": "string", "description": "The tool to call."},
                "instance": instance, "args": {"type": "object", "description": "The tool's arguments."}}}),
        ),
        tool(
            CLOSE,
            "Close an open toolset or one of its instances (for example resign a game).",
            json!({"type": "object", "required": ["toolset"], "properties": {
                "server": server, "toolset": {"type": "string"}, "instance": instance}}),
        ),
    ]
}

/// Checked selectors (H56): absent or `null` is `None`; anything but a string is refused.
#[derive(Debug, Default)]
struct Selectors {
    server: Option<String>,
    toolset: Option<String>,
    instance: Option<String>,
    tool: Option<String>,
}

fn selectors(args: &Map<String, Value>) -> Result<Selectors, String> {
    let get = |key: &str| -> Result<Option<String>, String> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "`{key}` must be a string, not {}",
                mcpl_protocol::jsonrpc::kind_of(other)
            )),
        }
    };
    Ok(Selectors {
        server: get("server")?,
        toolset: get("toolset")?,
        instance: get("instance")?,
        tool: get("tool")?,
    })
}

fn error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(text)
}

/// Routes one `tools/call` from the client; `None` when the name is not ours at all.
pub(crate) async fn call(
    hub: &Arc<Hub>,
    name: &str,
    args: Map<String, Value>,
) -> Option<CallToolResult> {
    let result = match name {
        OPEN => open(hub, &args).await,
        LOOK => look(hub, &args).await,
        ACT => act(hub, &args).await,
        CLOSE => close(hub, &args).await,
        _ => return static_call(hub, name, args).await,
    };
    Some(result)
}

/// Appends the queued news to a result, as its last text block.
fn with_news(
    hub: &Hub,
    mut result: CallToolResult,
    own: Option<(&str, mcpl_host::controller::Pending)>,
) -> CallToolResult {
    let news = hub.lock().news.take(own).text();
    if !news.is_empty() {
        let text = news.trim_start_matches('\n').to_owned();
        result
            .content
            .push(mcpl_protocol::mcp::ContentBlock::text(text));
    }
    result
}

fn refuse(hub: &Hub, text: String) -> CallToolResult {
    with_news(hub, error(text), None)
}

/// The snapshot of a named server, or the refusal naming its state.
fn snapshot_of<'a>(inner: &'a Inner, server: &str) -> Result<&'a Snapshot, String> {
    let Some(link) = inner.links.get(server) else {
        let names: Vec<&str> = inner.links.keys().map(String::as_str).collect();
        return Err(format!(
            "no server named `{server}`; servers: {}",
            names.join(", ")
        ));
    };
    link.snapshot().filter(|s| s.listed()).ok_or_else(|| {
        format!(
            "server `{server}` is {} and has not been read yet",
            link.status
        )
    })
}

/// Which server offers `toolset` (H57, H58).
fn server_for_toolset(inner: &Inner, sel: Option<&str>, toolset: &str) -> Result<String, String> {
    if let Some(server) = sel {
        let snap = snapshot_of(inner, server)?;
        if snap.toolset_names().contains(toolset) {
            return Ok(server.to_owned());
        }
        let has: Vec<&str> = snap.toolset_names().into_iter().collect();
        return Err(if has.is_empty() {
            format!("server `{server}` has no toolset `{toolset}`; it has no toolsets")
        } else {
            format!(
                "server `{server}` has no toolset `{toolset}`; it has: {}",
                has.join(", ")
            )
        });
    }
    let with: Vec<&str> = inner
        .links
        .iter()
        .filter(|(_, l)| {
            l.snapshot()
                .is_some_and(|s| s.toolset_names().contains(toolset))
        })
        .map(|(n, _)| n.as_str())
        .collect();
    match with.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => Err(no_such("toolset", toolset, inner)),
        many => Err(format!(
            "toolset `{toolset}` is offered by several servers: {}; name one with `server`",
            many.join(", ")
        )),
    }
}

/// H58: what exists, when a name does not.
fn no_such(kind: &str, name: &str, inner: &Inner) -> String {
    let mut have = Vec::new();
    for (server, link) in &inner.links {
        match link.snapshot() {
            Some(s) if !s.toolset_names().is_empty() => {
                let names: Vec<&str> = s.toolset_names().into_iter().collect();
                have.push(format!("{server}: {}", names.join(", ")));
            }
            Some(_) => {}
            None => have.push(format!("{server}: not read yet ({})", link.status)),
        }
    }
    if have.is_empty() {
        format!("no {kind} `{name}`: no server presents toolsets")
    } else {
        format!("no {kind} `{name}`; toolsets: {}", have.join("; "))
    }
}

/// The open instance a call or close goes to (§4.3, vector 6).
fn instance_for(
    snap: &Snapshot,
    toolset: &str,
    sel: Option<&str>,
) -> Result<Option<String>, String> {
    if !snap.instanced(toolset) {
        return match sel {
            Some(i) => Err(format!(
                "toolset `{toolset}` has no instances, so `instance` (`{i}`) cannot be used"
            )),
            None => Ok(None),
        };
    }
    let open: Vec<&str> = snap.instances(toolset).into_iter().flatten().collect();
    match (sel, open.as_slice()) {
        (Some(i), _) if open.contains(&i) => Ok(Some(i.to_owned())),
        (Some(i), []) => Err(format!(
            "`{toolset}` has no open instance `{i}`: none is open"
        )),
        (Some(i), _) => Err(format!(
            "`{toolset}` has no open instance `{i}`; open: {}",
            open.join(", ")
        )),
        (None, [one]) => Ok(Some((*one).to_owned())),
        (None, []) => Err(format!("`{toolset}` is not open; open it with {OPEN}")),
        (None, many) => Err(format!(
            "{} `{toolset}` instances are open: {}; name one with `instance`",
            many.len(),
            many.join(", ")
        )),
    }
}

/// An instance name the RFC grammar accepts and no open instance has (H59).
fn propose(snap: &Snapshot, toolset: &str) -> String {
    let taken: Vec<&str> = snap.instances(toolset).into_iter().flatten().collect();
    let stem: String = toolset.chars().take(24).collect();
    (1..)
        .map(|n| format!("{stem}-{n}"))
        .find(|n| {
            !taken.contains(&n.as_str())
                && !snap
                    .opened_here()
                    .iter()
                    .any(|(t, i)| t == toolset && i.as_deref() == Some(n))
        })
        .unwrap_or_else(|| format!("{stem}-x"))
}

async fn open(hub: &Arc<Hub>, args: &Map<String, Value>) -> CallToolResult {
    let sel = match selectors(args) {
        Ok(s) => s,
        Err(e) => return refuse(hub, e),
    };
    let Some(toolset) = sel.toolset.clone() else {
        return refuse(hub, format!("{OPEN} needs `toolset`"));
    };
    let options = match args.get("options") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(other) => {
            return refuse(
                hub,
                format!(
                    "`options` must be an object, not {}",
                    mcpl_protocol::jsonrpc::kind_of(other)
                ),
            );
        }
    };
    let plan = {
        let inner = hub.lock();
        server_for_toolset(&inner, sel.server.as_deref(), &toolset).and_then(|server| {
            let snap = snapshot_of(&inner, &server)?;
            let instance = match (&sel.instance, snap.instanced(&toolset)) {
                (Some(i), _) => Some(i.clone()),
                (None, true) => Some(propose(snap, &toolset)),
                (None, false) => None,
            };
            Ok((server, snap.is_undeclared(&toolset), instance))
        })
    };
    let (server, undeclared, instance) = match plan {
        Ok(p) => p,
        Err(e) => return refuse(hub, e),
    };
    if undeclared {
        // §5.4: the host owns undeclared groups; nothing is sent.
        let mut outcome = Ok(());
        hub.with_controller(&server, |c| outcome = c.set_group(&toolset, true));
        return match outcome {
            Ok(()) => with_news(
                hub,
                CallToolResult::text(format!(
                    "Opened `{toolset}` on {server} (a group this host keeps)."
                )),
                None,
            ),
            Err(e) => refuse(hub, format!("server `{server}`: {e}")),
        };
    }
    let req = OpenRequest {
        toolset: toolset.clone(),
        instance: instance.clone(),
        options,
    };
    let (rx, own) = match hub.command(&server, |c, now| c.open(now, req)) {
        Ok(r) => r,
        Err(e) => return refuse(hub, e),
    };
    let outcome = Hub::answer(rx).await;
    let what = place(&toolset, instance.as_deref());
    let result = match outcome {
        Outcome::Result(v) => {
            let inst = v
                .get("instance")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or(instance);
            let at = place(&toolset, inst.as_deref());
            let title = v
                .get("title")
                .and_then(Value::as_str)
                .map(|t| format!(" “{t}”"))
                .unwrap_or_default();
            let mut text = if v.get("adopted").and_then(Value::as_bool) == Some(true) {
                format!("{at}{title} was already open: adopted it (nothing new was started).")
            } else {
                format!("Opened {at}{title} on {server}.")
            };
            for line in render::content_text(v.get("content")) {
                text.push_str(&format!("\n[{server}] {line}"));
            }
            let inner = hub.lock();
            if let Ok(snap) = snapshot_of(&inner, &server) {
                text.push_str(&render::usable_line(snap, &toolset, inst.as_deref()));
            }
            CallToolResult::text(text)
        }
        Outcome::Error(e) => error(format!("[{server}] refused to open {what}: {}", e.message)),
        Outcome::Unconfirmed(u) => error(unconfirmed(&server, &format!("opening {what}"), u)),
        _ => error(format!("opening {what}: no outcome")),
    };
    with_news(hub, result, Some((&server, own)))
}

/// H60, H61: sent but unanswered.
fn unconfirmed(server: &str, what: &str, u: Unconfirmed) -> String {
    match u {
        Unconfirmed::Timeout => format!(
            "{what} on `{server}` is unconfirmed: no answer in time. It may or may not have happened; check with {LOOK}."
        ),
        _ => format!(
            "{what} on `{server}` is unconfirmed: the connection was lost before the answer. It may or may not have happened; check with {LOOK} once `{server}` is back."
        ),
    }
}

async fn close(hub: &Arc<Hub>, args: &Map<String, Value>) -> CallToolResult {
    let sel = match selectors(args) {
        Ok(s) => s,
        Err(e) => return refuse(hub, e),
    };
    let Some(toolset) = sel.toolset.clone() else {
        return refuse(hub, format!("{CLOSE} needs `toolset`"));
    };
    let plan = {
        let inner = hub.lock();
        server_for_toolset(&inner, sel.server.as_deref(), &toolset).and_then(|server| {
            let snap = snapshot_of(&inner, &server)?;
            if snap.is_undeclared(&toolset) {
                return Ok((server, true, None));
            }
            let instance = instance_for(snap, &toolset, sel.instance.as_deref())?;
            Ok((server, false, instance))
        })
    };
    let (server, undeclared, instance) = match plan {
        Ok(p) => p,
        Err(e) => return refuse(hub, e),
    };
    if undeclared {
        let mut outcome = Ok(());
        hub.with_controller(&server, |c| outcome = c.set_group(&toolset, false));
        return match outcome {
            Ok(()) => with_news(
                hub,
                CallToolResult::text(format!("Closed `{toolset}` on {server}.")),
                None,
            ),
            Err(e) => refuse(hub, format!("server `{server}`: {e}")),
        };
    }
    let what = place(&toolset, instance.as_deref());
    let req = CloseRequest { toolset, instance };
    let (rx, own) = match hub.command(&server, |c, now| c.close(now, req)) {
        Ok(r) => r,
        Err(e) => return refuse(hub, e),
    };
    let result = match Hub::answer(rx).await {
        Outcome::Result(v) => {
            let mut text = format!("Closed {what} on {server}.");
            for line in render::content_text(v.get("content")) {
                text.push_str(&format!("\n[{server}] {line}"));
            }
            CallToolResult::text(text)
        }
        Outcome::Error(e) => error(format!("[{server}] refused to close {what}: {}", e.message)),
        Outcome::Unconfirmed(u) => error(unconfirmed(&server, &format!("closing {what}"), u)),
        _ => error(format!("closing {what}: no outcome")),
    };
    with_news(hub, result, Some((&server, own)))
}

/// Where `act` sends a dynamic tool: server, toolset and instance (H64).
fn route(
    inner: &Inner,
    sel: &Selectors,
    tool: &str,
) -> Result<(String, Option<String>, Option<String>), String> {
    let dynamic = |s: &Snapshot| {
        s.tool(tool)
            .is_some_and(|t| t.presence == Presence::Dynamic)
    };
    let server = match &sel.server {
        Some(server) => {
            let snap = snapshot_of(inner, server)?;
            if !dynamic(snap) {
                return Err(match snap.tool(tool) {
                    Some(_) => format!(
                        "`{tool}` on `{server}` is not a dynamic tool: call it directly as `{}`",
                        static_name(inner, server, tool)
                    ),
                    None => format!(
                        "server `{server}` has no dynamic tool `{tool}`; it has: {}",
                        dynamic_names(snap).join(", ")
                    ),
                });
            }
            server.clone()
        }
        None => {
            let with: Vec<&str> = inner
                .links
                .iter()
                .filter(|(_, l)| l.snapshot().is_some_and(dynamic))
                .map(|(n, _)| n.as_str())
                .collect();
            match with.as_slice() {
                [one] => (*one).to_owned(),
                [] => {
                    for (server, link) in &inner.links {
                        if link.snapshot().is_some_and(|s| s.tool(tool).is_some()) {
                            return Err(format!(
                                "`{tool}` is not a dynamic tool: call it directly as `{}`",
                                static_name(inner, server, tool)
                            ));
                        }
                    }
                    let mut have = Vec::new();
                    for (server, link) in &inner.links {
                        if let Some(s) = link.snapshot() {
                            let names = dynamic_names(s);
                            if !names.is_empty() {
                                have.push(format!("{server}: {}", names.join(", ")));
                            }
                        }
                    }
                    return Err(if have.is_empty() {
                        format!("no dynamic tool `{tool}`: no server presents toolsets")
                    } else {
                        format!(
                            "no dynamic tool `{tool}`; dynamic tools: {}",
                            have.join("; ")
                        )
                    });
                }
                many => {
                    return Err(format!(
                        "tool `{tool}` is offered by several servers: {}; name one with `server`",
                        many.join(", ")
                    ));
                }
            }
        }
    };
    let snap = snapshot_of(inner, &server)?;
    let toolset = snap.tool(tool).and_then(|t| t.toolset.clone());
    let instance = match &toolset {
        Some(ts) if snap.declared().contains_key(ts) => {
            instance_for(snap, ts, sel.instance.as_deref())?
        }
        _ => None,
    };
    if !snap.visible(tool, instance.as_deref()) {
        let at = toolset
            .as_deref()
            .map_or_else(|| server.clone(), |t| place(t, instance.as_deref()));
        let usable = toolset
            .as_deref()
            .map(|t| render::visible_tools(snap, t, instance.as_deref()))
            .unwrap_or_default();
        let open_hint = match &toolset {
            Some(ts) if !snap.is_open(ts) => format!("; `{ts}` is not open (use {OPEN})"),
            _ if usable.is_empty() => String::new(),
            _ => format!("; usable there now: {}", usable.join(", ")),
        };
        return Err(format!(
            "`{tool}` is not usable in {at} right now{open_hint}"
        ));
    }
    Ok((server, toolset, instance))
}

fn dynamic_names(snap: &Snapshot) -> Vec<String> {
    snap.tools()
        .iter()
        .filter(|t| t.presence == Presence::Dynamic)
        .map(|t| t.tool.name.clone())
        .collect()
}

fn static_name(inner: &Inner, server: &str, tool: &str) -> String {
    if inner.links.len() > 1 {
        format!("{server}__{tool}")
    } else {
        tool.to_owned()
    }
}

async fn act(hub: &Arc<Hub>, args: &Map<String, Value>) -> CallToolResult {
    let sel = match selectors(args) {
        Ok(s) => s,
        Err(e) => return refuse(hub, e),
    };
    let Some(tool) = sel.tool.clone() else {
        return refuse(hub, format!("{ACT} needs `tool`"));
    };
    let call_args = match args.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return refuse(
                hub,
                format!(
                    "`args` must be an object, not {}",
                    mcpl_protocol::jsonrpc::kind_of(other)
                ),
            );
        }
    };
    let plan = {
        let inner = hub.lock();
        route(&inner, &sel, &tool).and_then(|(server, toolset, instance)| {
            let snap = snapshot_of(&inner, &server)?;
            // §5.5, §8.2: the arguments fit the instance's own current definition.
            if let Some(def) = snap.definition(&tool, instance.as_deref()) {
                render::check_args(&def.input_schema, &Value::Object(call_args.clone())).map_err(
                    |why| {
                        format!(
                            "arguments do not fit `{tool}`{}: {why}",
                            instance
                                .as_deref()
                                .map(|i| format!(" in {i}"))
                                .unwrap_or_default()
                        )
                    },
                )?;
            }
            Ok((server, toolset, instance))
        })
    };
    let (server, _toolset, instance) = match plan {
        Ok(p) => p,
        Err(e) => return refuse(hub, e),
    };
    let req = CallRequest {
        tool: tool.clone(),
        instance,
        args: call_args,
    };
    let (rx, own) = match hub.command(&server, |c, now| c.call(now, req)) {
        Ok(r) => r,
        Err(e) => return refuse(hub, e),
    };
    let result = call_result(&server, &tool, Hub::answer(rx).await);
    with_news(hub, result, Some((&server, own)))
}

/// A `tools/call` outcome as the agent reads it; server text attributed (§10).
fn call_result(server: &str, tool: &str, outcome: Outcome) -> CallToolResult {
    match outcome {
        Outcome::Result(v) => match serde_json::from_value::<CallToolResult>(v) {
            Ok(mut r) => {
                r.meta = None; // hints are the host's, not the client's
                r
            }
            Err(e) => error(format!(
                "[{server}] answered `{tool}` with an unreadable result: {e}"
            )),
        },
        Outcome::Error(e) => error(format!("[{server}] refused `{tool}`: {}", e.message)),
        Outcome::Unconfirmed(u) => error(unconfirmed(server, &format!("`{tool}`"), u)),
        _ => error(format!("`{tool}`: no outcome")),
    }
}

/// A server's static tool, called by its model-facing name.
async fn static_call(
    hub: &Arc<Hub>,
    name: &str,
    args: Map<String, Value>,
) -> Option<CallToolResult> {
    let (server, tool) = {
        let inner = hub.lock();
        let multi = inner.links.len() > 1;
        let mut found = None;
        for (server, link) in &inner.links {
            let tool = if multi {
                match name.strip_prefix(&format!("{server}__")) {
                    Some(t) => t,
                    None => continue,
                }
            } else {
                name
            };
            let listed_static = link
                .snapshot()
                .and_then(|s| s.tool(tool))
                .is_some_and(|t| t.presence == Presence::Static);
            // A server that is down keeps its published tools: the call is refused below.
            if listed_static || link.controller.is_none() && multi {
                found = Some((server.clone(), tool.to_owned()));
                break;
            }
        }
        found?
    };
    let req = CallRequest {
        tool: tool.clone(),
        instance: None,
        args,
    };
    let (rx, own) = match hub.command(&server, |c, now| c.call(now, req)) {
        Ok(r) => r,
        Err(e) => return Some(refuse(hub, e)),
    };
    let result = call_result(&server, &tool, Hub::answer(rx).await);
    Some(with_news(hub, result, Some((&server, own))))
}

async fn look(hub: &Arc<Hub>, args: &Map<String, Value>) -> CallToolResult {
    let sel = match selectors(args) {
        Ok(s) => s,
        Err(e) => return refuse(hub, e),
    };
    // H62: re-read every connected server's toolsets before answering.
    let servers: Vec<String> = {
        let inner = hub.lock();
        inner
            .links
            .iter()
            .filter(|(n, l)| {
                l.status == LinkStatus::Up
                    && l.snapshot().is_some_and(Snapshot::hinted)
                    && sel.server.as_ref().is_none_or(|s| s == *n)
            })
            .map(|(n, _)| n.clone())
            .collect()
    };
    let mut waits = Vec::new();
    for s in &servers {
        if let Ok((rx, _)) = hub.command(s, |c, now| c.refresh(now)) {
            waits.push(rx);
        }
    }
    for rx in waits {
        let _ = Hub::answer(rx).await;
    }
    let text = {
        let inner = hub.lock();
        match &sel.tool {
            Some(tool) => route(&inner, &sel, tool).and_then(|(server, _, instance)| {
                let snap = snapshot_of(&inner, &server)?;
                Ok(render::tool_detail(
                    &server,
                    snap,
                    tool,
                    instance.as_deref(),
                ))
            }),
            None => if let Some(server) = &sel.server {
                snapshot_of(&inner, server).map(|_| ())
            } else {
                Ok(())
            }
            .and_then(|()| match (&sel.toolset, &sel.server) {
                (Some(ts), s) => server_for_toolset(&inner, s.as_deref(), ts).map(|_| ()),
                _ => Ok(()),
            })
            .map(|()| render::catalog(&inner, sel.server.as_deref(), sel.toolset.as_deref())),
        }
    };
    match text {
        Ok(t) => with_news(hub, CallToolResult::text(t), None),
        Err(e) => refuse(hub, e),
    }
}
