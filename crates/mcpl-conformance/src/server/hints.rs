//! Server checks about hint changes: carriers, revs, tailoring and presence moves.

use super::conn::{Profile, PushReply, Seen};
use super::ctx::{Ctx, list_tools, require_tools, toolsets_list};
use super::statement;
use super::toolsets::{close, open};
use crate::fixture::{
    DEFAULT_OPEN, ECHO, FINISH, FLAT, FLAT_TOOL, GROUPED, INSTANCED, LATER, MOVE, MOVER,
    OPENED_TOOL, REVEAL, REVEALED, TOOLS,
};
use crate::verdict::{Step, ensure, fail};
use crate::wire::{
    brief, has_hint_meta, is_error, list_rev, listed, listed_tools, result_hints, rev_of,
    states_visible, tool_entry, tool_meta,
};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{PRESENCE_KEY, TOOLSET_KEY, VISIBLE_KEY};
use serde_json::{Value, json};

/// Whether a message states `REVEALED`'s visibility.
fn about_revealed(seen: &Seen) -> bool {
    seen.hints()
        .is_some_and(|h| tool_entry(h, REVEALED, None).is_some())
}

pub(super) async fn v01(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::hinted()).await?;
    conn.require_hints()?;
    let first = list_tools(&mut conn).await?;
    if listed(&first, REVEAL).is_some() {
        conn.call(REVEAL, json!({"visible": false}), None).await?;
    }
    let tools = list_tools(&mut conn).await?;
    require_tools(&tools, &TOOLS)?;
    let required = cx.want().strs("listedTools")?;
    let required: Vec<&str> = required.iter().map(String::as_str).collect();
    require_tools(&tools, &required)?;
    // The invisible tool and the closed toolset's tools are listed all the same.
    let revealed = listed(&tools, REVEALED).unwrap_or(&Value::Null);
    ensure!(
        tool_meta(revealed, VISIBLE_KEY) == Some(&json!(false)),
        "{REVEALED} is invisible at the start, so tools/list should list it with mcpl/visible: false; it lists {}",
        brief(revealed)
    );
    for (tool, toolset) in [
        (ECHO, INSTANCED),
        (FINISH, INSTANCED),
        (FLAT_TOOL, FLAT),
        (OPENED_TOOL, DEFAULT_OPEN),
    ] {
        let t = listed(&tools, tool).unwrap_or(&Value::Null);
        ensure!(
            tool_meta(t, TOOLSET_KEY) == Some(&json!(toolset)),
            "{tool} should carry mcpl/toolset: {toolset}; it lists {}",
            brief(t)
        );
    }
    // Every tool any statement or hint names is listed, and listed as dynamic (§4.1): a tool
    // of a toolset, or `mcpl/presence: dynamic`.
    let instance = cx.name("v01");
    let opened = open(&mut conn, &instance).await?;
    conn.request(methods::TOOLSETS_OPEN, json!({"toolset": FLAT}))
        .await?;
    conn.call(REVEAL, json!({"visible": true}), None).await?;
    let list = toolsets_list(&mut conn).await?;
    let tools = list_tools(&mut conn).await?;
    let mut named: Vec<String> = Vec::new();
    for h in [result_hints(&opened), result_hints(&list)]
        .into_iter()
        .flatten()
    {
        for e in crate::wire::tool_entries(h) {
            if let Some(n) = e.get("name").and_then(Value::as_str) {
                named.push(n.to_owned());
            }
        }
    }
    for name in [ECHO, FINISH, FLAT_TOOL, OPENED_TOOL, GROUPED, REVEALED] {
        ensure!(
            named.iter().any(|n| n == name),
            "with everything open, the hints name no entry for the dynamic tool {name}: {}",
            brief(&list)
        );
    }
    for name in &named {
        let Some(t) = listed(&tools, name) else {
            fail!(
                "the hints name {name}, but tools/list does not list it (§4.1: every tool is listed)"
            );
        };
        let dynamic = tool_meta(t, TOOLSET_KEY).is_some()
            || tool_meta(t, PRESENCE_KEY) == Some(&json!("dynamic"));
        ensure!(
            dynamic,
            "the hints state {name}'s visibility, so it is dynamic, but tools/list presents it as static: {}",
            brief(t)
        );
    }
    close(&mut conn, &instance).await?;
    conn.request(methods::TOOLSETS_CLOSE, json!({"toolset": FLAT}))
        .await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v02(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let before = conn.last_rev();
    let visible = cx.want().bool("revealedVisible")?;
    let step = cx.want().u64("revStep")?;
    let result = conn.call(REVEAL, json!({"visible": true}), None).await?;
    ensure!(!is_error(&result), "{REVEAL} failed: {}", brief(&result));
    let Some(h) = result_hints(&result) else {
        fail!(
            "the {REVEAL} result carries no mcpl/hints, though the call made {REVEALED} visible (§6.2)"
        );
    };
    ensure!(
        states_visible(h, REVEALED, None) == Some(visible),
        "the {REVEAL} result's hints do not state {REVEALED} visible: {visible}: {}",
        brief(h)
    );
    ensure!(
        rev_of(h) == Some(before + step),
        "the {REVEAL} result's hints carry rev {:?}; rev {} was next",
        rev_of(h),
        before + step
    );
    // Sync point: by the answer to a later request, anything the server sent for the call
    // has been read, and any hint batch it issued shows in the list's rev.
    let synced = conn.sync().await?;
    if let Some(seen) = conn.inbox().iter().find(|s| s.hints().is_some()) {
        fail!(
            "a call's consequences belong in its result only (§6.2), but the server also sent {}",
            seen.describe()
        );
    }
    ensure!(
        synced == rev_of(h),
        "a call's consequences belong in its result only (§6.2): the result took rev {:?}, but by the next tools/list the server had taken rev {synced:?}",
        rev_of(h)
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v03(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let result = conn.call(LATER, json!({"visible": true}), None).await?;
    ensure!(!is_error(&result), "{LATER} failed: {}", brief(&result));
    let wait = cx.options.wait;
    let Some(seen) = conn.wait_for(wait, about_revealed).await else {
        fail!(
            "{LATER} should change {REVEALED}'s visibility as something else's consequence, but no hints about it arrived within {wait:?}"
        );
    };
    let carrier = cx.want().str("carrier")?;
    ensure!(
        seen.carrier() == carrier,
        "with pushEvents granted, something else's change should ride a {carrier} (§6.2); it came as {}",
        seen.describe()
    );
    let Seen::Push { params } = &seen else {
        fail!(
            "with pushEvents granted, something else's change should ride a push/event (§6.2); it came as {}",
            seen.describe()
        );
    };
    ensure!(
        params.get("eventId").is_some_and(Value::is_string),
        "the push/event has no eventId: {}",
        brief(params)
    );
    let h = seen.hints().unwrap_or(&Value::Null);
    let visible = cx.want().bool("revealedVisible")?;
    ensure!(
        states_visible(h, REVEALED, None) == Some(visible),
        "the push's hints do not state {REVEALED} visible: {}",
        brief(h)
    );
    let quiet = cx.options.quiet;
    if let Some(again) = conn.wait_for(quiet, about_revealed).await {
        fail!(
            "the change was stated again after its push: {}",
            again.describe()
        );
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v04(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v04");
    conn.request(
        methods::TOOLSETS_OPEN,
        json!({"toolset": INSTANCED, "instance": instance}),
    )
    .await?;
    conn.call(REVEAL, json!({"visible": true}), None).await?;
    conn.call(LATER, json!({"visible": false}), None).await?;
    let wait = cx.options.wait;
    if conn.wait_for(wait, about_revealed).await.is_none() {
        fail!("no push/event or tools/hints followed {LATER} within {wait:?}");
    }
    conn.request(
        methods::TOOLSETS_CLOSE,
        json!({"toolset": INSTANCED, "instance": instance}),
    )
    .await?;
    toolsets_list(&mut conn).await?;
    conn.check_revs()?;
    let carriers = conn.revs().len();
    let least = usize::try_from(cx.want().u64("leastHintedMessages")?).unwrap_or(usize::MAX);
    ensure!(
        carriers >= least,
        "expected six hinted messages (list, open, call, push, close, list); read {carriers}: {:?}",
        conn.revs()
    );
    conn.close().await;
    Ok(())
}

pub(super) async fn v07(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v07");
    let open = conn
        .request(
            methods::TOOLSETS_OPEN,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await?;
    let h = result_hints(&open).unwrap_or(&Value::Null);
    let def = tool_entry(h, ECHO, Some(&instance)).and_then(|e| e.get("definition"));
    let member = cx.want().str("definitionHas")?;
    ensure!(
        def.is_some_and(|d| d.get(&member).is_some()),
        "the open's hints carry no per-instance definition of {ECHO} (with {member}) for `{instance}`: {}",
        brief(h)
    );
    // Sync point: by the answer to a later request, a list_changed sent for the open has
    // been read.
    conn.sync().await?;
    if let Some(seen) = conn.inbox().iter().find(
        |s| matches!(s, Seen::Notification { method, .. } if method == methods::TOOLS_LIST_CHANGED),
    ) {
        fail!(
            "a dynamic tool's definition travels in hints; the server sent {} as well",
            seen.describe()
        );
    }
    conn.request(
        methods::TOOLSETS_CLOSE,
        json!({"toolset": INSTANCED, "instance": instance}),
    )
    .await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v08(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::plain()).await?;
    let tools = list_tools(&mut conn).await?;
    for name in [REVEAL, LATER] {
        if listed(&tools, name).is_some() {
            let result = conn.call(name, json!({"visible": true}), None).await?;
            if let Some(h) = result_hints(&result) {
                fail!(
                    "the {name} result carries mcpl/hints for a host without toolHints (§6.3): {}",
                    brief(h)
                );
            }
        }
    }
    if listed(&tools, FLAT_TOOL).is_some() {
        let result = conn.call(FLAT_TOOL, json!({}), None).await?;
        if let Some(h) = result_hints(&result) {
            fail!("the {FLAT_TOOL} result carries mcpl/hints: {}", brief(h));
        }
    }
    let quiet = cx.options.quiet.max(cx.options.wait / 3);
    conn.watch(quiet).await;
    for seen in conn.inbox() {
        if let Seen::Notification { method, .. } = seen
            && method == methods::TOOLS_HINTS
        {
            fail!(
                "the server sent tools/hints to a host without toolHints (§6.3): {}",
                seen.describe()
            );
        }
        if let Seen::Push { params } = seen
            && params.get("hints").is_some()
        {
            fail!(
                "the server put hints on a push to a host without toolHints (§6.3): {}",
                seen.describe()
            );
        }
    }
    conn.close().await;
    Ok(())
}

pub(super) async fn v11(cx: &mut Ctx<'_>) -> Step {
    let profile = Profile {
        push_reply: PushReply::Refuse,
        ..Profile::hinted()
    };
    let (mut conn, _) = cx.connected(profile).await?;
    conn.call(LATER, json!({"visible": true}), None).await?;
    let wait = cx.options.wait;
    let Some(push) = conn.wait_for(wait, about_revealed).await else {
        fail!("no hints about {REVEALED} arrived within {wait:?} after {LATER}");
    };
    let carrier = cx.want().str("carrier")?;
    ensure!(
        push.carrier() == carrier,
        "the change should ride a {carrier} with pushEvents granted; it came as {}",
        push.describe()
    );
    let quiet = cx.options.quiet;
    if let Some(again) = conn.wait_for(quiet, about_revealed).await {
        fail!(
            "the push was refused, and the server restated its hints (§6.1: a refused push is never restated): {}",
            again.describe()
        );
    }
    let list = toolsets_list(&mut conn).await?;
    let h = result_hints(&list).unwrap_or(&Value::Null);
    let visible = cx.want().bool("statedVisible")?;
    ensure!(
        states_visible(h, REVEALED, None) == Some(visible),
        "after the refused push the server's statement should still show {REVEALED} visible: {visible}: {}",
        brief(h)
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v15(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, tools) = cx.connected(Profile::hinted()).await?;
    require_tools(&tools, &[MOVE, MOVER])?;
    let presence = |tools: &Value| {
        listed(tools, MOVER)
            .and_then(|t| tool_meta(t, PRESENCE_KEY))
            .and_then(Value::as_str)
            .unwrap_or("static")
            .to_owned()
    };
    let (from, to) = (
        cx.want().str("startPresence")?,
        cx.want().str("movedPresence")?,
    );
    ensure!(
        presence(&tools) == from,
        "{MOVER} should start {from}; tools/list says {}",
        presence(&tools)
    );
    let moved = conn
        .call(MOVE, json!({"presence": "dynamic"}), None)
        .await?;
    let h = result_hints(&moved).unwrap_or(&Value::Null);
    ensure!(
        tool_entry(h, MOVER, None).and_then(|e| e.get("presence")) == Some(&json!(to)),
        "the {MOVE} result should carry a hint entry moving {MOVER} to {to}: {}",
        brief(&moved)
    );
    // §4.2: until the host applies the move, the tool keeps working where it is.
    let r = conn.call(MOVER, json!({}), None).await?;
    ensure!(
        !is_error(&r),
        "{MOVER} stopped working right after its move (§4.2): {}",
        brief(&r)
    );
    let after = list_tools(&mut conn).await?;
    ensure!(
        presence(&after) == to,
        "tools/list should show {MOVER} as {to} after the move; it says {}",
        presence(&after)
    );
    conn.call(MOVE, json!({"presence": "static"}), None).await?;
    let back = list_tools(&mut conn).await?;
    ensure!(
        presence(&back) == from,
        "tools/list should show {MOVER} {from} after moving it back; it says {}",
        presence(&back)
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v27(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::hinted()).await?;
    conn.require_hints()?;
    let expect_list_rev = |conn_rev: u64, tools: &Value, when: &str| -> Step {
        ensure!(
            list_rev(tools) == Some(conn_rev),
            "tools/list {when} carries _meta[\"mcpl/rev\"] {:?}; the last rev taken was {conn_rev} (§6.1)",
            tools.pointer("/_meta/mcpl~1rev")
        );
        Ok(())
    };
    let tools = list_tools(&mut conn).await?;
    expect_list_rev(0, &tools, "before any rev")?;
    toolsets_list(&mut conn).await?;
    let tools = list_tools(&mut conn).await?;
    expect_list_rev(conn.last_rev(), &tools, "after toolsets/list")?;
    let instance = cx.name("v27");
    let open = conn
        .request(
            methods::TOOLSETS_OPEN,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await?;
    ensure!(
        result_hints(&open).is_some(),
        "the toolsets/open result carries no hints"
    );
    let tools = list_tools(&mut conn).await?;
    expect_list_rev(conn.last_rev(), &tools, "after toolsets/open")?;
    let close = conn
        .request(
            methods::TOOLSETS_CLOSE,
            json!({"toolset": INSTANCED, "instance": instance}),
        )
        .await?;
    ensure!(
        result_hints(&close).is_some(),
        "the toolsets/close result carries no hints"
    );
    let tools = list_tools(&mut conn).await?;
    expect_list_rev(conn.last_rev(), &tools, "after toolsets/close")?;
    conn.check_revs()?;
    ensure!(
        conn.revs().len() == 3,
        "expected exactly three hinted results (list, open, close): {:?}",
        conn.revs()
    );
    conn.close().await;
    Ok(())
}

pub(super) async fn v28(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let params = crate::wire::call_params(REVEAL, json!({"visible": true, "delayMs": 200}), None);
    let pending = conn.start_call(params)?;
    let id = pending.id().clone();
    pending.cancel("cancelled by the conformance suite");
    conn.note_cancel(&id);
    let wait = cx.options.wait;
    let Some(seen) = conn.wait_for(wait, about_revealed).await else {
        fail!(
            "the cancelled {REVEAL} call's consequence (making {REVEALED} visible) never arrived: neither tools/hints nor a late result carried it within {wait:?} (§6.1)"
        );
    };
    let h = seen.hints().unwrap_or(&Value::Null);
    let visible = cx.want().bool("revealedVisible")?;
    ensure!(
        states_visible(h, REVEALED, None) == Some(visible),
        "the hints after the cancelled call do not state {REVEALED} visible: {visible}: {}",
        seen.describe()
    );
    let carriers = cx.want().strs("carriers")?;
    ensure!(
        carriers.contains(&seen.carrier()),
        "the cancelled call's consequences should go as one of {carriers:?}: {}",
        seen.describe()
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v29(cx: &mut Ctx<'_>) -> Step {
    let profile = Profile {
        push_reply: PushReply::Error,
        ..Profile::hinted()
    };
    let (mut conn, _) = cx.connected(profile).await?;
    conn.call(LATER, json!({"visible": true}), None).await?;
    let wait = cx.options.wait;
    let Some(first) = conn.wait_for(wait, about_revealed).await else {
        fail!("no hints about {REVEALED} arrived within {wait:?} after {LATER}");
    };
    let carrier = cx.want().str("carrier")?;
    ensure!(
        first.carrier() == carrier,
        "the change should ride a {carrier} with pushEvents granted; it came as {}",
        first.describe()
    );
    let Seen::Push { params } = &first else {
        fail!(
            "the change should ride a push/event with pushEvents granted; it came as {}",
            first.describe()
        );
    };
    let event_id = params.get("eventId").cloned();
    // The push failed; a retry may resend its content under the same eventId, never its hints.
    let quiet = cx.options.quiet.max(wait / 3);
    conn.watch(quiet).await;
    for seen in conn.inbox() {
        if about_revealed(seen) && !matches!(seen, Seen::Push { .. }) {
            fail!(
                "after a failed push the server sent its hints again (§6.1: a push carrying hints is never retried, and its rev is spent): {}",
                seen.describe()
            );
        }
        if let Seen::Push { params } = seen
            && params.get("hints").is_some()
        {
            let same = params.get("eventId").cloned() == event_id;
            fail!(
                "after a failed push with hints the server sent another push carrying hints{} (§6.1: never retried with its hints): {}",
                if same { " under the same eventId" } else { "" },
                seen.describe()
            );
        }
    }
    toolsets_list(&mut conn).await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v30(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    conn.call(REVEAL, json!({"visible": true}), None).await?;
    let list = toolsets_list(&mut conn).await?;
    let declares = conn
        .manifest()
        .get("toolsets")
        .and_then(Value::as_object)
        .is_some_and(|t| !t.is_empty());
    if !declares {
        ensure!(
            list.get("open")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty),
            "a server that declares no toolsets answers toolsets/list with an empty open: {}",
            brief(&list)
        );
    }
    let h = result_hints(&list).unwrap_or(&Value::Null);
    for name in [REVEALED, GROUPED] {
        ensure!(
            states_visible(h, name, None) == Some(true),
            "the full statement should state the toolset-less (or undeclared-group) dynamic tool {name} visible: {}",
            brief(h)
        );
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v33(cx: &mut Ctx<'_>) -> Step {
    let profile = Profile {
        grant_push: false,
        ..Profile::hinted()
    };
    let (mut conn, _) = cx.connected(profile).await?;
    conn.call(LATER, json!({"visible": true}), None).await?;
    let wait = cx.options.wait;
    let Some(seen) = conn.wait_for(wait, about_revealed).await else {
        fail!(
            "without a pushEvents grant, {LATER}'s change should arrive as tools/hints; nothing arrived within {wait:?}"
        );
    };
    let carrier = cx.want().str("carrier")?;
    ensure!(
        seen.carrier() == carrier,
        "without a pushEvents grant the change must come as {carrier} (§6.2); it came as {}",
        seen.describe()
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v37(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::hinted()).await?;
    conn.require_hints()?;
    let first = toolsets_list(&mut conn).await?;
    let h = result_hints(&first).unwrap_or(&Value::Null);
    ensure!(
        rev_of(h) == Some(1),
        "the first toolsets/list on a connection takes rev 1; it carries {:?}",
        h.get("rev")
    );
    conn.call(REVEAL, json!({"visible": true}), None).await?;
    conn.call(REVEAL, json!({"visible": false}), None).await?;
    let second = toolsets_list(&mut conn).await?;
    let h = result_hints(&second).unwrap_or(&Value::Null);
    ensure!(
        states_visible(h, REVEALED, None) != Some(true),
        "{REVEALED} was hidden again, yet the statement states it visible: {}",
        brief(h)
    );
    // The statement both ways, across one, two and three open instances and back.
    let [a, b, c] = [cx.name("v37a"), cx.name("v37b"), cx.name("v37c")];
    let mut opened: Vec<String> = Vec::new();
    let mut closed: Vec<String> = Vec::new();
    for (i, when) in [
        (&a, "with one instance open"),
        (&b, "with two instances open"),
        (&c, "with three instances open"),
    ] {
        open(&mut conn, i).await?;
        opened.push(i.clone());
        let list = toolsets_list(&mut conn).await?;
        statement::agrees(&list, &opened, &closed, when)?;
    }
    for (i, when) in [
        (&b, "after the middle instance closed"),
        (&a, "after the oldest instance closed"),
        (&c, "after the last instance closed"),
    ] {
        close(&mut conn, i).await?;
        opened.retain(|o| o != i);
        closed.push(i.clone());
        let list = toolsets_list(&mut conn).await?;
        statement::agrees(&list, &opened, &closed, when)?;
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v38(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::plain()).await?;
    let tools = list_tools(&mut conn).await?;
    for tool in listed_tools(&tools) {
        ensure!(
            !has_hint_meta(tool),
            "the list for a host without toolHints should carry no hint _meta (§6.3); {} does",
            brief(tool)
        );
    }
    ensure!(
        result_hints(&tools).is_none(),
        "tools/list for a host without toolHints carries mcpl/hints"
    );
    require_tools(&tools, &[FLAT_TOOL])?;
    let r = conn.call(FLAT_TOOL, json!({}), None).await?;
    ensure!(
        !is_error(&r),
        "{FLAT_TOOL} belongs to a toolset without instances, which is implicitly open for a host without toolHints (§6.3); the call failed: {}",
        brief(&r)
    );
    conn.close().await;
    Ok(())
}
