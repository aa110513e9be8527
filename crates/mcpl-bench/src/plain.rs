//! Row 7, plain servers behind host-side toolsets: three plain MCP servers (no MCPL) of 60
//! tools each, in three families, served in process over stdio framing.
//!
//! - **`plain_list_bytes_vs_direct`**: the bytes of the surface's `tools/list` result (the
//!   four meta-tools; every plain tool is in a host-side toolset) against the three servers'
//!   own `tools/list` results, which a client listing them directly reads. Goal: at most 10%.
//! - **`plain_task_bytes_vs_direct`**: every byte the model reads over a scripted 20-step
//!   task (the list once, then every result), through the surface (search, open, act) against
//!   calling the tools directly. Reported.
//!
//! Both are byte counts of JSON results, so they are the same on every machine.

use std::sync::Arc;

use mcpl_rpc::{Event, Peer, PeerConfig, Transport};
use mcpl_surface::{
    BoxFuture, ConnectError, Connector, ServerSpec, Surface, SurfaceConfig, Target,
};
use serde_json::{Value, json};

use crate::error::BenchError;
use crate::report::{Figure, Unit};
use crate::surface::Client;

/// The plain servers and their tool families.
pub const SERVERS: [&str; 3] = ["repo", "files", "net"];
const FAMILIES: [&str; 3] = ["alpha", "beta", "gamma"];
const VERBS: [&str; 20] = [
    "create", "read", "update", "delete", "list", "search", "copy", "move", "rename", "merge",
    "split", "sort", "count", "export", "import", "check", "watch", "sync", "lock", "unlock",
];

/// One server's 60 tools, as its `tools/list` states them.
pub fn tools(server: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for family in FAMILIES {
        for verb in VERBS {
            out.push(json!({
                "name": format!("{family}_{verb}"),
                "description": format!(
                    "{verb} {family} items on the {server} server. Takes a target and an optional limit; returns what changed."
                ),
                "inputSchema": {"type": "object", "properties": {
                    "target": {"type": "string", "description": "What to act on."},
                    "limit": {"type": "integer", "description": "The most items to touch."}
                }, "required": ["target"]}
            }));
        }
    }
    out
}

/// What a tool answers.
fn result(server: &str, tool: &str, args: &Value) -> Value {
    let target = args["target"].as_str().unwrap_or("nothing");
    json!({"content": [{"type": "text", "text": format!("{server}: {tool} done for {target}")}]})
}

/// Serves one plain server on `transport` until it closes.
async fn serve(server: &'static str, transport: Transport) {
    let (_peer, mut events) = Peer::start(transport, PeerConfig::default());
    let list = json!({"tools": tools(server)});
    while let Some(event) = events.recv().await {
        let Event::Request {
            request, responder, ..
        } = event
        else {
            continue;
        };
        let params = request.params.clone().unwrap_or(Value::Null);
        let answer = match request.method.as_str() {
            "initialize" => json!({"protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": server, "version": "1"}}),
            "tools/list" => list.clone(),
            "tools/call" => result(
                server,
                params["name"].as_str().unwrap_or(""),
                &params["arguments"],
            ),
            _ => json!({}),
        };
        let _ = responder.respond(answer);
    }
}

/// A stdio-framed pipe to a fresh plain server.
fn pipe(server: &'static str) -> Transport {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (r, w) = tokio::io::split(theirs);
    tokio::spawn(serve(server, Transport::stdio(r, w)));
    let (r, w) = tokio::io::split(ours);
    Transport::stdio(r, w)
}

/// Reaches the plain servers by name.
struct PlainConnector;

impl Connector for PlainConnector {
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
        Box::pin(async move {
            SERVERS
                .iter()
                .find(|s| spec.name.as_str() == **s)
                .map(|s| pipe(s))
                .ok_or_else(|| ConnectError::Unsupported(format!("no plain server {}", spec.name)))
        })
    }
}

/// The scripted task: 20 calls, `(server, tool, target)`, across servers and families.
pub fn task() -> Vec<(&'static str, String, String)> {
    (0..20)
        .map(|i| {
            let server = SERVERS[(i / 7) % 3];
            let family = FAMILIES[(i / 4) % 3];
            let verb = VERBS[(i * 7) % 20];
            (server, format!("{family}_{verb}"), format!("item-{i}"))
        })
        .collect()
}

