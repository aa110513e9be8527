//! Where the presenter reports a programmatic act it refused before anything was sent (H65).
//!
//! The presenter is handed a [`CallTrace`]; by default it is [`TracingCallTrace`], a `tracing`
//! warning. An embedder (or a test) that wants the records themselves installs its own with
//! [`Presenter::set_call_trace`](super::state::Presenter::set_call_trace): the report is a plain
//! call, so nothing about it depends on which subscriber a thread happens to have.

use std::fmt;
use std::sync::Arc;

/// A refused act as a trace records it: a failed tool call, named by the host's own
/// identifiers only, never a value the server chose (H65, H81).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedCall {
    /// The meta-tool the model called ([`META_ACT`](super::meta_tools::META_ACT)).
    pub tool: &'static str,
    /// Why, as the host names the refusal ([`Refusal::kind`](super::refusal::Refusal::kind)).
    pub refusal: &'static str,
}

/// Receives the presenter's reports of refused calls.
pub trait CallTrace: Send + Sync {
    /// A call was refused; nothing was sent to any server.
    fn refused(&self, call: &RefusedCall);
}

/// The default [`CallTrace`]: a `tracing` warning with the fields `tool_call`, `status`
/// (`"refused"`) and `refusal`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingCallTrace;

impl CallTrace for TracingCallTrace {
    fn refused(&self, call: &RefusedCall) {
        tracing::warn!(
            tool_call = call.tool,
            status = "refused",
            refusal = call.refusal,
            "act refused before sending"
        );
    }
}

/// The presenter's sink, [`TracingCallTrace`] unless one was installed.
#[derive(Clone)]
pub(super) struct Sink(pub(super) Arc<dyn CallTrace>);

impl Default for Sink {
    fn default() -> Self {
        Sink(Arc::new(TracingCallTrace))
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallTrace")
    }
}
