//! `mcpl inspect SPEC`: connect to a server as a host with `toolHints` and show what it
//! declares: its manifest members of RFC-014, its tools with their hints, what is open and
//! what ended. A read-only look: it opens and closes nothing.

use crate::cmd::connect::ConnectFlags;
use anyhow::{Context, bail};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{ListResult, PRESENCE_KEY, TOOLSET_KEY, VISIBLE_KEY};
use mcpl_rpc::{ClientOptions, Events, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_surface::{ServerSpec, Target};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

/// How long each request may take.
const TIMEOUT: Duration = Duration::from_secs(20);
/// The most `tools/list` pages read before giving up on a server that never stops paging.
const MAX_PAGES: usize = 1000;

/// Run `mcpl inspect SPEC`, reaching a network server with `connect`'s credentials,
/// headers and CA.
pub fn run(spec: String, connect: ConnectFlags) -> anyhow::Result<ExitCode> {
    let spec = ServerSpec::parse(&spec).with_context(|| format!("server spec `{spec}`"))?;
    let networked = matches!(spec.target, Target::WebSocket(_) | Target::Http(_));
    if connect.any() && !networked {
        bail!("`--token`, `--header` and `--ca` apply to ws(s):// and http(s):// servers");
    }
    let options = connect.client_options()?;
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    let report = runtime.block_on(inspect(spec, options))?;
    print!("{report}");
    Ok(ExitCode::SUCCESS)
}

/// Connects, reads everything a host reads at connect time, and renders it.
async fn inspect(spec: ServerSpec, options: ClientOptions) -> anyhow::Result<String> {
    // Keeps the embedded arcade alive while we talk to it.
    let mut _embedded = None;
    let transport = match &spec.target {
        Target::Command(line) => {
            Transport::child_shell(line, mcpl_rpc::transport::child::StderrMode::Discard)?
        }
        Target::WebSocket(url) => mcpl_rpc::transport::ws::connect_with(url, &options).await?,
        Target::Http(url) => mcpl_rpc::transport::http::connect_with(url, &options)?,
        Target::Embedded => {
            let (ours, theirs) = Transport::memory_pair();
            let server = mcpl_arcade::start(mcpl_arcade::ArcadeConfig::default())?;
            let runtime = server.runtime().clone();
            let connection = runtime.handle().next_connection();
            tokio::spawn(async move {
                let principal = mcpl_server::Principal::authenticated("inspect");
                let _ = runtime.serve(theirs, principal, connection).await;
            });
            _embedded = Some(server);
            ours
        }
        other => bail!("cannot inspect a server reached as {other:?}"),
    };
    let (peer, events) = Peer::start(transport, PeerConfig::default());
    let report = read_server(&spec.name, &peer, events).await;
    peer.close().await;
    report
}

async fn request(peer: &Peer, method: &str, params: Value) -> anyhow::Result<Value> {
    let answered = peer
        .request_value(method, Some(params), RequestOptions::timeout(TIMEOUT))
        .await
        .with_context(|| format!("`{method}`"))?;
    Ok(answered.value)
}

async fn read_server(name: &str, peer: &Peer, mut events: Events) -> anyhow::Result<String> {
    // Answer the server's own requests (pings, pushes) so it is never left waiting.
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let mcpl_rpc::Event::Request {
                responder, request, ..
            } = event
            {
                let _ = if request.method == methods::PING {
                    responder.respond(json!({}))
                } else {
                    responder.method_not_found()
                };
            }
        }
    });

    let init = request(
        peer,
        methods::INITIALIZE,
        json!({
            "protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
            "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
            "clientInfo": {"name": "mcpl-inspect", "version": env!("CARGO_PKG_VERSION")},
        }),
    )
    .await?;
    peer.notify_value(methods::INITIALIZED, None)?;

    let mut out = String::new();
    let info = &init["serverInfo"];
    let _ = writeln!(
        out,
        "server `{name}`: {} {} (MCP {})",
        text(&info["name"]),
        text(&info["version"]),
        text(&init["protocolVersion"])
    );
    let mcpl = &init["capabilities"]["experimental"]["mcpl"];
    let tool_hints = mcpl["toolHints"] == json!(true);
    if mcpl.is_null() {
        let _ = writeln!(out, "MCPL: not advertised (a plain MCP server)");
    } else {
        let _ = writeln!(
            out,
            "MCPL {}: toolHints {}, pushEvents {}, revision {}",
            text(&mcpl["version"]),
            tool_hints,
            mcpl["pushEvents"] == json!(true),
            text(&mcpl["revision"])
        );
    }
    if let Some(surface) = mcpl["surface"].as_object() {
        let _ = writeln!(
            out,
            "surface: {} {}",
            text(&surface["title"]),
            text(&surface["summary"])
        );
    }
    if let Some(toolsets) = mcpl["toolsets"].as_object() {
        let _ = writeln!(out, "\ndeclared toolsets:");
        for (toolset, decl) in toolsets {
            let _ = writeln!(
                out,
                "  {toolset}: {} (default {}{}{})",
                text(&decl["title"]),
                decl["default"].as_str().unwrap_or("closed"),
                if decl["instances"] == json!(true) {
                    ", instances"
                } else {
                    ""
                },
                if decl["options"].is_null() {
                    ""
                } else {
                    ", options"
                }
            );
        }
    }

    // tools/list, every page.
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut last_rev = Value::Null;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = request(peer, methods::TOOLS_LIST, params).await?;
        tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
        last_rev = page["_meta"]["mcpl/rev"].clone();
        match page.get("nextCursor") {
            Some(next) if !next.is_null() => cursor = Some(next.clone()),
            _ => break,
        }
    }
    let _ = writeln!(
        out,
        "\ntools ({}), listed at rev {}:",
        tools.len(),
        text(&last_rev)
    );
    for tool in &tools {
        let meta = &tool["_meta"];
        let presence = meta[PRESENCE_KEY].as_str();
        let toolset = meta[TOOLSET_KEY].as_str();
        let kind = match (toolset, presence) {
            (Some(t), _) => format!("dynamic, toolset {t}"),
            (None, Some("dynamic")) => "dynamic".to_owned(),
            _ => "static".to_owned(),
        };
        let hidden = if meta[VISIBLE_KEY] == json!(false) {
            ", not visible"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {} [{kind}{hidden}]: {}",
            text(&tool["name"]),
            first_sentence(&tool["description"])
        );
    }

    if tool_hints {
        let list = request(peer, methods::TOOLSETS_LIST, json!({})).await?;
        let list: ListResult =
            serde_json::from_value(list).context("the `toolsets/list` result is malformed")?;
        let _ = writeln!(out, "\nopen:");
        if list.open.is_empty() {
            let _ = writeln!(out, "  nothing");
        }
        for entry in &list.open {
            let instance = entry.instance.as_deref().map(|i| format!("/{i}"));
            let _ = writeln!(
                out,
                "  {}{} {}",
                entry.toolset,
                instance.unwrap_or_default(),
                entry.title.as_deref().unwrap_or("")
            );
        }
        for ended in list.ended.iter().flatten() {
            let _ = writeln!(
                out,
                "ended {}: {}{} {}",
                ended.id,
                ended.toolset,
                ended
                    .instance
                    .as_deref()
                    .map(|i| format!("/{i}"))
                    .unwrap_or_default(),
                ended.reason.as_deref().unwrap_or("")
            );
        }
        let hints = &list.meta.hints;
        let visible: Vec<String> = hints
            .tools
            .iter()
            .flatten()
            .filter(|t| t.visible == Some(true))
            .map(|t| match &t.instance {
                Some(i) => format!("{}@{i}", t.name),
                None => t.name.clone(),
            })
            .collect();
        let _ = writeln!(
            out,
            "full statement at rev {}: visible {}",
            hints.rev.0,
            if visible.is_empty() {
                "nothing".to_owned()
            } else {
                visible.join(", ")
            }
        );
    }
    Ok(out)
}

/// A JSON value as short text: strings bare, absent as `-`.
fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first sentence of a description, for one-line listings.
fn first_sentence(description: &Value) -> String {
    let text = text(description);
    match text.find(". ") {
        Some(end) => text[..=end].to_owned(),
        None => text,
    }
}
