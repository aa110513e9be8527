//! The handle of a command the controller runs (an id: a leaf).

/// An opaque handle for a command (open, close, call, toolsets refresh); its answer comes back
/// as [`Effect::Answered`](super::Effect::Answered) with the same handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pending(pub(super) u64);
