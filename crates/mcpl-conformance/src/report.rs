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
    /// The rule needs something the target declares it does not have (a capability it does
    /// not advertise, or, for a stdio target, a second connection of one principal); counted
    /// apart, never as a pass. A target that has it and misbehaves fails instead.
    #[serde(rename = "n/a")]
    NotApplicable {
        /// What the target lacks, and how to run the check anyway.
        reason: String,
    },
}

impl Outcome {
    /// `"pass"`, `"fail"` or `"n/a"`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "fail",
            Outcome::NotApplicable { .. } => "n/a",
        }
    }

    /// The reason of a failure or of a check not applicable.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail { reason, .. } | Outcome::NotApplicable { reason } => Some(reason),
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

/// How many checks of a report ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Not applicable to this target (counted apart).
    pub not_applicable: usize,
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

    /// How many checks ended each way.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for check in &self.checks {
            match check.outcome {
                Outcome::Pass => c.passed += 1,
                Outcome::Fail { .. } => c.failed += 1,
                Outcome::NotApplicable { .. } => c.not_applicable += 1,
            }
        }
        c
    }

    /// Whether any check failed: the CLI exits non-zero then.
    pub fn failed(&self) -> bool {
        self.counts().failed > 0
    }

    /// The result of the check `id`, if it ran.
    pub fn get(&self, id: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == id)
    }
}
