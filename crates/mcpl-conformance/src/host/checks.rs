//! What every host check works with: the context, a started run (scripted server, host and
//! agent) and small helpers. The checks are in `recovery` (revs, gaps, recovery reads,
//! reconnects) and `toolsets` (opens, calls, gating, telling).

use super::agent::Agent;
use super::server::{ScriptedServer, World};
use crate::fixture::REVEALED;
use crate::target::{HostTarget, Options};
use crate::transcript::Transcript;
use crate::verdict::{Step, ensure, fail};
use mcpl_protocol::methods;
use serde_json::{Value, json};
use std::time::Duration;

/// What a host check works with.
pub(crate) struct Ctx<'a> {
    pub target: &'a HostTarget,
    pub options: &'a Options,
    pub transcript: Transcript,
    pub nonce: u32,
    /// The checked rule's host expectations: a vector's `expect.host` in the vector file
    /// (`Null` when it has none, so each expectation read fails, naming it), or for a host
    /// rule (not a vector, so not in the file) [`host_rule_expect`].
    pub wants: Value,
    /// The checked rule's id.
    pub rule: &'static str,
}

/// The expectations of the host rules (`h01` ...), which are not vectors and so not in the
/// vector file: the same keys the vectors' `expect.host` use.
pub(crate) fn host_rule_expect() -> Value {
    json!({
        "recoveryReads": [methods::TOOLS_LIST, methods::TOOLSETS_LIST],
        "refusalIsError": true,
        "reachesServer": true,
        "instanceMeta": "mcpl/instance",
    })
}

/// A started scripted server and host, connected.
pub(super) struct Run {
    pub(super) server: ScriptedServer,
    pub(super) agent: Agent,
    /// The rule's host expectations (see [`Ctx::wants`]).
    pub(super) wants: Value,
    rule: &'static str,
}

impl Ctx<'_> {
    /// Starts the scripted server with `world` and the host, and waits for the host's connect
    /// reads (`tools/list`, and `toolsets/list` when the server has toolHints).
    pub(super) async fn start(&self, world: World) -> Step<Run> {
        let hinted = world.tool_hints;
        let mut server = ScriptedServer::start(world, &self.transcript)
            .await
            .map_err(crate::verdict::Verdict::Fail)?;
        let agent = Agent::start(self.target, &server.url, self.options, &self.transcript).await?;
        let wait = self.options.wait * 2;
        if server.next_conn(wait).await.is_none() {
            fail!(
                "the host never connected to the scripted server at {} within {wait:?}",
                server.url
            );
        }
        let method = if hinted {
            methods::TOOLSETS_LIST
        } else {
            methods::TOOLS_LIST
        };
        if !server.wait_count(1, method, 1, wait).await {
            fail!("after connecting, the host did not send {method} within {wait:?} (H28)");
        }
        Ok(Run {
            server,
            agent,
            wants: self.wants.clone(),
            rule: self.rule,
        })
    }

    /// Starts the host once against a fresh world and stops it.
    pub(super) async fn preflight(&self) -> Step {
        let run = self.start(World::new()).await?;
        run.stop().await;
        Ok(())
    }

    pub(super) fn wait(&self) -> Duration {
        self.options.wait
    }

    pub(super) fn quiet(&self) -> Duration {
        self.options.quiet
    }
}

impl Run {
    /// The expectation `key` of this rule; a missing one fails the check, naming it.
    pub(super) fn want(&self, key: &str) -> Step<Value> {
        match self.wants.get(key) {
            Some(v) => Ok(v.clone()),
            None => fail!(
                "conformance/vectors.json has no expectation {} expect.host.{key}",
                self.rule
            ),
        }
    }

    /// The expectation `key`, a boolean.
    pub(super) fn want_bool(&self, key: &str) -> Step<bool> {
        match self.want(key)? {
            Value::Bool(b) => Ok(b),
            other => fail!(
                "{} expect.host.{key} should be a boolean, it is {other}",
                self.rule
            ),
        }
    }

    /// The expectation `key`, a string.
    pub(super) fn want_str(&self, key: &str) -> Step<String> {
        match self.want(key)? {
            Value::String(s) => Ok(s),
            other => fail!(
                "{} expect.host.{key} should be a string, it is {other}",
                self.rule
            ),
        }
    }

    /// The expectation `key`, an array of strings.
    pub(super) fn want_strs(&self, key: &str) -> Step<Vec<String>> {
        let v = self.want(key)?;
        match v.as_array().and_then(|a| {
            a.iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        }) {
            Some(list) => Ok(list),
            None => fail!(
                "{} expect.host.{key} should be an array of strings",
                self.rule
            ),
        }
    }

