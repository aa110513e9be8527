//! The server suite: the suite plays a scripted host against the server under test.
//!
//! Each check opens its own connections (a new process each, for a command target), so one
//! check's state never leaks into the next. Checks read the wire as raw JSON and judge it
//! against the rule; every check also asserts §6.1's consecutive revs on every connection it
//! opened, so a server that reuses or skips a rev fails wherever it does so.

pub(crate) mod conn;
mod ended;
mod hints;
mod names;
mod statement;
mod steps;
mod toolsets;

use crate::catalog::{Rule, Side, VECTORS};
use crate::data::VectorFile;
use crate::report::{CheckResult, Outcome, Report};
use crate::target::{Options, ServerTarget};
use crate::transcript::Transcript;
use crate::verdict::{Step, Verdict, ensure, fail, run_within};
use crate::wire::{brief, listed, result_hints, rev_of};
use conn::{Conn, Profile};
use mcpl_protocol::methods;
use serde_json::{Value, json};
use std::time::Instant;

/// The vectors whose rule binds only the host: the server suite does not report them (the
/// host suite does).
pub const HOST_ONLY: [&str; 8] = ["v12", "v19", "v20", "v21", "v24", "v25", "v35", "v36"];

/// The vectors the server suite checks, in catalogue order.
pub fn server_vectors() -> impl Iterator<Item = &'static Rule> {
    VECTORS.iter().filter(|r| !HOST_ONLY.contains(&r.id))
}

/// Runs every server-side check against `target` and reports each server-side vector of
/// RFC-014 §13 ([`server_vectors`]): passed, failed (with the messages exchanged), or not
/// applicable (the target lacks what it needs, counted apart).
pub async fn run_server_suite(target: ServerTarget, options: Options) -> Report {
    let mut report = Report::new(Side::Server, target.describe());
    let vectors = options
        .vectors
        .clone()
        .unwrap_or_else(|| std::sync::Arc::new(VectorFile::embedded()));
    let nonce = std::process::id() % 100_000;
    // One connection first: a server that cannot be reached or initialized fails every check
    // at once, with one transcript, instead of 38 slow times over.
    let preflight = Transcript::new();
    let reached = tokio::time::timeout(
        options.timeout * 2,
        Conn::open(&target, &options, &preflight, "A", Profile::hinted()),
    )
    .await;
    let unreachable = match reached {
        Ok(Ok(conn)) => {
            conn.close().await;
            None
        }
        Ok(Err(Verdict::Fail(why) | Verdict::NotApplicable(why))) => Some(why),
        Err(_) => Some(format!(
            "no answer to initialize within {:?}",
            options.timeout * 2
        )),
    };
    if let Some(why) = unreachable {
        for rule in server_vectors().filter(|r| options.selects(r.id)) {
            let outcome = Outcome::Fail {
                reason: format!("the server could not be reached or initialized: {why}"),
                transcript: preflight.entries(),
            };
            report.checks.push(CheckResult::new(rule, outcome, 0));
        }
        return report;
    }
    for rule in server_vectors().filter(|r| options.selects(r.id)) {
        let started = Instant::now();
        let transcript = Transcript::new();
        let mut cx = Ctx {
            target: &target,
            options: &options,
            transcript: transcript.clone(),
            opened: 0,
            nonce,
            vectors: &vectors,
            vector: rule.id,
        };
        let outcome = run_within(options.timeout * 6, run_check(rule, &mut cx), &transcript).await;
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        report.checks.push(CheckResult::new(rule, outcome, ms));
    }
    report
}

/// What a check works with.
pub(crate) struct Ctx<'a> {
    target: &'a ServerTarget,
    options: &'a Options,
    transcript: Transcript,
    opened: usize,
    pub(crate) nonce: u32,
    vectors: &'a VectorFile,
    /// The vector being checked.
    vector: &'static str,
}

