//! The four meta-tools (§8.2) and the servers' static tools, as the client calls them.
//!
//! Routing is the host library's: `mcpl_host::Presenter::plan` checks the selectors once
//! (H56), resolves names across servers and refuses ambiguity naming the candidates (H57,
//! H58), picks the instance (§4.3), requires visibility and checks the arguments against the
//! instance's current definition (H64, §5.5). This module runs the plan on the server's
//! controller and words the result; each result then carries the news the hub queued (see
//! `news`).

use std::sync::Arc;

use mcpl_host::controller::{
    CallRequest, CloseRequest, OpenRequest, Outcome, Presence, Snapshot, Unconfirmed,
};
use mcpl_host::presenter::{LookQuery, Plan};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::hub::{Hub, Inner};
use crate::link::LinkStatus;
use crate::news::place;
use crate::render;

pub use mcpl_host::presenter::{
    META_ACT as ACT, META_CLOSE as CLOSE, META_LOOK as LOOK, META_OPEN as OPEN,
};

fn error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(text)
}

/// Routes one `tools/call` from the client; `None` when the name is not on the list at all.
pub(crate) async fn call(
    hub: &Arc<Hub>,
    name: &str,
    args: Map<String, Value>,
) -> Option<CallToolResult> {
    let plan = {
        let inner = hub.lock();
        let listed = inner.presenter.tool_list().iter().any(|t| t.name == name);
        if !listed && ![OPEN, LOOK, ACT, CLOSE].contains(&name) {
            return None;
        }
        inner.presenter.plan(name, &Value::Object(args))
    };
    Some(match plan {
        Ok(plan) => run(hub, plan).await,
        Err(why) => {
            let notes = down_notes(hub);
            refuse(hub, format!("{why}{notes}"))
        }
    })
}

/// A refusal read from a kept snapshot says so, naming each server's state.
fn down_notes(hub: &Hub) -> String {
    let inner = hub.lock();
    inner
        .links
        .iter()
        .filter(|(_, l)| l.status != LinkStatus::Up)
        .map(|(n, l)| {
            format!(
                "\n(server `{n}` is {}; this answer uses the last state known)",
                l.status
            )
        })
        .collect()
}

async fn run(hub: &Arc<Hub>, plan: Plan) -> CallToolResult {
    match plan {
        Plan::Open { server, req } => open(hub, server, req).await,
        Plan::Close { server, req } => close(hub, server, req).await,
        Plan::OpenGroup { server, group } => set_group(hub, &server, &group, true),
        Plan::CloseGroup { server, group } => set_group(hub, &server, &group, false),
        Plan::Act { server, req } | Plan::Call { server, req } => call_tool(hub, server, req).await,
        Plan::Look { servers, query } => look(hub, servers, query).await,
        _ => refuse(
            hub,
            "this request cannot be served by the surface".to_owned(),
        ),
    }
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
        result.content.push(ContentBlock::text(text));
    }
    result
}

