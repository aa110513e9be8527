//! Host checks about when hints apply: on read, whatever becomes of their message (v19, v24),
//! in rev order across the streams of Streamable HTTP (v36), and converging through a recovery
//! while changes are in flight (v25).

use super::agent::META_OPEN;
use super::checks::{Ctx, Run, reveal};
use super::server::{Command, World};
use crate::fixture::{ECHO, FLAT, FLAT_TOOL, INSTANCED, REVEALED};
use crate::verdict::{Step, ensure, fail};
use mcpl_protocol::methods;
use serde_json::{Value, json};

/// The toolsets and tools entries of an instance of the instanced toolset opened elsewhere.
fn opened_elsewhere(instance: &str) -> Value {
    json!({"toolsets": [{"toolset": INSTANCED, "instance": instance, "state": "open"}],
           "tools": [{"name": ECHO, "instance": instance, "visible": true}]})
}

/// Starts the agent's open of `instance` while the server holds its answer, and waits until
/// the server has the request.
async fn held_open(
    cx: &Ctx<'_>,
    run: &mut Run,
    instance: &str,
) -> Step<tokio::task::JoinHandle<Result<Value, String>>> {
    run.server
        .world
        .lock()
        .map(|mut w| w.hold_opens = true)
        .ok();
    let pending = run.agent.spawn_call(
        META_OPEN,
        json!({"toolset": INSTANCED, "instance": instance}),
    )?;
    let wait = cx.wait();
    if !run
        .server
        .wait_count(1, methods::TOOLSETS_OPEN, 1, wait)
        .await
    {
        fail!(
            "the agent asked to open `{instance}`; no toolsets/open reached the server within {wait:?}"
        );
    }
    Ok(pending)
}

/// Releases held answers and waits for the agent's open to finish.
async fn release(
    run: &mut Run,
    pending: tokio::task::JoinHandle<Result<Value, String>>,
    instance: &str,
) -> Step {
    run.server
        .world
        .lock()
        .map(|mut w| w.hold_opens = false)
        .ok();
    run.server.command(Command::Release);
    match pending.await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(why)) => fail!("the host answered the agent's open of `{instance}` with {why}"),
        Err(e) => fail!("the agent's open of `{instance}` was lost: {e}"),
    }
}

fn echo_act(instance: &str) -> Value {
    json!({"tool": ECHO, "instance": instance, "args": {"value": instance}})
}

