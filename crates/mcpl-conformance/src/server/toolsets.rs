//! Server checks about toolsets: opens, closes, instances, adoption, ended records, the
//! principal's other connections and the compatibility tools.

use super::conn::{Conn, Profile, Seen};
use super::ctx::{Ctx, list_tools, require_tools, toolsets_list};
use crate::fixture::{
    COMPAT_CHOOSE, COMPAT_CLOSE, COMPAT_OPEN, DEFAULT_OPEN, ECHO, GROUP, GROUPED, INSTANCED,
};
use crate::verdict::{Step, ensure, fail, not_applicable};
use crate::wire::{
    brief, ended_records, is_error, lists_open, result_hints, rev_of, text_of, tool_entries,
    tool_entry, tool_meta, toolset_entries,
};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{TOOLSET_KEY, check_name};
use serde_json::{Value, json};

/// Opens `instance` of the instanced fixture toolset and returns the result.
pub(super) async fn open(conn: &mut Conn, instance: &str) -> Step<Value> {
    conn.request(
        methods::TOOLSETS_OPEN,
        json!({"toolset": INSTANCED, "instance": instance}),
    )
    .await
}

/// Closes `instance` of the instanced fixture toolset and returns the result.
pub(super) async fn close(conn: &mut Conn, instance: &str) -> Step<Value> {
    conn.request(
        methods::TOOLSETS_CLOSE,
        json!({"toolset": INSTANCED, "instance": instance}),
    )
    .await
}

/// The toolsets entry for `instance` of the instanced toolset in a batch.
pub(super) fn instance_entry<'a>(hints: &'a Value, instance: &str) -> Option<&'a Value> {
    toolset_entries(hints).into_iter().find(|e| {
        e.get("toolset").and_then(Value::as_str) == Some(INSTANCED)
            && e.get("instance").and_then(Value::as_str) == Some(instance)
    })
}

pub(super) fn state_of(entry: Option<&Value>) -> Option<&str> {
    entry?.get("state")?.as_str()
}

pub(super) async fn v05(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let result = conn
        .request(methods::TOOLSETS_OPEN, json!({"toolset": INSTANCED}))
        .await?;
    let Some(instance) = result
        .get("instance")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        fail!(
            "toolsets/open on an instanced toolset must return the instance name (§5.2): {}",
            brief(&result)
        );
    };
    ensure!(
        check_name("instance", &instance).is_ok(),
        "the server chose the instance name `{instance}`, which breaks the name grammar"
    );
    let h = result_hints(&result).unwrap_or(&Value::Null);
    ensure!(
        state_of(instance_entry(h, &instance)) == Some("open"),
        "the open's hints should carry a toolsets entry with state open for `{instance}`: {}",
        brief(h)
    );
    for entry in tool_entries(h) {
        ensure!(
            entry.get("instance").is_some(),
            "hint entries for tools of an instanced toolset must carry instance (§5.5): {}",
            brief(entry)
        );
    }
    let echo = conn
        .call(ECHO, json!({"value": instance}), Some(&instance))
        .await?;
    ensure!(
        !is_error(&echo),
        "a call naming the open instance `{instance}` failed: {}",
        brief(&echo)
    );
    close(&mut conn, &instance).await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v06(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let (a, b) = (cx.name("v06a"), cx.name("v06b"));
    open(&mut conn, &a).await?;
    open(&mut conn, &b).await?;
    let r = conn.call(ECHO, json!({"value": a}), None).await?;
    ensure!(
        is_error(&r),
        "a call without mcpl/instance while two instances are open must be a tool error (§4.3); it succeeded: {}",
        brief(&r)
    );
    let text = text_of(&r);
    ensure!(
        text.contains(&a) && text.contains(&b),
        "the tool error should name the open instances `{a}` and `{b}`; it says: {text}"
    );
    close(&mut conn, &a).await?;
    close(&mut conn, &b).await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) fn needs_principal(cx: &Ctx<'_>, vector: &str) -> Step {
    if !cx.target.shares_principal() {
        not_applicable!(
            "{vector} needs two connections of one principal; a command target starts a process per connection. Run with --url ws://... --token TOKEN against a server that maps the token to one principal"
        );
    }
    Ok(())
}

