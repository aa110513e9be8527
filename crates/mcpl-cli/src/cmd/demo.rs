//! `mcpl demo`: a scripted agent plays through the surface host against the embedded arcade,
//! speaking MCP over the same newline-delimited stdio framing a real client uses (in
//! process, over a pipe). It prints the transcript the model would read, then the cache
//! report: the surface's tool-list changes against two baselines measured in the same run.
//!
//! The session: open a 9x9 game against the (seeded) bot and play it to the end, choosing
//! every move from the legal-move enum; open two games at once and meet the instance error
//! and its fix; lose the connection to the arcade mid-game and recover without re-opening;
//! close.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use mcpl_arcade::ArcadeConfig;
use mcpl_rpc::{Event, Events, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_surface::{ServerSpec, Surface, SurfaceConfig};
use serde_json::{Value, json};

use super::surface::EmbeddedConnector;

/// Moves the agent prefers, strongest first; it plays the first one the enum offers.
const OPENING: &[&str] = &["E5", "C3", "G7", "C7", "G3", "E3", "E7", "C5", "G5"];
/// Moves the agent plays before it starts passing.
const OWN_MOVES: usize = 5;
/// A bound on turns, so the demo always ends.
const MAX_TURNS: usize = 80;

/// The scripted agent: an MCP client and its transcript.
struct Agent {
    peer: Peer,
    events: Events,
    pushes: usize,
    lists: Vec<String>,
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

impl Agent {
    async fn request(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let options = RequestOptions::timeout(Duration::from_secs(60));
        let answer = self
            .peer
            .request_value(method, Some(params), options)
            .await
            .with_context(|| format!("{method} failed"))?;
        Ok(answer.value)
    }

    /// `tools/list`, printed once in full and afterwards as "same as before" (or not).
    async fn list(&mut self) -> anyhow::Result<()> {
        let result = self.request("tools/list", json!({})).await?;
        let text = result["tools"].to_string();
        let names: Vec<&str> = result["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        let same = self.lists.first().map(|f| *f == text);
        println!("agent → tools/list");
        match same {
            None => println!("    {} tools: {}\n", names.len(), names.join(", ")),
            Some(true) => println!("    the same {} tools, byte for byte\n", names.len()),
            Some(false) => println!("    CHANGED: {}\n", names.join(", ")),
        }
        self.lists.push(text);
        Ok(())
    }

    /// Calls a tool, prints the call and the text the model reads; returns (text, isError).
    async fn call(&mut self, name: &str, args: Value) -> anyhow::Result<(String, bool)> {
        self.call_shown(name, args, None).await
    }

    async fn call_shown(
        &mut self,
        name: &str,
        args: Value,
        note: Option<&str>,
    ) -> anyhow::Result<(String, bool)> {
        println!(
            "agent → {name} {args}{}",
            note.map(|n| format!("   ({n})")).unwrap_or_default()
        );
        let result = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await?;
        let text: Vec<&str> = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect();
        let text = text.join("\n");
        let failed = result["isError"] == json!(true);
        let shown = abbreviate_schema(&text);
        println!(
            "{}{}",
            if failed { "    [tool error]\n" } else { "" },
            indent(&shown)
        );
        Ok((text, failed))
    }

    /// Counts the pushes already delivered, so the next wait is for a new one.
    fn drain_pushes(&mut self) {
        while let Some(event) = self.events.try_recv() {
            if matches!(&event, Event::Notification { notification, .. } if notification.method == "notifications/message")
            {
                self.pushes += 1;
            }
        }
    }

    /// Waits for the next push to reach the client (as `notifications/message`).
    async fn await_push(&mut self) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(Event::Notification { notification, .. }))
                    if notification.method == "notifications/message" =>
                {
                    self.pushes += 1;
                    return Ok(());
                }
                Ok(Some(_)) => {}
                Ok(None) => bail!("the surface closed the connection"),
                Err(_) => bail!("no push arrived within 60 s"),
            }
        }
    }

    /// The legal moves `look` shows for `play` in `instance`.
    async fn legal_moves(&mut self, instance: &str) -> anyhow::Result<Vec<String>> {
        let (text, failed) = self
            .call(
                "toolsets_look",
                json!({"tool": "play", "instance": instance}),
            )
            .await?;
        if failed {
            return Ok(Vec::new());
        }
        let schema = schema_in(&text).context("look shows the schema")?;
        Ok(schema["properties"]["move"]["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect())
    }
}

/// What `look {tool}` says act checks against: the line "toolsets_act checks against
/// (instance `x`): SCHEMA".
const CHECKS: &str = "checks against";

/// The JSON Schema `look {tool}` prints on its "checks against" line.
fn schema_in(text: &str) -> Option<Value> {
    let line = text.lines().find(|l| l.contains(CHECKS))?;
    let at = line.find(": {")? + 2;
    serde_json::from_str(&line[at..]).ok()
}

/// Shows a long legal-move enum as its length and ends; the agent reads it whole.
fn abbreviate_schema(text: &str) -> String {
    text.lines()
        .map(|line| match line.find(CHECKS).and_then(|_| line.find(": {")) {
            Some(at) => {
                let head = &line[..at + 2];
                match schema_in(line) {
                    Some(schema) => {
                        let moves: Vec<&str> = schema["properties"]["move"]["enum"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .collect();
                        if moves.len() > 8 {
                            format!(
                                "{head}{{\"move\": one of {} legal moves: {} … {}}}  [shortened for this printout]",
                                moves.len(),
                                moves[..4].join(" "),
                                moves[moves.len() - 2..].join(" ")
                            )
                        } else {
                            line.to_owned()
                        }
                    }
                    None => line.to_owned(),
                }
            }
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn heading(text: &str) {
    println!("\n=== {text} ===\n");
}

/// Plays `instance` until it ends: preferred points first, then passes. The agent learns
/// the bot's reply from the push (a log message to a plain client) and reads it, with the
/// new legal moves, from `look`.
async fn play_to_the_end(agent: &mut Agent, instance: &str) -> anyhow::Result<()> {
    let mut own = 0;
    for _ in 0..MAX_TURNS {
        let moves = agent.legal_moves(instance).await?;
        if moves.is_empty() {
            return Ok(()); // `look` said the game is over
        }
        let choice = if own < OWN_MOVES {
            OPENING
                .iter()
                .find(|m| moves.iter().any(|x| x == *m))
                .map(|m| (*m).to_owned())
        } else {
            None
        };
        agent.drain_pushes();
        let (text, failed) = match &choice {
            Some(mv) => {
                own += 1;
                let note = format!("chosen from {} legal moves", moves.len());
                let args = json!({"tool": "play", "instance": instance, "args": {"move": mv}});
                agent.call_shown("toolsets_act", args, Some(&note)).await?
            }
            None => {
                let args = json!({"tool": "pass", "instance": instance, "args": {}});
                agent.call("toolsets_act", args).await?
            }
        };
        if failed {
            bail!("the agent's move was refused");
        }
        let at = format!("`go`/`{instance}`");
        if text.contains(&format!("{at} ended")) || text.contains(&format!("{at} closed")) {
            return Ok(());
        }
        agent.await_push().await?;
    }
    let args = json!({"toolset": "go", "instance": instance});
    agent.call("toolsets_close", args).await?;
    Ok(())
}

async fn session(
    surface: &Surface,
    connector: &EmbeddedConnector,
    mut agent: Agent,
) -> anyhow::Result<Agent> {
    heading("1. What a plain MCP client sees");
    agent.list().await?;
    agent.call("toolsets_look", json!({})).await?;

    heading("2. A 9x9 game against the bot, played to the end");
    agent
        .call(
            "toolsets_open",
            json!({"toolset": "go", "instance": "vs-bot", "options": {"size": 9}}),
        )
        .await?;
    agent.list().await?;
    play_to_the_end(&mut agent, "vs-bot").await?;
    agent.list().await?;

    heading("3. Two games at once: the instance error and its fix");
    for name in ["left", "right"] {
        agent
            .call(
                "toolsets_open",
                json!({"toolset": "go", "instance": name, "options": {"size": 9}}),
            )
            .await?;
    }
    agent
        .call(
            "toolsets_act",
            json!({"tool": "play", "args": {"move": "E5"}}),
        )
        .await?;
    agent.drain_pushes();
    agent
        .call(
            "toolsets_act",
            json!({"tool": "play", "instance": "left", "args": {"move": "E5"}}),
        )
        .await?;
    agent.await_push().await?;

    heading("4. The connection to the arcade drops mid-game");
    connector.cut();
    let arcade = mcpl_host::ServerName::sanitized("arcade");
    // Cutting ends the connection's tasks at their next turn; wait until the host has seen
    // it, so the call below meets the lost link rather than racing the cut.
    let gone = arcade.clone();
    surface
        .host()
        .wait_until(
            move |p| !matches!(p.link(&gone), Some(mcpl_host::presenter::LinkState::Up)),
            Duration::from_secs(10),
        )
        .await;
    // The next call is refused with the server's state. (Should
    // a call slip out before it notices, it comes back unconfirmed, and the agent retries.)
    for _ in 0..20 {
        let (text, failed) = agent
            .call(
                "toolsets_act",
                json!({"tool": "play", "instance": "left", "args": {"move": "C3"}}),
            )
            .await?;
        if !failed || text.contains("`arcade` is") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::timeout(Duration::from_secs(30), surface.wait_connected(&arcade, 2))
        .await
        .context("the surface did not reconnect within 30 s")?;
    println!("(the surface reconnected; nothing was re-opened)\n");
    agent
        .call("toolsets_look", json!({"toolset": "go"}))
        .await?;
    let moves = agent.legal_moves("left").await?;
    if let Some(mv) = OPENING.iter().find(|m| moves.iter().any(|x| x == *m)) {
        agent.drain_pushes();
        agent
            .call(
                "toolsets_act",
                json!({"tool": "play", "instance": "left", "args": {"move": mv}}),
            )
            .await?;
        agent.await_push().await?;
    }

    heading("5. Close both games");
    agent
        .call(
            "toolsets_close",
            json!({"toolset": "go", "instance": "left"}),
        )
        .await?;
    agent
        .call(
            "toolsets_close",
            json!({"toolset": "go", "instance": "right"}),
        )
        .await?;
    agent.list().await?;
    Ok(agent)
}

/// Run `mcpl demo`.
pub fn run() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(async {
        let connector = EmbeddedConnector::new(ArcadeConfig::default());
        let surface = Arc::new(Surface::start(
            SurfaceConfig::new(vec![ServerSpec::embedded()]),
            Arc::new(connector.clone()),
        )?);
        // The agent and the surface talk MCP over a pipe, framed exactly as on stdio.
        let (agent_io, surface_io) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(surface_io);
        let s = surface.clone();
        let serving = tokio::spawn(async move { s.serve(Transport::stdio(sr, sw)).await });
        let (ar, aw) = tokio::io::split(agent_io);
        let (peer, events) = Peer::start(Transport::stdio(ar, aw), PeerConfig::default());
        let agent = Agent { peer, events, pushes: 0, lists: Vec::new() };
        println!("mcpl demo: a scripted agent, speaking plain MCP to `mcpl surface` with the embedded arcade.");
        println!("Everything indented is the text the model reads.");
        agent
            .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "demo-agent", "version": "1"}}))
            .await?;
        agent.peer.notify_value("notifications/initialized", None)?;
        let agent = session(&surface, &connector, agent).await?;
        let report = surface.cache_report();
        heading("Cache report");
        println!("The agent read {} pushes and listed tools {} times.\n", agent.pushes, agent.lists.len());
        print!("{}", report.render());
        agent.peer.close().await;
        let _ = serving.await;
        let ok = report.surface_changes == 0 && report.plain.changes > 0 && report.groups.changes > 0;
        if let Ok(surface) = Arc::try_unwrap(surface) {
            surface.shutdown().await;
        }
        anyhow::Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
    })?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(code)
}
