//! The server suite: the suite plays a scripted host against the server under test.
//!
//! Each check opens its own connections (a new process each, for a command target), so one
//! check's state never leaks into the next. Checks read the wire as raw JSON and judge it
//! against the rule; every check also asserts §6.1's consecutive revs on every connection it
//! opened, so a server that reuses or skips a rev fails wherever it does so.

pub(crate) mod conn;
mod ctx;
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
use crate::verdict::{Step, Verdict, fail, run_within};
use conn::{Conn, Profile};
use ctx::Ctx;
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