pub(super) async fn v09(cx: &mut Ctx<'_>) -> Step {
    needs_principal(cx, "v09")?;
    let (mut a, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v09");
    open(&mut a, &instance).await?;
    a.check_revs()?;
    a.close().await;
    let mut b = cx.open(Profile::hinted()).await?;
    list_tools(&mut b).await?;
    let list = toolsets_list(&mut b).await?;
    if !lists_open(&list, INSTANCED, Some(&instance)) {
        let ended = ended_records(&list)
            .iter()
            .any(|r| r.get("instance").and_then(Value::as_str) == Some(instance.as_str()));
        if ended {
            not_applicable!(
                "the server ends toolsets when a connection closes (§5.6), so there is nothing to adopt after a reconnect"
            );
        }
        fail!(
            "after a reconnect toolsets/list neither lists `{instance}` open nor has an ended record for it: {}",
            brief(&list)
        );
    }
    let again = open(&mut b, &instance).await?;
    let adopted = cx.want().bool("adopted")?;
    ensure!(
        again.get("adopted") == Some(&json!(adopted)),
        "re-opening the kept instance `{instance}` should adopt it: {}",
        brief(&again)
    );
    close(&mut b, &instance).await?;
    b.check_revs()?;
    b.close().await;
    Ok(())
}

pub(super) async fn v10(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, tools) = cx.connected(Profile::hinted()).await?;
    require_tools(&tools, &[GROUPED])?;
    let grouped = crate::wire::listed(&tools, GROUPED).unwrap_or(&Value::Null);
    ensure!(
        tool_meta(grouped, TOOLSET_KEY) == Some(&json!(GROUP)),
        "{GROUPED} should carry mcpl/toolset: {GROUP}: {}",
        brief(grouped)
    );
    ensure!(
        conn.declaration(GROUP).is_none(),
        "the fixture's group {GROUP} must stay undeclared in the manifest"
    );
    let refused = conn
        .request_raw(methods::TOOLSETS_OPEN, json!({"toolset": GROUP}))
        .await?;
    ensure!(
        refused.is_err(),
        "toolsets/open for the undeclared toolset {GROUP} must be a JSON-RPC error (§5.2); it returned {}",
        brief(&refused.unwrap_or_default())
    );
    let list = toolsets_list(&mut conn).await?;
    let h = result_hints(&list).unwrap_or(&Value::Null);
    for entry in tool_entries(h) {
        if entry.get("name") == Some(&json!(GROUPED)) {
            ensure!(
                entry.get("instance").is_none(),
                "undeclared toolsets have no instances (§5.4), yet {}",
                brief(entry)
            );
        }
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v14(cx: &mut Ctx<'_>) -> Step {
    needs_principal(cx, "v14")?;
    let (mut a, _) = cx.connected(Profile::hinted()).await?;
    let (mut b, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v14");
    open(&mut a, &instance).await?;
    let wait = cx.options.wait;
    let (opened, closed) = (cx.want().str("openState")?, cx.want().str("closedState")?);
    let about = |state: String, inst: String| {
        move |s: &Seen| {
            s.hints()
                .is_some_and(|h| state_of(instance_entry(h, &inst)) == Some(state.as_str()))
        }
    };
    let Some(seen) = b
        .wait_for(wait, about(opened.clone(), instance.clone()))
        .await
    else {
        fail!(
            "the open of `{instance}` on connection A never reached connection B as a toolsets entry with state {opened} (§5.6)"
        );
    };
    let h = seen.hints().unwrap_or(&Value::Null);
    ensure!(
        h.get("suggest")
            .is_none_or(|s| s.as_array().is_none_or(Vec::is_empty)),
        "a change from another connection is state, not a suggestion (§5.6): {}",
        seen.describe()
    );
    close(&mut a, &instance).await?;
    if b.wait_for(wait, about(closed.clone(), instance.clone()))
        .await
        .is_none()
    {
        fail!("the close of `{instance}` on A never reached B as state {closed}");
    }
    a.check_revs()?;
    b.check_revs()?;
    a.close().await;
    b.close().await;
    Ok(())
}

pub(super) async fn v16(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v16");
    open(&mut conn, &instance).await?;
    let before = conn.last_rev();
    let closed = close(&mut conn, &instance).await?;
    let Some(h) = result_hints(&closed) else {
        fail!(
            "the toolsets/close result carries no hints (§5.2): {}",
            brief(&closed)
        );
    };
    ensure!(
        rev_of(h) == Some(before + 1),
        "the close's hints carry rev {:?}; rev {} was next",
        h.get("rev"),
        before + 1
    );
    ensure!(
        state_of(instance_entry(h, &instance)) == Some("closed"),
        "the close's hints should set `{instance}` closed: {}",
        brief(h)
    );
    // App. B.11: closing what is not open succeeds and carries no hints.
    let again = close(&mut conn, &instance).await?;
    ensure!(
        result_hints(&again).is_none(),
        "closing what is not open carries no hints (App. B.11): {}",
        brief(&again)
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v17(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v17");
    conn.request(
        methods::TOOLSETS_OPEN,
        json!({"toolset": INSTANCED, "instance": instance, "options": {"level": 1}}),
    )
    .await?;
    let same = conn
        .request(
            methods::TOOLSETS_OPEN,
            json!({"toolset": INSTANCED, "instance": instance, "options": {"level": 1}}),
        )
        .await?;
    ensure!(
        same.get("adopted") == Some(&json!(true)),
        "re-opening the open instance `{instance}` must return adopted: true: {}",
        brief(&same)
    );
    if let Some(h) = result_hints(&same) {
        ensure!(
            tool_entries(h).is_empty() && toolset_entries(h).is_empty(),
            "an adoption changes nothing, yet its hints state changes: {}",
            brief(h)
        );
    }
    let differs = conn
        .request(
            methods::TOOLSETS_OPEN,
            json!({"toolset": INSTANCED, "instance": instance, "options": {"level": 2}}),
        )
        .await?;
    ensure!(
        differs.get("adopted") == Some(&json!(true)),
        "re-opening with other options still adopts: {}",
        brief(&differs)
    );
    ensure!(
        !text_of(&differs).is_empty(),
        "options that were not applied must be reported in content (§5.2): {}",
        brief(&differs)
    );
    close(&mut conn, &instance).await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v22(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let Some(decl) = conn.declaration(DEFAULT_OPEN).cloned() else {
        fail!(
            "the manifest does not declare the fixture toolset {DEFAULT_OPEN} (docs/CONFORMANCE.md)"
        );
    };
    ensure!(
        decl.get("default") == Some(&json!("open")),
        "{DEFAULT_OPEN} should be declared with default: open: {}",
        brief(&decl)
    );
    let list = toolsets_list(&mut conn).await?;
    ensure!(
        lists_open(&list, DEFAULT_OPEN, None),
        "a default: open toolset is listed open without any open request (§5.1): {}",
        brief(&list)
    );
    let r = conn
        .request(methods::TOOLSETS_OPEN, json!({"toolset": DEFAULT_OPEN}))
        .await?;
    ensure!(
        r.get("adopted") == Some(&json!(true)),
        "opening a default-open toolset adopts it (§5.2): {}",
        brief(&r)
    );
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v23(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let (a, b) = (cx.name("v23a"), cx.name("v23b"));
    let oa = open(&mut conn, &a).await?;
    let ob = open(&mut conn, &b).await?;
    let def = |r: &Value, i: &str| {
        result_hints(r)
            .and_then(|h| tool_entry(h, ECHO, Some(i)))
            .and_then(|e| e.get("definition"))
            .cloned()
    };
    let (da, db) = (def(&oa, &a), def(&ob, &b));
    ensure!(
        da.is_some() && db.is_some() && da != db,
        "each instance should get its own definition of {ECHO} in its open's hints; got {:?} and {:?}",
        da,
        db
    );
    let wrong = conn.call(ECHO, json!({"value": a}), Some(&b)).await?;
    ensure!(
        is_error(&wrong),
        "`{a}` is outside instance `{b}`'s definition, so the call must be a tool error: {}",
        brief(&wrong)
    );
    for i in [&a, &b] {
        let ok = conn.call(ECHO, json!({"value": i}), Some(i)).await?;
        ensure!(
            !is_error(&ok),
            "a call within instance `{i}`'s own definition failed: {}",
            brief(&ok)
        );
    }
    close(&mut conn, &a).await?;
    close(&mut conn, &b).await?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v26(cx: &mut Ctx<'_>) -> Step {
    let mut conn = cx.open(Profile::plain()).await?;
    let tools = list_tools(&mut conn).await?;
    require_tools(&tools, &[COMPAT_OPEN, COMPAT_CHOOSE, COMPAT_CLOSE, ECHO])?;
    let (p, q) = (cx.name("v26p"), cx.name("v26q"));
    for i in [&p, &q] {
        let r = conn
            .call(
                COMPAT_OPEN,
                json!({"toolset": INSTANCED, "instance": i}),
                None,
            )
            .await?;
        ensure!(!is_error(&r), "{COMPAT_OPEN} `{i}` failed: {}", brief(&r));
    }
    let to_q = conn.call(ECHO, json!({"value": q}), None).await?;
    ensure!(
        !is_error(&to_q) && text_of(&to_q).contains(&format!("{q}:")),
        "after opening `{q}` last, calls go to `{q}` (§11); got {}",
        brief(&to_q)
    );
    let chose = conn
        .call(
            COMPAT_CHOOSE,
            json!({"toolset": INSTANCED, "instance": p}),
            None,
        )
        .await?;
    ensure!(
        !is_error(&chose),
        "{COMPAT_CHOOSE} `{p}` failed: {}",
        brief(&chose)
    );
    let to_p = conn.call(ECHO, json!({"value": p}), None).await?;
    ensure!(
        !is_error(&to_p) && text_of(&to_p).contains(&format!("{p}:")),
        "after choosing `{p}`, calls go to `{p}`; got {}",
        brief(&to_p)
    );
    let not_q = conn.call(ECHO, json!({"value": q}), None).await?;
    ensure!(
        is_error(&not_q),
        "after choosing `{p}`, a value only `{q}` accepts must fail; got {}",
        brief(&not_q)
    );
    let bad = conn
        .call(
            COMPAT_CHOOSE,
            json!({"toolset": INSTANCED, "instance": "cf-not-open"}),
            None,
        )
        .await?;
    ensure!(
        is_error(&bad),
        "choosing an instance that is not open must be refused (§11): {}",
        brief(&bad)
    );
    for i in [&p, &q] {
        conn.call(
            COMPAT_CLOSE,
            json!({"toolset": INSTANCED, "instance": i}),
            None,
        )
        .await?;
    }
    conn.close().await;
    Ok(())
}
