//! The value the model reads for one of its tool calls (`answers.rs` words it).

use serde_json::Value;

/// What the model reads for one of its tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text: the outcome, then anything the answer carries.
    pub text: String,
    /// True when the call was refused, failed, or its outcome is unknown.
    pub is_error: bool,
    /// What the answer carries after the outcome (changes, news), empty when nothing; the
    /// end of [`text`](Self::text).
    pub news: String,
    /// The server's own tool result, for a call that was answered (an embedder may pass its
    /// content blocks on as they are and add [`news`](Self::news) as the last block, H83).
    pub result: Option<Value>,
}
