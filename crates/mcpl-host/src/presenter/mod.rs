//! The presenter: one model-facing picture across every server connection.
//!
//! It reads controller snapshots and changes (never a controller's fields) and keeps:
//! - the **published tool list**: every server's static tools plus the four meta-tools (and,
//!   with projection on, the visible dynamic tools), with a digest and a count of its changes;
//! - each **agent's window queue**: changes owed as notices, told once and in read order, and
//!   the changes that ride with a result where the result reaches the agent;
//! - the **meta-tools**: selector checks, resolution by the two-view rule (§4.2, H37), the
//!   argument check, and the text of look, refusals and outcomes;
//! - **withheld events**: per server, why its events cannot reach the agent (an older MCPL
//!   server without `featureSets/update`, a feature set needing an ungranted capability),
//!   told once and shown by look.
//!
//! Like the controller it reads no clock and performs no I/O.

mod agent;
mod answer;
mod check;
mod link;
mod link_state;
mod meta;
mod meta_tools;
mod naming;
mod notice;
mod plan;
mod projection;
mod queue;
mod refusal;
pub mod render;
mod search;
mod state;
mod trace;
mod window;
mod withheld;
mod withheld_reason;

pub use agent::AgentId;
pub use answer::{can_carry, result_text};
pub use check::{ArgCheck, check_args};
pub use link_state::LinkState;
pub use meta_tools::{META_ACT, META_CLOSE, META_LOOK, META_OPEN};
pub use naming::projected_name;
pub use notice::event_line;
pub use plan::{LookQuery, Plan};
pub use queue::{MAX_NOTICE, Token, Waiting, WaitingState, WindowItem};
pub use refusal::{Refusal, Wanted, open_call};
pub use search::{SEARCH_TOP, words};
pub use state::{Presenter, PresenterConfig, window_cap};
pub use trace::{CallTrace, RefusedCall, TracingCallTrace};
pub use withheld_reason::{Withheld, needs_ungranted};
