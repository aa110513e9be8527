//! Running a vector's scripted steps (from `conformance/vectors.json`) against the server
//! under test: connect, request, await, each judged by the file's matchers.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::conn::{Profile, PushReply};
use super::ctx::Ctx;
use crate::data::{VectorFile, check, substitute};
use crate::verdict::{Step as Outcome, fail};
use crate::wire::brief;

/// Judges `seen` (an answer, or an awaited message as `{"message": params}`) by every
/// matcher of `step`.
fn judge(
    id: &str,
    n: usize,
    what: &str,
    step: &Value,
    seen: &Value,
    vars: &HashMap<String, String>,
) -> Outcome {
    for matcher in step
        .get("expect")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let matcher = substitute(matcher, vars);
        if let Err(why) = check(seen, &matcher) {
            fail!(
                "conformance/vectors.json {id} step {n} (`{what}`): {why}; it was {}",
                brief(seen)
            );
        }
    }
    Ok(())
}

/// Runs the steps of vector `id` in `file`, if it has any, against the server under test.
pub(crate) async fn run_steps(cx: &mut Ctx<'_>, file: &VectorFile, id: &str) -> Outcome {
    let Some(vector) = file.get(id) else {
        fail!("conformance/vectors.json has no vector {id}");
    };
    let mut vars: HashMap<String, String> = HashMap::new();
    vars.insert("nonce".into(), cx.nonce.to_string());
    let mut conn = None;
    for (n, step) in vector.steps.iter().enumerate() {
        let n = n + 1;
        if let Some(connect) = step.get("connect") {
            let hints = connect.get("toolHints").and_then(Value::as_bool) != Some(false);
            let mut profile = if hints {
                Profile::hinted()
            } else {
                Profile::plain()
            };
            if connect.get("pushEvents").and_then(Value::as_bool) == Some(false) {
                profile.grant_push = false;
            }
            profile.push_reply = match connect.get("pushReply").and_then(Value::as_str) {
                None | Some("accept") => PushReply::Accept,
                Some("refuse") => PushReply::Refuse,
                Some("error") => PushReply::Error,
                Some(other) => fail!(
                    "conformance/vectors.json {id} step {n}: pushReply `{other}` is not accept, refuse or error"
                ),
            };
            if let Some(old) = conn.replace(cx.open(profile).await?) {
                old.close().await;
            }
            continue;
        }
        if let Some(kind) = step.get("await").and_then(Value::as_str) {
            let Some(c) = conn.as_mut() else {
                fail!("conformance/vectors.json {id} step {n} awaits before connecting");
            };
            let wait = cx.wait();
            let Some(seen) = c.wait_for(wait, |s| s.carrier() == kind).await else {
                fail!("conformance/vectors.json {id} step {n}: no {kind} arrived within {wait:?}");
            };
            let message = json!({"message": seen.params()});
            judge(id, n, kind, step, &message, &vars)?;
            continue;
        }
        let Some(method) = step.get("request").and_then(Value::as_str) else {
            fail!("conformance/vectors.json {id} step {n} is neither connect, request nor await");
        };
        let Some(c) = conn.as_mut() else {
            fail!("conformance/vectors.json {id} step {n} requests before connecting");
        };
        let params = substitute(step.get("params").unwrap_or(&json!({})), &vars);
        let answer = match c.request_raw(method, params).await? {
            Ok(result) => json!({"result": result}),
            Err(error) => json!({"error": error}),
        };
        judge(id, n, method, step, &answer, &vars)?;
        for (name, path) in step
            .get("save")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let value = path.as_str().and_then(|p| answer.pointer(p));
            let text = match value {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => fail!(
                    "conformance/vectors.json {id} step {n} (`{method}`): nothing at {path} to save as {name}"
                ),
            };
            vars.insert(name.clone(), text);
        }
    }
    if let Some(mut c) = conn {
        c.check_revs()?;
        c.close().await;
    }
    Ok(())
}