    /// Fails unless the host offers the meta-tools the check needs.
    pub(super) fn needs(&self, tools: &[&str]) -> Step {
        let missing: Vec<_> = tools.iter().filter(|t| !self.agent.offers(t)).collect();
        if !missing.is_empty() {
            fail!(
                "the host does not offer the meta-tools {missing:?} that the host contract names (docs/CONFORMANCE.md)"
            );
        }
        Ok(())
    }

    /// Waits until the host re-reads both lists on `conn` (a recovery): `tools/list` and
    /// `toolsets/list` counts each grow past what they were.
    pub(super) async fn expect_recovery(
        &self,
        conn: usize,
        before: (usize, usize),
        wait: Duration,
        why: &str,
    ) -> Step {
        let reads = self.want_strs("recoveryReads")?;
        let mut missing = Vec::new();
        for method in &reads {
            let least = if method == methods::TOOLS_LIST {
                before.0 + 1
            } else if method == methods::TOOLSETS_LIST {
                before.1 + 1
            } else {
                self.server.count(conn, method) + 1
            };
            if !self.server.wait_count(conn, method, least, wait).await {
                missing.push(method.clone());
            }
        }
        ensure!(
            missing.is_empty(),
            "{why}: the host should re-read {reads:?} (§6.1 recovery); within {wait:?} it did not re-read {missing:?}"
        );
        Ok(())
    }

    /// A negative check with a sync point, not a quiet window: the agent acts on `tool` with
    /// `act` (the `toolsets_act` arguments) and the host must refuse it itself. The host can
    /// answer the agent only after the server answered a call it forwarded, so when the
    /// answer comes, a forwarded call has already been recorded: the check ends at that
    /// answer. Each use has a positive control: the same act, once allowed, reaches the server.
    pub(super) async fn expect_refused(&mut self, tool: &str, act: Value, why: &str) -> Step {
        let before = calls_of(&self.server, tool);
        let answer = self.agent.call(super::agent::META_ACT, act.clone()).await?;
        let after = calls_of(&self.server, tool);
        ensure!(
            after == before,
            "{why}, so the host must hold or refuse the agent's act {act}; it sent tools/call {tool} to the server"
        );
        let refusal = self.want_bool("refusalIsError")?;
        ensure!(
            crate::wire::is_error(&answer) == refusal,
            "{why}; the host's answer to the act {act} should be a refusal (a tool error), it was {}",
            crate::wire::brief(&answer)
        );
        Ok(())
    }

    /// The positive control of [`Run::expect_refused`]: the agent's act must reach the server
    /// by the time the host answers it.
    pub(super) async fn expect_reaches(&mut self, tool: &str, act: Value, why: &str) -> Step {
        let before = calls_of(&self.server, tool);
        let answer = self.agent.call(super::agent::META_ACT, act.clone()).await?;
        let reaches = self.want_bool("reachesServer")?;
        ensure!(
            (calls_of(&self.server, tool) > before) == reaches,
            "{why}, so the agent's act {act} must reach the server; the host answered {} without sending tools/call {tool}",
            crate::wire::brief(&answer)
        );
        Ok(())
    }

    /// Fails if the host re-read either list on `conn` since `before` (a recovery).
    pub(super) fn expect_no_recovery(
        &self,
        conn: usize,
        before: (usize, usize),
        why: &str,
    ) -> Step {
        let now = self.counts(conn);
        ensure!(
            now == before,
            "{why}; the host recovered anyway: tools/list and toolsets/list were read {} and {} more times",
            now.0 - before.0,
            now.1 - before.1
        );
        Ok(())
    }

    pub(super) fn counts(&self, conn: usize) -> (usize, usize) {
        (
            self.server.count(conn, methods::TOOLS_LIST),
            self.server.count(conn, methods::TOOLSETS_LIST),
        )
    }

    /// Whether a `tools/call` of `name` reached the server.
    pub(super) async fn call_arrives(&self, name: &str, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(s) = self
                .server
                .requests(methods::TOOLS_CALL)
                .into_iter()
                .find(|s| s.params.get("name") == Some(&json!(name)))
            {
                return Some(s.params);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    pub(super) async fn stop(self) {
        self.agent.stop().await;
    }
}

pub(super) fn reveal(visible: bool) -> Value {
    json!({"tools": [{"name": REVEALED, "visible": visible}]})
}

pub(super) async fn run_call(server: &ScriptedServer, name: &str, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        if server
            .requests(methods::TOOLS_CALL)
            .iter()
            .any(|s| s.params.get("name") == Some(&json!(name)))
        {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How many `tools/call`s of `name` reached the server.
pub(super) fn calls_of(server: &ScriptedServer, name: &str) -> usize {
    server
        .requests(methods::TOOLS_CALL)
        .iter()
        .filter(|s| s.params.get("name") == Some(&json!(name)))
        .count()
}