impl Ctx<'_> {
    /// Opens the next connection (`A`, `B`, ...) with `profile`.
    pub(crate) async fn open(&mut self, profile: Profile) -> Step<Conn> {
        let label = ((b'A' + (self.opened % 26) as u8) as char).to_string();
        self.opened += 1;
        Conn::open(self.target, self.options, &self.transcript, &label, profile).await
    }

    /// Opens a connection as a host with `toolHints` and a `pushEvents` grant, and reads
    /// `tools/list` then `toolsets/list` as a host does on connect (§5.3).
    async fn connected(&mut self, profile: Profile) -> Step<(Conn, Value)> {
        let mut conn = self.open(profile).await?;
        conn.require_hints()?;
        let tools = list_tools(&mut conn).await?;
        toolsets_list(&mut conn).await?;
        // Start each check from a hidden `cf_revealed`, whatever an earlier check on the same
        // principal left behind, so that every later change is a real change.
        if listed(&tools, crate::fixture::REVEAL).is_some() {
            conn.call(crate::fixture::REVEAL, json!({"visible": false}), None)
                .await?;
        }
        Ok((conn, tools))
    }

    /// The checked vector's server expectations in the vector file.
    pub(crate) fn want(&self) -> crate::data::Wants<'_> {
        crate::data::Wants {
            file: self.vectors,
            id: self.vector,
            side: "server",
        }
    }

    /// How long a check waits for what must arrive.
    pub(crate) fn wait(&self) -> std::time::Duration {
        self.options.wait
    }

    /// An instance name unique to this run: `TAG-NONCE`.
    fn name(&self, tag: &str) -> String {
        format!("{tag}-{}", self.nonce)
    }
}

/// Runs one check: the vector's steps from the vector file, then its coded check.
async fn run_check(rule: &Rule, cx: &mut Ctx<'_>) -> Step {
    let vectors = cx.vectors;
    steps::run_steps(cx, vectors, rule.id).await?;
    match rule.id {
        "v01" => hints::v01(cx).await,
        "v02" => hints::v02(cx).await,
        "v03" => hints::v03(cx).await,
        "v04" => hints::v04(cx).await,
        "v05" => toolsets::v05(cx).await,
        "v06" => toolsets::v06(cx).await,
        "v07" => hints::v07(cx).await,
        "v08" => hints::v08(cx).await,
        "v09" => toolsets::v09(cx).await,
        "v10" => toolsets::v10(cx).await,
        "v11" => hints::v11(cx).await,
        "v13" => ended::v13(cx).await,
        "v14" => toolsets::v14(cx).await,
        "v15" => hints::v15(cx).await,
        "v16" => toolsets::v16(cx).await,
        "v17" => toolsets::v17(cx).await,
        "v18" => names::v18(cx).await,
        "v22" => toolsets::v22(cx).await,
        "v23" => toolsets::v23(cx).await,
        "v26" => toolsets::v26(cx).await,
        "v27" => hints::v27(cx).await,
        "v28" => hints::v28(cx).await,
        "v29" => hints::v29(cx).await,
        "v30" => hints::v30(cx).await,
        "v31" => ended::v31(cx).await,
        "v32" => ended::v32(cx).await,
        "v33" => hints::v33(cx).await,
        "v34" => names::v34(cx).await,
        "v37" => hints::v37(cx).await,
        "v38" => hints::v38(cx).await,
        other => fail!("{other} has no server check; the server suite lists only server vectors"),
    }
}

/// `tools/list`, following `nextCursor` (at most 100 pages), as one result whose `tools`
/// holds every page's tools and whose `_meta` is the last page's.
async fn list_tools(conn: &mut Conn) -> Step<Value> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = conn.request(methods::TOOLS_LIST, params).await?;
        let Some(items) = page.get("tools").and_then(Value::as_array) else {
            fail!("tools/list result has no `tools` array: {}", brief(&page));
        };
        tools.extend(items.iter().cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => {
                let mut whole = page.clone();
                whole["tools"] = Value::Array(tools);
                return Ok(whole);
            }
        }
    }
    fail!("tools/list did not end within 100 pages")
}

/// `toolsets/list`; fails unless the result has an `open` array and a full statement with
/// an integer rev (§5.3).
async fn toolsets_list(conn: &mut Conn) -> Step<Value> {
    let list = conn.request(methods::TOOLSETS_LIST, json!({})).await?;
    ensure!(
        list.get("open").is_some_and(Value::is_array),
        "toolsets/list result has no `open` array (§5.3): {}",
        brief(&list)
    );
    let Some(h) = result_hints(&list) else {
        fail!(
            "toolsets/list result carries no _meta[\"mcpl/hints\"]; §5.3 makes the full statement mandatory: {}",
            brief(&list)
        );
    };
    ensure!(
        rev_of(h).is_some(),
        "toolsets/list full statement has no integer rev (§5.3): {}",
        brief(h)
    );
    Ok(list)
}

/// Fails unless `tools` lists every name in `names`, naming the fixture contract.
fn require_tools(tools: &Value, names: &[&str]) -> Step {
    let missing: Vec<_> = names
        .iter()
        .filter(|n| listed(tools, n).is_none())
        .collect();
    ensure!(
        missing.is_empty(),
        "tools/list lacks {missing:?}, which the fixture contract requires (docs/CONFORMANCE.md)"
    );
    Ok(())
}
