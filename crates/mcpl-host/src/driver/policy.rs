//! The host's grant policy and inline cap.

use std::time::Duration;

/// The default cap on what a result may carry beside its own text, in bytes (H84, H88).
pub const DEFAULT_INLINE_CAP: usize = 16_000;

/// The host's grant policy for the servers it connects, and its inline cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    /// Grant `pushEvents` (sent as the initial `featureSets/update`); notices need it (H47).
    pub grant_push_events: bool,
    /// How long `featureSets/update` may take.
    pub policy_timeout: Duration,
    /// The most bytes a result and the change appended to it may take (H84, H88); a change
    /// that does not fit is told as a notice instead. `None`: no cap.
    pub inline_cap: Option<usize>,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            grant_push_events: true,
            policy_timeout: Duration::from_secs(10),
            inline_cap: Some(DEFAULT_INLINE_CAP),
        }
    }
}
