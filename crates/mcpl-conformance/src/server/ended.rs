//! Server checks about ends: ended records (v13), a declaration's removal (v31), and an end
//! another host of the principal missed (v32).

use super::conn::{Conn, Profile, Seen};
use super::ctx::{Ctx, list_tools, require_tools, toolsets_list};
use super::toolsets::{close, instance_entry, needs_principal, open, state_of};
use crate::fixture::{FINISH, FLAT, INSTANCED, UNDECLARE};
use crate::verdict::{Step, ensure, fail};
use crate::wire::{brief, ended_records, is_error, lists_open, result_hints, toolset_entries};
use mcpl_protocol::methods;
use serde_json::{Value, json};

/// The `ended` id a closing toolsets entry for `instance` carries in `hints`.
fn ended_id_in(hints: &Value, instance: &str) -> Option<String> {
    instance_entry(hints, instance)
        .and_then(|e| e.get("ended"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

pub(super) async fn v13(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    // One instance ends as a game ends, another by toolsets/close: both leave records.
    let (finished, closed) = (cx.name("v13f"), cx.name("v13c"));
    open(&mut conn, &finished).await?;
    open(&mut conn, &closed).await?;
    let done = conn.call(FINISH, json!({}), Some(&finished)).await?;
    ensure!(!is_error(&done), "{FINISH} failed: {}", brief(&done));
    let h = result_hints(&done).unwrap_or(&Value::Null);
    ensure!(
        state_of(instance_entry(h, &finished)) == Some("closed"),
        "the {FINISH} result's hints should close `{finished}`: {}",
        brief(h)
    );
    let Some(finished_id) = ended_id_in(h, &finished) else {
        fail!(
            "the closing entry for `{finished}` should carry the ended record's id in `ended` (§5.3): {}",
            brief(h)
        );
    };
    let shut = close(&mut conn, &closed).await?;
    let h = result_hints(&shut).unwrap_or(&Value::Null);
    let Some(closed_id) = ended_id_in(h, &closed) else {
        fail!(
            "the toolsets/close result's closing entry for `{closed}` should carry its ended record's id in `ended` (§5.3: every end gets a record): {}",
            brief(h)
        );
    };
    ensure!(
        finished_id != closed_id,
        "two ends got the same ended id `{finished_id}`; ids are never reused (§5.3)"
    );
    for round in 1..=2 {
        let list = toolsets_list(&mut conn).await?;
        for (id, instance) in [(&finished_id, &finished), (&closed_id, &closed)] {
            let records: Vec<&Value> = ended_records(&list)
                .into_iter()
                .filter(|r| r.get("id").and_then(Value::as_str) == Some(id.as_str()))
                .collect();
            let record = match records.as_slice() {
                [one] => *one,
                [] => fail!(
                    "toolsets/list #{round} after the end lacks the ended record `{id}` (§5.3: it appears in every list until it expires): {}",
                    brief(&list)
                ),
                many => fail!(
                    "toolsets/list #{round} carries the ended record `{id}` {} times; each record appears once: {}",
                    many.len(),
                    brief(&list)
                ),
            };
            ensure!(
                record.get("toolset") == Some(&json!(INSTANCED))
                    && record.get("instance") == Some(&json!(instance)),
                "the ended record `{id}` should name toolset {INSTANCED} and instance `{instance}`: {}",
                brief(record)
            );
            ensure!(
                !lists_open(&list, INSTANCED, Some(instance)),
                "the ended instance `{instance}` is still listed open"
            );
        }
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v31(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, tools) = cx.connected(Profile::hinted()).await?;
    require_tools(&tools, &[UNDECLARE])?;
    conn.request(methods::TOOLSETS_OPEN, json!({"toolset": FLAT}))
        .await?;
    let r = conn.call(UNDECLARE, json!({}), None).await?;
    let outcome = check_removal(cx, &mut conn, &r).await;
    // Put the declaration back whatever happened, so a shared server stays whole.
    let _ = conn.call(UNDECLARE, json!({"restore": true}), None).await;
    outcome?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

async fn check_removal(cx: &Ctx<'_>, conn: &mut Conn, r: &Value) -> Step {
    // The close may ride in the call's result or follow on a push or tools/hints: §5.1 names
    // no carrier.
    let state = cx.want().str("closedState")?;
    let domain = cx.want().str("manifestDomain")?;
    let closes = |h: &Value| {
        toolset_entries(h)
            .into_iter()
            .find(|e| {
                e.get("toolset") == Some(&json!(FLAT)) && state_of(Some(e)) == Some(state.as_str())
            })
            .cloned()
    };
    let wait = cx.options.wait;
    let entry = match result_hints(r).and_then(closes) {
        Some(e) => Some(e),
        None => conn
            .wait_for(wait, |s| s.hints().and_then(closes).is_some())
            .await
            .and_then(|s| s.hints().and_then(closes)),
    };
    let Some(entry) = entry else {
        fail!(
            "removing {FLAT}'s declaration closes it with a hint (§5.1); no hint closed it, in the result or within {wait:?} after"
        );
    };
    let ended_id = entry
        .get("ended")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let wait = cx.options.wait;
    let changed = conn
        .wait_for(wait, |s| {
            matches!(s, Seen::Notification { method, params }
                if method == methods::MANIFEST_CHANGED
                && params.get("domains").and_then(Value::as_array)
                    .is_some_and(|d| d.iter().any(|x| x == domain.as_str())))
        })
        .await;
    ensure!(
        changed.is_some(),
        "removing a declaration changes the manifest: mcpl/manifestChanged naming the domain {domain} should follow (§5.1)"
    );
    let manifest = conn.request(methods::MANIFEST, json!({})).await?;
    ensure!(
        manifest.pointer(&format!("/toolsets/{FLAT}")).is_none(),
        "mcpl/manifest still declares {FLAT} after its removal"
    );
    let list = toolsets_list(conn).await?;
    ensure!(
        !lists_open(&list, FLAT, None),
        "{FLAT} is still listed open after its declaration was removed"
    );
    let has_record = ended_records(&list).iter().any(|rec| {
        rec.get("toolset") == Some(&json!(FLAT))
            && ended_id
                .as_deref()
                .is_none_or(|id| rec.get("id").and_then(Value::as_str) == Some(id))
    });
    ensure!(
        has_record,
        "toolsets/list should carry an ended record for {FLAT} after the removal (§5.1, §5.3): {}",
        brief(&list)
    );
    Ok(())
}

pub(super) async fn v32(cx: &mut Ctx<'_>) -> Step {
    needs_principal(cx, "v32")?;
    let (mut a, _) = cx.connected(Profile::hinted()).await?;
    let instance = cx.name("v32");
    open(&mut a, &instance).await?;
    let (mut b, _) = cx.connected(Profile::hinted()).await?;
    b.check_revs()?;
    b.close().await;
    let done = a.call(FINISH, json!({}), Some(&instance)).await?;
    ensure!(!is_error(&done), "{FINISH} failed: {}", brief(&done));
    let mut b = cx.open(Profile::hinted()).await?;
    list_tools(&mut b).await?;
    let list = toolsets_list(&mut b).await?;
    let member = cx.want().str("recordNames")?;
    let found = ended_records(&list)
        .iter()
        .any(|r| r.get(&member).and_then(Value::as_str) == Some(instance.as_str()));
    ensure!(
        found,
        "B reconnected after `{instance}` ended on A; B's toolsets/list must carry its ended record (§5.3): {}",
        brief(&list)
    );
    a.check_revs()?;
    b.check_revs()?;
    a.close().await;
    b.close().await;
    Ok(())
}
