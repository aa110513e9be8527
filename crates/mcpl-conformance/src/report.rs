//! The result of a suite run: one [`CheckResult`] per rule, and the verdict.

use crate::catalog::{Rule, Side};
use crate::transcript::Entry;
use serde::Serialize;

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "lowercase")]
pub enum Outcome {
    /// The implementation did what the rule asks.
    Pass,
    /// It did not; `reason` says what was wrong and `transcript` what was said.
    Fail {
        /// What was wrong, naming the message and value.
        reason: String,
        /// The messages exchanged during the check.
        transcript: Vec<Entry>,
    },
    /// The check could not run; `reason` says why (never a silent pass).
    Skipped {
        /// Why the check could not run.
        reason: String,
    },
}

impl Outcome {
    /// `"pass"`, `"fail"` or `"skipped"`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "fail",
            Outcome::Skipped { .. } => "skipped",
        }
    }
}

/// One rule's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// The rule's id (`v06`, `h28`).
    pub id: String,
    /// Its title.
    pub title: String,
    /// The rule text it checks, with its section.
    pub rfc: String,
    /// How it ended.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
}

impl CheckResult {
    /// A result for `rule`.
    pub fn new(rule: &Rule, outcome: Outcome, duration_ms: u64) -> Self {
        CheckResult {
            id: rule.id.to_owned(),
            title: rule.title.to_owned(),
            rfc: rule.rfc.to_owned(),
            outcome,
            duration_ms,
        }
    }
}

/// A whole run against one implementation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Which side was tested.
    pub side: &'static str,
    /// The target as given (a command line or URL).
    pub target: String,
    /// One result per check, in catalogue order.
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// An empty report for `side` against `target`.
    pub fn new(side: Side, target: impl Into<String>) -> Self {
        Report {
            side: side.as_str(),
            target: target.into(),
            checks: Vec::new(),
        }
    }

    /// How many checks passed, failed and were skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for check in &self.checks {
            match check.outcome {
                Outcome::Pass => c.0 += 1,
                Outcome::Fail { .. } => c.1 += 1,
                Outcome::Skipped { .. } => c.2 += 1,
            }
        }
        c
    }

    /// Whether any check failed: the CLI exits non-zero then.
    pub fn failed(&self) -> bool {
        self.counts().1 > 0
    }

    /// The result of the check `id`, if it ran.
    pub fn get(&self, id: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == id)
    }
}
