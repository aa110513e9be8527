//! Configuration: per-connection controller settings and the operator's tool policy.

use std::time::Duration;

use crate::glob::glob;
use crate::names::ServerName;

/// How the transport orders messages, which decides what an early rev means (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio or WebSocket: one FIFO stream, so a gap or reversal is a loss or a bug.
    Ordered,
    /// Streamable HTTP: responses and SSE streams are not mutually ordered, so an early rev
    /// is held briefly for the missing ones.
    StreamableHttp,
}

/// The operator's tool policy: allow and deny patterns over tool names (H09).
///
/// Patterns are exact names or globs with `*`. A name passes when no deny pattern matches it
/// and, if any allow pattern is set, one of them does. Hints confer no authority: every name
/// from a list, hint or statement goes through the same check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    /// If not empty, only names matching one of these are kept.
    pub allow: Vec<String>,
    /// Names matching one of these are dropped.
    pub deny: Vec<String>,
}

impl ToolPolicy {
    /// True when the policy lets the tool through.
    pub fn permits(&self, name: &str) -> bool {
        if self.deny.iter().any(|p| glob(p, name)) {
            return false;
        }
        self.allow.is_empty() || self.allow.iter().any(|p| glob(p, name))
    }

    /// The patterns that match none of `names` (H39: pass every listed name, static or
    /// dynamic, so a pattern naming a dynamic tool counts as matched).
    pub fn unmatched<'a>(&'a self, names: &[&str]) -> Vec<&'a str> {
        self.allow
            .iter()
            .chain(&self.deny)
            .filter(|p| !names.iter().any(|n| glob(p, n)))
            .map(String::as_str)
            .collect()
    }
}

/// Settings for one controller (one server connection).
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// The host's id for the server (its configuration name), shown to the model.
    pub server: ServerName,
    /// The principal this connection acts for; ended records are keyed by it (H48).
    pub principal: String,
    /// How the transport orders messages.
    pub transport: Transport,
    /// Whether this host switched toolHints on for the server (H12).
    pub host_tool_hints: bool,
    /// The server's `experimental.mcpl` object from `initialize` (its manifest), if any.
    pub manifest: Option<serde_json::Value>,
    /// Whether the host granted the server `pushEvents` (a push is refused without it).
    pub push_events: bool,
    /// The operator's tool policy.
    pub policy: ToolPolicy,
    /// How long a request may go unanswered before it counts as timed out.
    pub request_timeout: Duration,
    /// How long a `tools/call` may go unanswered (a tool may work for a while); `None`:
    /// [`request_timeout`](Self::request_timeout).
    pub call_timeout: Option<Duration>,
    /// How long an early rev is held on Streamable HTTP (Appendix B.3: at most 2 s).
    pub hold_limit: Duration,
    /// The first recovery retry delay; it doubles up to `backoff_max` (H25).
    pub backoff_initial: Duration,
    /// The longest recovery retry delay.
    pub backoff_max: Duration,
    /// Most pages one `tools/list` may have (H04).
    pub max_pages: usize,
    /// Most recovery runs (each a `tools/list` and `toolsets/list` re-read) started in any
    /// 60 s; at least 1. A run past it is deferred until the window admits it, never dropped,
    /// and announced with [`Effect::RecoveryLimited`](crate::Effect::RecoveryLimited).
    pub max_recoveries_per_minute: u32,
    /// Host-side toolsets for a plain server (one without toolHints): how its tools are
    /// grouped, fixed at its first list. `None`: every tool of a plain server is static.
    pub grouping: Option<crate::grouping::Grouping>,
}

impl ControllerConfig {
    /// A configuration with the defaults: ordered transport, toolHints on, 30 s timeout,
    /// 2 s hold, backoff 100 ms to 10 s, 64 pages, 60 recovery runs a minute.
    pub fn new(server: ServerName, principal: impl Into<String>) -> Self {
        ControllerConfig {
            server,
            principal: principal.into(),
            transport: Transport::Ordered,
            host_tool_hints: true,
            manifest: None,
            push_events: true,
            policy: ToolPolicy::default(),
            request_timeout: Duration::from_secs(30),
            call_timeout: None,
            hold_limit: Duration::from_secs(2),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
            max_pages: 64,
            max_recoveries_per_minute: 60,
            grouping: None,
        }
    }
}

/// Applies an operator's capability mask to a server's `experimental.mcpl` object: masked
/// members are removed and reported. RFC-014's `toolHints`, `toolsets` and `surface` are
/// never masked, stripped or reported as masked (H80): they are the domain `toolsets`, which
/// grants nothing.
pub fn mask_capabilities(
    manifest: &serde_json::Value,
    mask: &[String],
) -> (serde_json::Value, Vec<String>) {
    use mcpl_protocol::rfc014::{SURFACE_KEY, TOOL_HINTS_KEY, TOOLSETS_KEY};
    let mut out = manifest.clone();
    let mut reported = Vec::new();
    if let Some(obj) = out.as_object_mut() {
        for key in mask {
            if [TOOL_HINTS_KEY, TOOLSETS_KEY, SURFACE_KEY].contains(&key.as_str()) {
                continue;
            }
            if obj.remove(key).is_some() {
                reported.push(key.clone());
            }
        }
    }
    (out, reported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_prefix_suffix_and_middle() {
        assert!(glob("a*", "abc"));
        assert!(glob("*c", "abc"));
        assert!(glob("a*c", "abc"));
        assert!(!glob("a*d", "abc"));
        assert!(glob("abc", "abc"));
        assert!(!glob("ab", "abc"));
    }

    #[test]
    fn h09_a_middle_part_once_matched_is_not_matched_again_by_the_next() {
        // `*ab*b`: after `ab` nothing is left of "xab", so the trailing `b` has nothing to end.
        assert!(!glob("*ab*b", "xab"));
        assert!(glob("*ab*b", "xabb"));
        let policy = ToolPolicy {
            allow: Vec::new(),
            deny: vec!["*_fs*s".into()],
        };
        assert!(
            policy.permits("read_fs"),
            "the deny pattern needs an `s` after `_fs`"
        );
        assert!(!policy.permits("read_fs_bytes"));
    }

    #[test]
    fn h09_the_last_part_must_end_the_name_not_merely_occur_in_it() {
        // `*_fs`: "read_fs_bytes" holds `_fs` but does not end with it.
        assert!(!glob("a*c", "abcd"));
        let policy = ToolPolicy {
            allow: Vec::new(),
            deny: vec!["*_fs".into()],
        };
        assert!(!policy.permits("read_fs"));
        assert!(policy.permits("read_fs_bytes"));
    }
}