/// Bytes the model reads for a JSON result.
fn size(v: &Value) -> usize {
    v.to_string().len()
}

/// The byte counts of both paths: `(surface list, direct lists, surface task, direct task)`.
pub async fn measure_bytes() -> Result<(usize, usize, usize, usize), BenchError> {
    // Direct: one client per server.
    let mut direct_list = 0;
    let mut direct = Vec::new();
    for s in SERVERS {
        let c = Client::start(pipe(s)).await?;
        direct_list += size(&c.request("tools/list", json!({})).await?);
        direct.push((s, c));
    }
    let mut direct_task = direct_list;
    for (server, tool, target) in task() {
        let c = &direct
            .iter()
            .find(|(s, _)| *s == server)
            .ok_or_else(|| BenchError::setup("the task", "a step names no server"))?
            .1;
        let r = c
            .request(
                "tools/call",
                json!({"name": tool, "arguments": {"target": target}}),
            )
            .await?;
        direct_task += size(&r);
    }
    // Through the surface: search, open each toolset once, act.
    let specs = SERVERS
        .iter()
        .map(|s| {
            mcpl_host::ServerName::parse(s)
                .map(|name| ServerSpec::new(name, Target::Embedded))
                .map_err(|e| BenchError::setup("the plain servers", e))
        })
        .collect::<Result<_, _>>()?;
    let surface = Surface::start(SurfaceConfig::new(specs), Arc::new(PlainConnector))
        .map_err(|e| BenchError::setup("the surface host", e))?;
    let surface = Arc::new(surface);
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (r, w) = tokio::io::split(theirs);
    let serving = surface.clone();
    tokio::spawn(async move {
        let _ = serving.serve(Transport::stdio(r, w)).await;
    });
    let (r, w) = tokio::io::split(ours);
    let client = Client::start(Transport::stdio(r, w)).await?;
    let surface_list = size(&client.request("tools/list", json!({})).await?);
    let mut surface_task = surface_list;
    let mut opened = std::collections::BTreeSet::new();
    let call = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            client
                .request("tools/call", json!({"name": name, "arguments": args}))
                .await
        }
    };
    for (server, tool, target) in task() {
        let family = tool.split('_').next().unwrap_or_default().to_owned();
        if opened.insert((server, family.clone())) {
            let words = tool.replace('_', " ");
            surface_task += size(
                &call(
                    "toolsets_look",
                    json!({"query": format!("{words} {server}")}),
                )
                .await?,
            );
            let r = call(
                "toolsets_open",
                json!({"server": server, "toolset": family}),
            )
            .await?;
            if r["isError"] == json!(true) {
                return Err(BenchError::setup("the task", format!("open failed: {r}")));
            }
            surface_task += size(&r);
        }
        let r = call(
            "toolsets_act",
            json!({"server": server, "tool": tool, "args": {"target": target}}),
        )
        .await?;
        if r["isError"] == json!(true) {
            return Err(BenchError::setup("the task", format!("act failed: {r}")));
        }
        surface_task += size(&r);
    }
    Ok((surface_list, direct_list, surface_task, direct_task))
}

/// Row 7's figures.
pub async fn measure() -> Result<Vec<Figure>, BenchError> {
    let (surface_list, direct_list, surface_task, direct_task) = measure_bytes().await?;
    Ok(vec![
        Figure {
            measure: "plain_list_bytes_vs_direct: tool-list bytes, 3 plain servers × 60 tools (goal ≤ 0.10)".into(),
            ours: surface_list as f64,
            baseline_name: "the three lists read directly".into(),
            baseline: direct_list as f64,
            unit: Unit::Bytes,
            ..Default::default()
        },
        Figure {
            measure: "plain_task_bytes_vs_direct: bytes the model reads over a 20-step task (list once + every result)".into(),
            ours: surface_task as f64,
            baseline_name: "the same calls made directly".into(),
            baseline: direct_task as f64,
            unit: Unit::Bytes,
            ..Default::default()
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn plain_list_bytes_meet_the_goal_and_the_task_is_measured() {
        let (sl, dl, st, dt) = measure_bytes().await.unwrap();
        println!("list {sl} / {dl}, task {st} / {dt}");
        assert!(sl * 10 <= dl, "surface list {sl} B against {dl} B direct");
        assert!(st > sl && dt > dl, "every step read: {st} {dt}");
    }
}
