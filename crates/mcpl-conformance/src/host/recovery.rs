//! Host checks about revs and recovery: connect reads, gaps, reversals, duplicates, unknown
//! tools, failed reads, paging, statements and reconnects.

use super::agent::META_ACT;
use super::checks::{Ctx, reveal, run_call};
use super::server::{Command, World};
use crate::fixture::{ECHO, INSTANCED, REVEALED};
use crate::verdict::{Step, ensure, fail};
use mcpl_protocol::methods;
use serde_json::json;

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
        fail!(
            "the host did not reconnect within {wait:?} after the server closed the connection; a host reconnects and adopts what the server kept (§5.2, H28)"
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
    run.expect_refused(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!("the full statement no longer states {REVEALED} visible, which makes it invisible (§5.3)"),
    )
    .await?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v35(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[super::agent::META_OPEN, META_ACT])?;
    run.server
        .world
        .lock()
        .map(|mut w| w.hold_opens = true)
        .ok();
    let instance = format!("late-{}", cx.nonce);
    // The server sits on the open; the host gives up on it and answers the agent.
    let asked = run
        .agent
        .call_patiently(
            super::agent::META_OPEN,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await;
    if let Err(crate::verdict::Verdict::Fail(why)) = asked {
        fail!(
            "the host never gave up on a toolsets/open the server sat on, within {:?} ({why}); a host times its requests out and still applies a late result (§6.1, H14)",
            super::agent::PATIENCE
        );
    }
    ensure!(
        run.server.count(1, methods::TOOLSETS_OPEN) == 1,
        "the agent's open should have sent exactly one toolsets/open"
    );
    run.expect_refused(
        ECHO,
        json!({"tool": ECHO, "instance": instance, "args": {"value": instance}}),
        &format!("the open of `{instance}` has no result yet, so `{instance}` is not open"),
    )
    .await?;
    run.server
        .world
        .lock()
        .map(|mut w| w.hold_opens = false)
        .ok();
    run.server.command(Command::Release);
    tokio::time::sleep(cx.quiet()).await;
    run.agent
        .call(
            META_ACT,
            json!({"tool": ECHO, "instance": instance, "args": {"value": instance}}),
        )
        .await?;
    ensure!(
        run.call_arrives(ECHO, cx.wait()).await.is_some(),
        "the late toolsets/open result opened `{instance}` with its hints; a host applies hints from results read after its timeout (§6.1, H14), so the act must reach the server"
    );
    run.stop().await;
    Ok(())
}
