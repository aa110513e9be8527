//! The measurements behind `mcpl bench`. Every figure is a ratio against a baseline measured
//! in the same run, on the same machine, so the numbers travel: a ratio of 0.5 means "half as
//! fast as the baseline here", whatever the machine.
//!
//! The rows (the numbering):
//!
//! 1. **Cache stability** and 3. **surface overhead** need the surface host; while it is not
//!    built they are reported as such, never with a number.
//! 2. **Controller throughput** ([`controller`]): hint changes the host controller applies per
//!    second, against plain `serde_json` parsing of the same frames.
//! 4. **Server fan-out** ([`fanout`]): principals with three loopback WebSocket connections
//!    each; the time from a change on one connection to the last of the others receiving its
//!    hints, against a `ping` round trip; and the server's memory per connection and per open
//!    instance, against a bare `mcpl-rpc` WebSocket peer. The servers run as child processes
//!    (the `mcpl` binary in a [`ChildRole`]) so their memory is theirs alone.
//! 5. **Peer comparison** ([`peers`], feature `rmcp`): tool calls per second of an
//!    `mcpl-server` stdio server against an rmcp server doing the same work.
//!
//! Everything here reads the wall clock: it is a benchmark, not a core. Loops are bounded in
//! count and in time, and the WebSocket rows listen on 127.0.0.1 only.
//!
//! # Layout
//!
//! - [`run`](mod@run): [`BenchConfig`] and [`run()`], which runs every row in order.
//! - [`report`]: [`Report`], its rows and figures, and the Markdown table.
//! - [`progress`]: [`Progress`], the progress bar on stderr.
//! - [`controller`]: row 2.
//! - [`fanout`]: row 4, and the child servers it measures ([`ChildRole`], [`serve_child`]).
//! - [`peers`]: row 5.
//! - [`stats`]: percentiles and timing helpers.
//! - [`error`](mod@error): [`BenchError`].

pub mod controller;
pub mod error;
pub mod fanout;
pub mod peers;
pub mod progress;
pub mod report;
pub mod run;
pub mod stats;

pub use error::BenchError;
pub use fanout::{ChildRole, serve_child};
pub use progress::Progress;
pub use report::{Figure, Report, Row, RowOutcome, Unit, machine};
pub use run::{BenchConfig, run};
