//! The host suite: the suite plays a scripted server (on WebSocket) and the agent (over the
//! host's stdio, through its four meta-tools) and judges what the host sends the server.
//!
//! Each check starts the host afresh against a server on a fresh port, so nothing leaks from
//! one check into the next.

mod agent;
mod checks;
mod ordering;
mod recovery;
mod server;
mod toolsets;

use crate::catalog::{HOST_RULES, Rule, Side, VECTORS};
use crate::report::{CheckResult, Outcome, Report};
use crate::target::{HostTarget, Options};
use crate::transcript::Transcript;
use crate::verdict::{Step, Verdict, fail, run_within};
use std::time::Instant;

/// Runs every host-side check against the host `target` starts, and reports each host-side
/// vector of RFC-014 §13 and each host rule in [`HOST_RULES`] ([`host_rules`]): passed, failed
/// (with the messages exchanged), or not applicable.
pub async fn run_host_suite(target: HostTarget, options: Options) -> Report {
    let mut report = Report::new(Side::Host, target.describe());
    let nonce = std::process::id() % 100_000;
    // Start the host once first: one that cannot start or never connects fails every check
    // at once, with one transcript.
    let vectors = options
        .vectors
        .clone()
        .unwrap_or_else(|| std::sync::Arc::new(crate::data::VectorFile::embedded()));
    let preflight = Transcript::new();
    let cx = checks::Ctx {
        target: &target,
        options: &options,
        transcript: preflight.clone(),
        nonce,
        wants: checks::host_rule_expect(),
        rule: "preflight",
    };
    if let Err(Verdict::Fail(why) | Verdict::NotApplicable(why)) = cx.preflight().await {
        for rule in host_rules().filter(|r| options.selects(r.id)) {
            let outcome = Outcome::Fail {
                reason: format!("the host could not be started and connected: {why}"),
                transcript: preflight.entries(),
            };
            report.checks.push(CheckResult::new(rule, outcome, 0));
        }
        return report;
    }
    for rule in host_rules().filter(|r| options.selects(r.id)) {
        let started = Instant::now();
        let transcript = Transcript::new();
        let wants = match vectors.get(rule.id) {
            Some(v) => v
                .expect
                .get("host")
                .cloned()
                .unwrap_or(serde_json::Value::Null),
            None => checks::host_rule_expect(),
        };
        let mut cx = checks::Ctx {
            target: &target,
            options: &options,
            transcript: transcript.clone(),
            nonce,
            wants,
            rule: rule.id,
        };
        let outcome = run_within(options.timeout * 6, run_check(rule, &mut cx), &transcript).await;
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        report.checks.push(CheckResult::new(rule, outcome, ms));
    }
    report
}

/// The vectors with a host part the host suite checks.
pub const HOST_VECTORS: [&str; 18] = [
    "v04", "v05", "v09", "v10", "v11", "v12", "v13", "v14", "v19", "v20", "v21", "v24", "v25",
    "v29", "v31", "v35", "v36", "v37",
];

/// The rules the host suite reports: its vectors, then [`HOST_RULES`].
pub fn host_rules() -> impl Iterator<Item = &'static Rule> {
    VECTORS
        .iter()
        .filter(|r| HOST_VECTORS.contains(&r.id))
        .chain(HOST_RULES.iter())
}

async fn run_check(rule: &Rule, cx: &mut checks::Ctx<'_>) -> Step {
    match rule.id {
        "v04" => recovery::v04(cx).await,
        "v05" | "h64" => toolsets::h64(cx).await,
        "v09" => recovery::v09(cx).await,
        "v10" => toolsets::v10(cx).await,
        "v11" => toolsets::v11(cx).await,
        "v12" => recovery::v12(cx).await,
        "v13" => toolsets::v13(cx).await,
        "v14" => toolsets::v14(cx).await,
        "v31" => toolsets::v31(cx).await,
        "v37" => recovery::v37(cx).await,
        "v35" => recovery::v35(cx).await,
        "v20" => toolsets::v20(cx).await,
        "v21" => toolsets::v21(cx).await,
        "v29" => recovery::v29(cx).await,
        "h01" => recovery::h01(cx).await,
        "h12" => toolsets::h12(cx).await,
        "h18" => recovery::h18(cx).await,
        "h25" => recovery::h25(cx).await,
        "h28" => recovery::h28(cx).await,
        "h29" => toolsets::h29(cx).await,
        "h59" => toolsets::h59(cx).await,
        "v19" => ordering::v19(cx).await,
        "v24" => ordering::v24(cx).await,
        "v25" => ordering::v25(cx).await,
        "v36" => ordering::v36(cx).await,
        other => fail!("{other} has no host check; the host suite lists only host rules"),
    }
}