pub(super) async fn v36(cx: &mut Ctx<'_>) -> Step {
    let world = World {
        http: true,
        ..World::new()
    };
    let mut run = cx.start(world).await?;
    run.needs(&[META_OPEN, super::agent::META_ACT])?;
    let instance = format!("early-{}", cx.nonce);
    // The open's result (rev n) waits on its POST stream ...
    let pending = held_open(cx, &mut run, &instance).await?;
    let n = run.server.rev(1);
    // ... while rev n+1 goes out on the GET stream and arrives first.
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    run.server.command(Command::Hints {
        rev: n + 1,
        body: reveal(true),
    });
    let before = run.counts(1);
    tokio::time::sleep(cx.quiet()).await;
    release(&mut run, pending, &instance).await?;
    run.expect_reaches(
        ECHO,
        echo_act(&instance),
        &format!("rev {n} (the open's result) opened `{instance}`"),
    )
    .await?;
    run.expect_reaches(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!(
            "rev {} (which arrived first and was to be held) made {REVEALED} visible",
            n + 1
        ),
    )
    .await?;
    run.expect_no_recovery(
        1,
        before,
        "on Streamable HTTP an early rev is held until the one before it arrives, with no recovery (§6.1)",
    )?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v24(cx: &mut Ctx<'_>) -> Step {
    let world = World {
        stamp_on_release: true,
        ..World::new()
    };
    let mut run = cx.start(world).await?;
    run.needs(&[META_OPEN, super::agent::META_ACT])?;
    let instance = format!("after-push-{}", cx.nonce);
    let pending = held_open(cx, &mut run, &instance).await?;
    let n = run.server.rev(1) + 1;
    run.server.world.lock().map(|mut w| w.revealed = true).ok();
    let before = run.counts(1);
    // A push at rev n the host has yet to decide on, then at once a result at rev n+1.
    run.server.command(Command::Push {
        rev: n,
        event_id: format!("v24-{}", cx.nonce),
        body: reveal(true),
    });
    release(&mut run, pending, &instance).await?;
    run.expect_reaches(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!("the push's hints (rev {n}) made {REVEALED} visible when read"),
    )
    .await?;
    run.expect_reaches(
        ECHO,
        echo_act(&instance),
        &format!("the open's result (rev {}) opened `{instance}`", n + 1),
    )
    .await?;
    run.expect_no_recovery(
        1,
        before,
        "a push's hints apply when it is read, before the result with the next rev, so there is no gap (§6.1)",
    )?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v19(cx: &mut Ctx<'_>) -> Step {
    let mut run = cx.start(World::new()).await?;
    run.needs(&[super::agent::META_ACT])?;
    let instance = format!("burst-{}", cx.nonce);
    let n = run.server.rev(1) + 1;
    {
        let mut w = run.server.world.lock().map_err(|_| {
            crate::verdict::Verdict::Fail("the scripted server's world is poisoned".into())
        })?;
        w.revealed = true;
        w.instances.push(instance.clone());
        w.flat_open = true;
    }
    let before = run.counts(1);
    // A burst of pushes about one game, back to back: a host may coalesce or defer them for
    // the agent, but each one's hints apply when it is read (§6.1, §8.5).
    let bodies = [
        reveal(true),
        opened_elsewhere(&instance),
        json!({"toolsets": [{"toolset": FLAT, "state": "open"}],
               "tools": [{"name": FLAT_TOOL, "visible": true}]}),
    ];
    for (k, body) in bodies.into_iter().enumerate() {
        run.server.command(Command::Push {
            rev: n + k as u64,
            event_id: format!("v19-{}-{k}", cx.nonce),
            body,
        });
    }
    tokio::time::sleep(cx.quiet()).await;
    run.expect_reaches(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!("the first push of the burst (rev {n}) made {REVEALED} visible"),
    )
    .await?;
    run.expect_reaches(
        ECHO,
        echo_act(&instance),
        &format!(
            "the second push of the burst (rev {}) opened `{instance}`",
            n + 1
        ),
    )
    .await?;
    run.expect_reaches(
        FLAT_TOOL,
        json!({"tool": FLAT_TOOL, "args": {}}),
        &format!("the third push of the burst (rev {}) opened {FLAT}", n + 2),
    )
    .await?;
    run.expect_no_recovery(
        1,
        before,
        "three consecutive revs leave no gap when each push's hints apply on read",
    )?;
    run.stop().await;
    Ok(())
}

pub(super) async fn v25(cx: &mut Ctx<'_>) -> Step {
    let world = World {
        flat_open: true,
        ..World::new()
    };
    let mut run = cx.start(world).await?;
    run.needs(&[super::agent::META_ACT])?;
    run.expect_reaches(
        FLAT_TOOL,
        json!({"tool": FLAT_TOOL, "args": {}}),
        &format!("{FLAT} is open at the start"),
    )
    .await?;
    let instance = format!("converge-{}", cx.nonce);
    {
        let mut w = run.server.world.lock().map_err(|_| {
            crate::verdict::Verdict::Fail("the scripted server's world is poisoned".into())
        })?;
        w.flat_open = false;
        w.revealed = true;
        w.instances.push(instance.clone());
        // While the host's recovery reads are in flight, one more change goes out between
        // tools/list and toolsets/list: no read shares a baseline with another.
        w.in_flight = Some(reveal(true));
    }
    let before = run.counts(1);
    let rev = run.server.rev(1);
    run.server.command(Command::Hints {
        rev: rev + 2,
        body: json!({"tools": []}),
    });
    run.expect_recovery(
        1,
        before,
        cx.wait(),
        &format!("rev {} skipped {}", rev + 2, rev + 1),
    )
    .await?;
    tokio::time::sleep(cx.quiet()).await;
    ensure!(
        run.server
            .world
            .lock()
            .map(|w| w.in_flight.is_none())
            .unwrap_or(false),
        "the host's recovery never read toolsets/list, so the change in flight was never sent"
    );
    run.expect_reaches(
        REVEALED,
        json!({"tool": REVEALED, "args": {}}),
        &format!("the recovery's statement states {REVEALED} visible"),
    )
    .await?;
    run.expect_reaches(
        ECHO,
        echo_act(&instance),
        &format!("the recovery's toolsets/list lists `{instance}` open"),
    )
    .await?;
    run.expect_refused(
        FLAT_TOOL,
        json!({"tool": FLAT_TOOL, "args": {}}),
        &format!("the recovery's toolsets/list no longer lists {FLAT} open (§5.3: the statement replaces what the host held)"),
    )
    .await?;
    run.stop().await;
    Ok(())
}
