//! Host checks about toolsets and calls: opens it proposes or never sends, calls it routes,
//! gates or refuses, changes from elsewhere, removals, and what it tells the agent.

use super::agent::{META_ACT, META_CLOSE, META_OPEN};
use super::checks::{Ctx, reveal};
use super::server::{Command, World};
use crate::fixture::{ECHO, FLAT, FLAT_TOOL, GROUP, GROUPED, INSTANCED, REVEALED};
use crate::verdict::{Step, ensure, fail};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::check_name;
use serde_json::{Value, json};

pub(super) async fn h12(cx: &mut Ctx<'_>) -> Step {
    let mut world = World::new();
    world.tool_hints = false;
    let mut run = cx.start(world).await?;
    // Sync point: a host that forwarded the open answers the agent only once the server
    // answered it, so by the host's answer a forwarded toolsets/open has been recorded.
    if run.agent.offers(META_OPEN) {
        let _ = run
            .agent
            .call(META_OPEN, json!({"toolset": INSTANCED}))
            .await;
    }
    // A host's connect reads run beside the agent, and a `toolsets/list` sent with them has no
    // later answer it must come before: give it the suite's quiet window (ended at once if
    // it comes).
    let _ = run
        .server
        .wait_count(0, "toolsets/list", 1, cx.quiet())
        .await;
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
    run.expect_refused(
        GROUPED,
        json!({"tool": GROUPED, "args": {}}),
        &format!("the undeclared group {GROUP} is closed (§5.4)"),
    )
    .await?;
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
    // Sync point: the host answers the agent's open and close only after the server answered
    // what it forwarded, so by then any toolsets/open or close has been recorded. The check
    // ends at those answers; its positive control is a declared toolset's open below.
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
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    ensure!(
        run.server.count(1, methods::TOOLSETS_OPEN) == 1,
        "positive control: the agent's open of the declared {FLAT} must reach the server by the host's answer; it did not"
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
    let key = run.want_str("instanceMeta")?;
    let pointer = format!("/_meta/{}", key.replace('~', "~0").replace('/', "~1"));
    ensure!(
        echo.pointer(&pointer) == Some(&json!(instance)),
        "a call to a tool of an instanced toolset must carry _meta[\"{key}\"] = `{instance}` (§4.3): {echo}"
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
    run.expect_refused(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!("{REVEALED} is invisible until the push's hints"),
    )
    .await?;
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

pub(super) async fn v13(cx: &mut Ctx<'_>) -> Step {
    let mark = format!("cf-ended-{}", cx.nonce);
    let mut world = World::new();
    world.ended.push(
        json!({"id": format!("e-{}", cx.nonce), "toolset": INSTANCED,
        "instance": "gone", "reason": mark}),
    );
    let mut run = cx.start(world).await?;
    run.needs(&[META_OPEN, META_CLOSE])?;
    // Give the host a carrier on each connection: open, then (after the reconnect) close and open.
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    run.server.command(Command::Close);
    let wait = cx.wait() * 3;
    let Some(conn) = run.server.next_conn(wait).await else {
        fail!(
            "the host did not reconnect within {wait:?} after the server closed the connection; ended records are told once across reconnects (§5.3), which needs a reconnect"
        );
    };
    run.expect_recovery(conn, (0, 0), cx.wait(), "after a reconnect")
        .await?;
    // The server has seen the re-reads, but the host may not have read their answers yet: a
    // quiet window lets it, and two carriers (close, then open again) leave no notice the
    // host queued late without a result to ride on.
    tokio::time::sleep(cx.quiet()).await;
    run.agent.call(META_CLOSE, json!({"toolset": FLAT})).await?;
    tokio::time::sleep(cx.quiet()).await;
    run.agent.call(META_OPEN, json!({"toolset": FLAT})).await?;
    tokio::time::sleep(cx.quiet()).await;
    let told = run
        .agent
        .texts()
        .iter()
        .map(|t| t.matches(&mark).count())
        .sum::<usize>();
    ensure!(
        told > 0,
        "the host never told the agent the ended record e-{} (its reason `{mark}` appeared in no meta-tool result or notifications/message); an ended record is told once (§5.3, H48)",
        cx.nonce
    );
    let once =
        usize::try_from(run.want("toldTimes")?.as_u64().unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
    ensure!(
        told == once,
        "the ended record e-{} was told to the agent {told} times across a reconnect; {once} per id (§5.3, H48)",
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
    run.expect_refused(
        "cf_evil",
        json!({"tool": "cf_evil", "instance": instance, "args": {}}),
        "a hint definition cannot rename a tool (§6): `cf_evil` is no tool of the server",
    )
    .await?;
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
    for tool in run.want_strs("headerTools")? {
        ensure!(
            names.iter().any(|n| ends(n, &tool)),
            "the static tool {tool} belongs in the header: {names:?}"
        );
    }
    run.stop().await;
    Ok(())
}

pub(super) async fn v14(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[META_ACT])?;
    let instance = format!("elsewhere-{}", cx.nonce);
    run.expect_refused(
        ECHO,
        json!({"tool": ECHO, "instance": instance, "args": {"value": instance}}),
        &format!("the instance `{instance}` is not open yet"),
    )
    .await?;
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
    run.expect_refused(
        FLAT_TOOL,
        json!({"tool": FLAT_TOOL, "args": {}}),
        &format!("{FLAT}'s declaration was removed, which closes it (§5.1)"),
    )
    .await?;
    run.stop().await;
    Ok(())
}
