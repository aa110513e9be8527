//! The host checks. Each starts a scripted server and the host, plays a script, and judges the
//! requests the host sends the server and the calls it lets through.

use super::agent::{Agent, META_ACT, META_CLOSE, META_LOOK, META_OPEN};
use super::server::{Command, ScriptedServer, World};
use crate::fixture::{ECHO, FLAT, FLAT_TOOL, GROUP, GROUPED, INSTANCED, REVEAL, REVEALED};
use crate::target::{HostTarget, Options};
use crate::transcript::Transcript;
use crate::verdict::{Step, ensure, fail, skip};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::check_name;
use serde_json::{Value, json};
use std::time::Duration;

/// What a host check works with.
pub(crate) struct Ctx<'a> {
    pub target: &'a HostTarget,
    pub options: &'a Options,
    pub transcript: Transcript,
    pub nonce: u32,
}

/// A started scripted server and host, connected.
struct Run {
    server: ScriptedServer,
    agent: Agent,
}

impl Ctx<'_> {
    /// Starts the scripted server with `world` and the host, and waits for the host's connect
    /// reads (`tools/list`, and `toolsets/list` when the server has toolHints).
    async fn start(&self, world: World) -> Step<Run> {
        let hinted = world.tool_hints;
        let mut server = ScriptedServer::start(world, &self.transcript)
            .await
            .map_err(crate::verdict::Verdict::Fail)?;
        let agent = Agent::start(self.target, &server.url, self.options, &self.transcript).await?;
        let wait = self.options.wait * 2;
        if server.next_conn(wait).await.is_none() {
            fail!(
                "the host never connected to the scripted server at {} within {wait:?}",
                server.url
            );
        }
        let method = if hinted {
            methods::TOOLSETS_LIST
        } else {
            methods::TOOLS_LIST
        };
        if !server.wait_count(1, method, 1, wait).await {
            fail!("after connecting, the host did not send {method} within {wait:?} (H28)");
        }
        Ok(Run { server, agent })
    }

    fn wait(&self) -> Duration {
        self.options.wait
    }

    fn quiet(&self) -> Duration {
        self.options.quiet
    }
}

impl Run {
    /// Fails unless the host offers the meta-tools the check needs; skips then.
    fn needs(&self, tools: &[&str]) -> Step {
        let missing: Vec<_> = tools.iter().filter(|t| !self.agent.offers(t)).collect();
        if !missing.is_empty() {
            skip!("the host does not offer the meta-tools {missing:?} the host contract names");
        }
        Ok(())
    }

    /// Waits until the host re-reads both lists on `conn` (a recovery): `tools/list` and
    /// `toolsets/list` counts each grow past what they were.
    async fn expect_recovery(
        &self,
        conn: usize,
        before: (usize, usize),
        wait: Duration,
        why: &str,
    ) -> Step {
        let tl = self
            .server
            .wait_count(conn, methods::TOOLS_LIST, before.0 + 1, wait)
            .await;
        let ts = self
            .server
            .wait_count(conn, methods::TOOLSETS_LIST, before.1 + 1, wait)
            .await;
        ensure!(
            tl && ts,
            "{why}: the host should re-read tools/list and toolsets/list (§6.1 recovery); within {wait:?} it re-read tools/list: {tl}, toolsets/list: {ts}"
        );
        Ok(())
    }

    fn counts(&self, conn: usize) -> (usize, usize) {
        (
            self.server.count(conn, methods::TOOLS_LIST),
            self.server.count(conn, methods::TOOLSETS_LIST),
        )
    }