fn refuse(hub: &Hub, text: String) -> CallToolResult {
    with_news(hub, error(text), None)
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

fn set_group(hub: &Hub, server: &str, group: &str, open: bool) -> CallToolResult {
    // §5.4: the host owns undeclared groups; nothing is sent.
    let mut outcome = Err(mcpl_host::Error::Closed);
    hub.with_controller(server, |c| outcome = c.set_group(group, open));
    match outcome {
        Ok(()) => {
            let verb = if open { "Opened" } else { "Closed" };
            let text = format!(
                "{verb} `{group}` on {server} (a group this host keeps; nothing was sent)."
            );
            with_news(hub, CallToolResult::text(text), None)
        }
        Err(mcpl_host::Error::Closed) => refuse(hub, down(hub, server)),
        Err(e) => refuse(hub, format!("server `{server}`: {e}")),
    }
}

fn down(hub: &Hub, server: &str) -> String {
    let status = hub.lock().links.get(server).map(|l| l.status.clone());
    match status {
        Some(s) => format!("server `{server}` is {s}: nothing was sent; try again shortly"),
        None => format!("no server named `{server}`"),
    }
}

async fn open(hub: &Arc<Hub>, server: String, req: OpenRequest) -> CallToolResult {
    let toolset = req.toolset.clone();
    let instance = req.instance.clone();
    let what = place(&toolset, instance.as_deref());
    let (rx, own) = match hub.command(&server, |c, now| c.open(now, req)) {
        Ok(r) => r,
        Err(e) => return refuse(hub, e),
    };
    let result = match Hub::answer(rx).await {
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
            if let Some(snap) = inner.links.get(&server).and_then(|l| l.snapshot()) {
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

async fn close(hub: &Arc<Hub>, server: String, req: CloseRequest) -> CallToolResult {
    let what = place(&req.toolset, req.instance.as_deref());
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

async fn call_tool(hub: &Arc<Hub>, server: String, req: CallRequest) -> CallToolResult {
    let tool = req.tool.clone();
    let (rx, own) = match hub.command(&server, |c, now| c.call(now, req)) {
        Ok(r) => r,
        Err(e) => return refuse(hub, e),
    };
    let result = match Hub::answer(rx).await {
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
        Outcome::Unconfirmed(u) => error(unconfirmed(&server, &format!("`{tool}`"), u)),
        _ => error(format!("`{tool}`: no outcome")),
    };
    with_news(hub, result, Some((&server, own)))
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

/// Where `look {tool}` finds a dynamic tool: like act, but the tool need not be usable now
/// (look is how the agent finds out when it will be).
fn locate(inner: &Inner, q: &LookQuery, tool: &str) -> Result<(String, Option<String>), String> {
    let dynamic = |s: &Snapshot| {
        s.tool(tool)
            .is_some_and(|t| t.presence == Presence::Dynamic)
    };
    let with: Vec<&str> = inner
        .links
        .iter()
        .filter(|(n, l)| {
            q.server.as_ref().is_none_or(|s| s == *n) && l.snapshot().is_some_and(dynamic)
        })
        .map(|(n, _)| n.as_str())
        .collect();
    let server = match with.as_slice() {
        [one] => (*one).to_owned(),
        [] => {
            return Err(format!(
                "no dynamic tool `{tool}`{}",
                q.server
                    .as_ref()
                    .map(|s| format!(" on `{s}`"))
                    .unwrap_or_default()
            ));
        }
        many => {
            return Err(format!(
                "tool `{tool}` is on several servers: {}; name one with `server`",
                many.join(", ")
            ));
        }
    };
    let snap = snapshot_of(inner, &server)?;
    let toolset = snap.tool(tool).and_then(|t| t.toolset.clone());
    let instance = match toolset.as_deref() {
        Some(ts) if snap.instanced(ts) => {
            let open: Vec<&str> = snap.instances(ts).into_iter().flatten().collect();
            match (&q.instance, open.as_slice()) {
                (Some(i), _) if open.contains(&i.as_str()) => Some(i.clone()),
                (Some(i), _) => {
                    return Err(format!(
                        "`{ts}` has no open instance `{i}`; open: {}",
                        if open.is_empty() {
                            "none".to_owned()
                        } else {
                            open.join(", ")
                        }
                    ));
                }
                (None, [one]) => Some((*one).to_owned()),
                (None, []) => None, // the declared definition
                (None, many) => {
                    return Err(format!(
                        "`{ts}` has several open instances: {}; name one with `instance`",
                        many.join(", ")
                    ));
                }
            }
        }
        _ => None,
    };
    Ok((server, instance))
}

async fn look(hub: &Arc<Hub>, servers: Vec<String>, query: LookQuery) -> CallToolResult {
    // H62: re-read the toolsets of every connected server asked about before answering.
    let mut waits = Vec::new();
    for s in &servers {
        let up = hub
            .lock()
            .links
            .get(s)
            .is_some_and(|l| l.status == LinkStatus::Up);
        if up {
            if let Ok((rx, _)) = hub.command(s, |c, now| c.refresh(now)) {
                waits.push(rx);
            }
        }
    }
    for rx in waits {
        let _ = Hub::answer(rx).await;
    }
    let text = {
        let inner = hub.lock();
        let server_ok = match &query.server {
            Some(s) => snapshot_of(&inner, s).map(|_| ()),
            None => Ok(()),
        };
        server_ok.and_then(|()| match &query.tool {
            Some(tool) => locate(&inner, &query, tool).and_then(|(server, instance)| {
                let snap = snapshot_of(&inner, &server)?;
                Ok(render::tool_detail(
                    &server,
                    snap,
                    tool,
                    instance.as_deref(),
                ))
            }),
            None => Ok(render::catalog(
                &inner,
                query.server.as_deref(),
                query.toolset.as_deref(),
            )),
        })
    };
    match text {
        Ok(t) => with_news(hub, CallToolResult::text(t), None),
        Err(e) => refuse(hub, e),
    }
}