    /// Whether a `tools/call` of `name` reached the server.
    async fn call_arrives(&self, name: &str, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(s) = self
                .server
                .requests(methods::TOOLS_CALL)
                .into_iter()
                .find(|s| s.params.get("name") == Some(&json!(name)))
            {
                return Some(s.params);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn stop(self) {
        self.agent.stop().await;
    }
}

fn reveal(visible: bool) -> Value {
    json!({"tools": [{"name": REVEALED, "visible": visible}]})
}

pub(super) async fn h28(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    let seen = run.server.seen();
    let pos = |m: &str| seen.iter().position(|s| s.method == m);
    ensure!(
        pos(methods::TOOLS_LIST)
            .is_some_and(|tl| pos(methods::TOOLSETS_LIST).is_some_and(|ts| tl < ts)),
        "on connect the host reads tools/list and then toolsets/list (H28); it sent {:?}",
        seen.iter().map(|s| s.method.as_str()).collect::<Vec<_>>()
    );
    tokio::time::sleep(cx.quiet()).await;
    ensure!(
        run.server.requests(methods::TOOLSETS_OPEN).is_empty(),
        "the host opened a toolset on its own after connecting"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v09(cx: &mut Ctx<'_>) -> Step {
    let mut world = World::new();
    let kept = format!("kept-{}", cx.nonce);
    world.instances.push(kept.clone());
    let mut run = cx.start(world).await?;
    run.server.command(Command::Close);
    let wait = cx.wait() * 3;
    let Some(conn) = run.server.next_conn(wait).await else {
        skip!(
            "the host did not reconnect within {wait:?} after the server closed the connection; the host contract asks for reconnects"
        );
    };
    run.expect_recovery(conn, (0, 0), cx.wait(), "after a reconnect")
        .await?;
    tokio::time::sleep(cx.quiet()).await;
    let opens = run.server.requests(methods::TOOLSETS_OPEN);
    ensure!(
        opens.is_empty(),
        "after a reconnect the host takes toolsets/list as the truth and re-opens nothing (§5.2, H28); it sent toolsets/open {:?}",
        opens.iter().map(|s| s.params.clone()).collect::<Vec<_>>()
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v12(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    let before = run.counts(1);
    let rev = run.server.rev(1);
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Hints {
        rev: rev + 2,
        body: reveal(true),
    });
    run.expect_recovery(
        1,
        before,
        cx.wait(),
        &format!("rev {} skipped {}", rev + 2, rev + 1),
    )
    .await?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v04(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    run.needs(&[META_ACT])?;
    let rev = run.server.rev(1);
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Hints {
        rev: rev + 1,
        body: reveal(true),
    });
    tokio::time::sleep(cx.quiet()).await;
    let before = run.counts(1);
    // A second change under a rev already applied: stale, to be ignored (and, on an ordered
    // transport, a reversal that starts a recovery).
    run.server.command(Command::Hints {
        rev: rev + 1,
        body: reveal(false),
    });
    run.expect_recovery(
        1,
        before,
        cx.wait(),
        &format!("a second rev {} arrived", rev + 1),
    )
    .await?;
    let mut agent = run.agent;
    agent
        .call(META_ACT, json!({"tool": REVEALED, "args": {}}))
        .await?;
    let arrived = run_call(&run.server, REVEALED, cx.wait()).await;
    ensure!(
        arrived,
        "{REVEALED} is visible (rev {}); the stale rev that hid it must be ignored, so the agent's act must reach the server",
        rev + 1
    );
    agent.stop().await;
    Ok(())
}

async fn run_call(server: &ScriptedServer, name: &str, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        if server
            .requests(methods::TOOLS_CALL)
            .iter()
            .any(|s| s.params.get("name") == Some(&json!(name)))
        {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(super) async fn h18(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    let before = run.counts(1);
    let rev = run.server.rev(1);
    run.server.command(Command::Hints {
        rev: rev + 1,
        body: json!({"tools": [{"name": "cf_unknown", "visible": true}]}),
    });
    run.expect_recovery(1, before, cx.wait(), "a hint named a tool the list lacks")
        .await?;
    run.stop().await;
    Ok(())
}

pub(super) async fn h25(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    let (tl, ts) = run.counts(1);
    run.server
        .world
        .lock()
        .map(|mut w| w.fail_tools_list = 1)
        .ok();
    let rev = run.server.rev(1);
    run.server.command(Command::Hints {
        rev: rev + 2,
        body: reveal(false),
    });
    let wait = cx.wait();
    ensure!(
        run.server
            .wait_count(1, methods::TOOLSETS_LIST, ts + 1, wait)
            .await,
        "the recovery's tools/list failed; the host must still read toolsets/list (H25)"
    );
    let retry = wait * 3;
    ensure!(
        run.server
            .wait_count(1, methods::TOOLS_LIST, tl + 2, retry)
            .await,
        "after a failed recovery tools/list the host must retry it (H25); no retry within {retry:?}"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn h01(cx: &mut Ctx<'_>) -> Step {
    let mut world = World::new();
    world.page_size = Some(2);
    let run = cx.start(world).await?;
    let paged = run
        .server
        .requests(methods::TOOLS_LIST)
        .iter()
        .any(|s| s.params.get("cursor").is_some());
    ensure!(
        paged,
        "tools/list answered with nextCursor; the host must ask for the next page (H01)"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn h12(cx: &mut Ctx<'_>) -> Step {
    let mut world = World::new();
    world.tool_hints = false;
    let mut run = cx.start(world).await?;
    if run.agent.offers(META_OPEN) {
        let _ = run
            .agent
            .call(META_OPEN, json!({"toolset": INSTANCED}))
            .await;
    }
    tokio::time::sleep(cx.quiet()).await;
    let sent: Vec<_> = run
        .server
        .seen()
        .into_iter()
        .filter(|s| s.method.starts_with("toolsets/"))
        .map(|s| s.method)
        .collect();
    ensure!(
        sent.is_empty(),
        "the server has no toolHints, so the host must send no toolsets/* (§6.3, H12); it sent {sent:?}"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v10(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_OPEN, META_ACT])?;
    run.agent
        .call(META_ACT, json!({"tool": GROUPED, "args": {}}))
        .await?;
    if run.call_arrives(GROUPED, cx.quiet()).await.is_some() {
        fail!(
            "the undeclared group {GROUP} is closed, so the host must refuse calls to {GROUPED} itself (§5.4)"
        );
    }
    run.agent.call(META_OPEN, json!({"toolset": GROUP})).await?;
    run.agent
        .call(META_ACT, json!({"tool": GROUPED, "args": {}}))
        .await?;
    ensure!(
        run.call_arrives(GROUPED, cx.wait()).await.is_some(),
        "with the group {GROUP} open and {GROUPED} visible, the agent's act must reach the server"
    );
    let opens = run.server.requests(methods::TOOLSETS_OPEN);
    ensure!(
        opens.is_empty(),
        "the host must never send toolsets/open for an undeclared toolset (§5.4): {:?}",
        opens.iter().map(|s| s.params.clone()).collect::<Vec<_>>()
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn h29(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_OPEN, META_CLOSE])?;
    run.agent.call(META_OPEN, json!({"toolset": GROUP})).await?;
    run.agent
        .call(META_CLOSE, json!({"toolset": GROUP}))
        .await?;
    tokio::time::sleep(cx.quiet()).await;
    let sent: Vec<_> = run
        .server
        .seen()
        .into_iter()
        .filter(|s| s.method == methods::TOOLSETS_OPEN || s.method == methods::TOOLSETS_CLOSE)
        .map(|s| s.params)
        .collect();
    ensure!(
        sent.is_empty(),
        "the host must keep an undeclared group's state itself and send no toolsets/open or close for it (H29): {sent:?}"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn h59(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_OPEN])?;
    run.agent
        .call(META_OPEN, json!({"toolset": INSTANCED}))
        .await?;
    let wait = cx.wait();
    if !run
        .server
        .wait_count(1, methods::TOOLSETS_OPEN, 1, wait)
        .await
    {
        fail!(
            "the agent asked to open {INSTANCED}; no toolsets/open reached the server within {wait:?}"
        );
    }
    let open = run.server.requests(methods::TOOLSETS_OPEN).remove(0);
    let name = open.params.get("instance").and_then(Value::as_str);
    ensure!(
        name.is_some_and(|n| check_name("instance", n).is_ok()),
        "an open of an instanced toolset should propose a grammatical instance name, so a retry adopts (H59); it sent {}",
        open.params
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn h64(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_OPEN, META_ACT])?;
    let instance = format!("h64-{}", cx.nonce);
    run.agent
        .call(
            META_OPEN,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await?;
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    run.agent
        .call(
            META_ACT,
            json!({"tool": ECHO, "instance": instance, "args": {"value": instance}}),
        )
        .await?;
    let Some(echo) = run.call_arrives(ECHO, cx.wait()).await else {
        fail!("the agent's act on {ECHO} in `{instance}` never reached the server");
    };
    ensure!(
        echo.pointer("/_meta/mcpl~1instance") == Some(&json!(instance)),
        "a call to a tool of an instanced toolset must carry _meta[\"mcpl/instance\"] = `{instance}` (§4.3): {echo}"
    );
    run.agent
        .call(META_ACT, json!({"tool": FLAT_TOOL, "args": {}}))
        .await?;
    let Some(flat) = run.call_arrives(FLAT_TOOL, cx.wait()).await else {
        fail!("the agent's act on {FLAT_TOOL} never reached the server");
    };
    ensure!(
        flat.pointer("/_meta/mcpl~1instance").is_none(),
        "a call to a toolset without instances must not carry mcpl/instance (§4.3): {flat}"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v11(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_ACT])?;
    let rev = run.server.rev(1);
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Push {
        rev: rev + 1,
        event_id: format!("v11-{}", cx.nonce),
        body: reveal(true),
    });
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(META_ACT, json!({"tool": REVEALED, "args": {}}))
        .await?;
    ensure!(
        run.call_arrives(REVEALED, cx.wait()).await.is_some(),
        "a push's hints apply when it is read, whatever the host decides about the push (§6.1); the act on {REVEALED} never reached the server"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v29(cx: &mut Ctx<'_>) -> Step {
    let run = cx.start(World::new()).await?;
    let rev = run.server.rev(1);
    let event_id = format!("dup-{}", cx.nonce);
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Push {
        rev: rev + 1,
        event_id: event_id.clone(),
        body: reveal(true),
    });
    tokio::time::sleep(cx.quiet()).await;
    let before = run.counts(1);
    run.server.command(Command::Push {
        rev: rev + 2,
        event_id,
        body: reveal(false),
    });
    run.expect_recovery(
        1,
        before,
        cx.wait(),
        &format!(
            "a duplicate eventId carried rev {}, above the last applied rev (H17)",
            rev + 2
        ),
    )
    .await?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v13(cx: &mut Ctx<'_>) -> Step {
    let mark = format!("cf-ended-{}", cx.nonce);
    let mut world = World::new();
    world.ended.push(
        json!({"id": format!("e-{}", cx.nonce), "toolset": INSTANCED,
        "instance": "gone", "reason": mark}),
    );
    let mut run = cx.start(world).await?;
    run.needs(&[META_OPEN, META_CLOSE])?;
    // Give the host a carrier on each connection: open, then (after the reconnect) close.
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    run.server.command(Command::Close);
    let wait = cx.wait() * 3;
    let Some(conn) = run.server.next_conn(wait).await else {
        skip!("the host did not reconnect within {wait:?}; v13 needs a reconnect");
    };
    run.expect_recovery(conn, (0, 0), cx.wait(), "after a reconnect")
        .await?;
    run.agent.call(META_CLOSE, json!({"toolset": FLAT})).await?;
    tokio::time::sleep(cx.quiet()).await;
    let told = run
        .agent
        .texts()
        .iter()
        .map(|t| t.matches(&mark).count())
        .sum::<usize>();
    if told == 0 {
        skip!(
            "the host never showed the ended record's reason to the agent (in a meta-tool result or notifications/message), so telling cannot be counted"
        );
    }
    ensure!(
        told == 1,
        "the ended record e-{} was told to the agent {told} times across a reconnect; once per id (§5.3, H48)",
        cx.nonce
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v20(cx: &mut Ctx<'_>) -> Step {
    let mut world = World::new();
    world.echo_definition = Some(
        json!({"name": "cf_evil", "description": "Renamed by a hint.",
        "inputSchema": {"type": "object"}, "_meta": {"mcpl/class": "other"}}),
    );
    let mut run = cx.start(world).await?;
    run.needs(&[META_OPEN, META_ACT])?;
    let instance = format!("v20-{}", cx.nonce);
    run.agent
        .call(
            META_OPEN,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await?;
    run.agent
        .call(
            META_ACT,
            json!({"tool": "cf_evil", "instance": instance, "args": {}}),
        )
        .await?;
    if run.call_arrives("cf_evil", cx.quiet()).await.is_some() {
        fail!("a hint definition cannot rename a tool (§6): the host called `cf_evil`");
    }
    run.agent
        .call(
            META_ACT,
            json!({"tool": ECHO, "instance": instance, "args": {}}),
        )
        .await?;
    ensure!(
        run.call_arrives(ECHO, cx.wait()).await.is_some(),
        "the tool keeps its listed name {ECHO}; the act on it must reach the server"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v21(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.agent.refresh_header().await?;
    let names: Vec<String> = run
        .agent
        .header
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let ends = |n: &str, tool: &str| n == tool || n.ends_with(&format!("__{tool}"));
    ensure!(
        !names.iter().any(|n| ends(n, ECHO)),
        "{ECHO} has mcpl/toolset and mcpl/presence static; it is dynamic and stays out of the header (§4.1, H10): {names:?}"
    );
    ensure!(
        names.iter().any(|n| ends(n, REVEAL)),
        "the static tool {REVEAL} belongs in the header: {names:?}"
    );
    let _ = META_LOOK;
    run.stop().await;
    Ok(())
}

/// How many `tools/call`s of `name` reached the server.
fn calls_of(server: &ScriptedServer, name: &str) -> usize {
    server
        .requests(methods::TOOLS_CALL)
        .iter()
        .filter(|s| s.params.get("name") == Some(&json!(name)))
        .count()
}

pub(super) async fn v14(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_ACT])?;
    let instance = format!("elsewhere-{}", cx.nonce);
    run.server
        .world
        .lock()
        .map(|mut w| w.instances.push(instance.clone()))
        .ok();
    let rev = run.server.rev(1);
    // Another connection of the principal opened an instance: state, not a suggestion.
    run.server.command(Command::Hints {
        rev: rev + 1,
        body: json!({"toolsets": [{"toolset": INSTANCED, "instance": instance, "state": "open"}],
                     "tools": [{"name": ECHO, "instance": instance, "visible": true}]}),
    });
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(
            META_ACT,
            json!({"tool": ECHO, "instance": instance, "args": {"value": instance}}),
        )
        .await?;
    let Some(call) = run.call_arrives(ECHO, cx.wait()).await else {
        fail!(
            "an instance opened on another connection arrives as state (§5.6); the host should let the agent act in `{instance}`, but no call reached the server"
        );
    };
    ensure!(
        call.pointer("/_meta/mcpl~1instance") == Some(&json!(instance)),
        "the call should name the instance `{instance}`: {call}"
    );
    ensure!(
        run.server.requests(methods::TOOLSETS_OPEN).is_empty(),
        "the instance was already open for the principal; the host must not open it again"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v31(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_OPEN, META_ACT])?;
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    run.agent
        .call(META_ACT, json!({"tool": FLAT_TOOL, "args": {}}))
        .await?;
    if run.call_arrives(FLAT_TOOL, cx.wait()).await.is_none() {
        fail!("with {FLAT} open the agent's act on {FLAT_TOOL} never reached the server");
    }
    run.server
        .world
        .lock()
        .map(|mut w| {
            w.flat_declared = false;
            w.flat_open = false;
        })
        .ok();
    run.server.command(Command::Notify {
        method: methods::MANIFEST_CHANGED,
        params: json!({"revision": format!("sha256:conformance-{}", cx.nonce), "domains": ["toolsets"]}),
    });
    let wait = cx.wait();
    ensure!(
        run.server.wait_count(1, methods::MANIFEST, 1, wait).await,
        "after mcpl/manifestChanged naming toolsets the host must fetch mcpl/manifest before acting on it (§5.1, MCPL §17.3); none within {wait:?}"
    );
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(META_ACT, json!({"tool": FLAT_TOOL, "args": {}}))
        .await?;
    tokio::time::sleep(cx.quiet()).await;
    ensure!(
        calls_of(&run.server, FLAT_TOOL) == 1,
        "{FLAT}'s declaration was removed, which closes it (§5.1); the host must refuse {FLAT_TOOL} now, yet the call reached the server"
    );
    run.stop().await;
    Ok(())
}

pub(super) async fn v37(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_ACT])?;
    let rev = run.server.rev(1);
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Hints {
        rev: rev + 1,
        body: reveal(true),
    });
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(META_ACT, json!({"tool": REVEALED, "args": {}}))
        .await?;
    if run.call_arrives(REVEALED, cx.wait()).await.is_none() {
        fail!(
            "{REVEALED} was made visible (rev {}), yet the agent's act never reached the server",
            rev + 1
        );
    }
    // The server's state changes with nothing said; a gap makes the host re-read, and the
    // statement it reads no longer states the tool.
    run.server.world.lock().map(|mut w| w.revealed = false).ok();
    let before = run.counts(1);
    run.server.command(Command::Hints {
        rev: rev + 3,
        body: json!({}),
    });
    run.expect_recovery(1, before, cx.wait(), "a gap").await?;
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(META_ACT, json!({"tool": REVEALED, "args": {}}))
        .await?;
    tokio::time::sleep(cx.quiet()).await;
    ensure!(
        calls_of(&run.server, REVEALED) == 1,
        "the full statement no longer stated {REVEALED} visible, which makes it invisible (§5.3); the host must refuse it, yet the call reached the server"
    );
    run.stop().await;
    Ok(())
}
