//! The measurements behind `mcpl bench`. Every figure is a ratio against a baseline measured
//! in the same run, on the same machine, so the numbers travel: a ratio of 0.5 means "half as
//! fast as the baseline here", whatever the machine.
//!
//! The rows, with the ids of the figures `mcpl bench --json` prints (issue #18):
//!
//! 1. **Cache stability** ([`surface`]): a scripted 200-step session with opens, moves,
//!    closes and two games at once through the surface host; the model-facing tool-list
//!    changes and bytes re-sent, against a plain re-listing host and a dynamic-toolsets host
//!    measured from the same states (the surface's own cache meter). `cache_list_changes`.
//! 2. **Controller throughput** ([`controller`]): hint changes the host controller applies per
//!    second, against plain `serde_json` parsing of the same frames. `controller_vs_parse`.
//! 3. **Surface overhead** ([`surface`]): p50 and p99 of `toolsets_act` round trips through
//!    the surface against `tools/call` through a bare relay with the same two hops
//!    ([`relay`], `surface_p50_vs_relay`) and on the arcade directly
//!    (`surface_p50_vs_direct`), all over stdio framing.
//! 4. **Server fan-out and memory** ([`fanout`]): principals with three loopback WebSocket
//!    connections each; with every open fired at once, the time from a change on one
//!    connection to the last of the others receiving its hints, against `ping` round trips
//!    fired the same way (`ws_fanout_p99_vs_ping`); the server's memory per connection
//!    (`ws_kib_per_connection`), per Streamable HTTP session (`http_kib_per_session`) and per
//!    open instance, against bare `mcpl-rpc` peers. The servers run as child processes (the
//!    `mcpl` binary in a [`ChildRole`]) so their memory is theirs alone.
//! 5. **Peer comparison** ([`peers`], feature `rmcp`): tool calls per second of an
//!    `mcpl-server` stdio server against an rmcp server doing the same work
//!    (`calls_vs_rmcp`), and the server time per call above a null server
//!    (`server_time_vs_rmcp`).
//! 6. **Replicas on Redis** ([`replicas`]): the time from a change on one connection to the
//!    last of the principal's other connections receiving its hints, with the connections on
//!    two replicas sharing state through `mcpl-server-redis`, against one replica with the
//!    in-memory store (`redis_p50_vs_memory`). Skipped without `redis-server`.
//! 7. **Handshake timeout** ([`handshake`]): a warm-up wave, then three waves of connections to
//!    `mcpl arcade` that never send `initialize`; each must be closed by the handshake timeout,
//!    and the server's memory after the third wave must be within 10% of after the first.
//! 8. **Plain servers** ([`plain`]): three plain MCP servers of 60 tools behind the
//!    surface's host-side toolsets: tool-list bytes against listing them directly
//!    (`plain_list_bytes_vs_direct`, goal at most 10%), and every byte the model reads over a
//!    scripted 20-step task against calling directly (`plain_task_bytes_vs_direct`).
//! 9. **Change cost** ([`growth`]): the host controller's cost of one hint change with 1,000
//!    open instances against 1 (`change_cost_1000_vs_1`), and the growth curves of that cost
//!    against open instances and tools per instance.
//!
//! Everything here reads the wall clock: it is a benchmark, not a core. Loops are bounded in
//! count and in time, and the WebSocket rows listen on 127.0.0.1 only.
//!
//! # Layout
//!
//! - [`run`](mod@run): [`BenchConfig`], [`run_all`] (every row, `runs` times, medians) and
//!   [`run()`] (every row once).
//! - [`report`]: [`Report`], its rows and figures, goals, the Markdown table and the JSON.
//! - [`progress`]: [`Progress`], the progress bar on stderr.
//! - [`surface`]: rows 1 and 3.
//! - [`relay`]: the bare relay of row 3 and the null server of row 5.
//! - [`chart`]: the SVG bar chart of row 1 and the line charts of the growth curves.
//! - [`controller`]: row 2.
//! - [`fanout`]: row 4, and the child servers it measures ([`ChildRole`], [`serve_child`]).
//! - [`peers`]: row 5.
//! - [`replicas`]: row 6, replicas on Redis.
//! - [`handshake`]: row 7, connections that never initialize.
//! - [`plain`]: row 8, plain servers behind host-side toolsets.
//! - [`growth`]: row 9 and the change-cost curves.
//! - [`stats`]: percentiles and timing helpers.
//! - [`error`](mod@error): [`BenchError`].

pub mod chart;
pub mod controller;
pub mod error;
pub mod fanout;
pub mod growth;
pub mod handshake;
pub mod parsing_relay;
pub mod peers;
pub mod plain;
pub mod progress;
pub mod relay;
pub mod replicas;
pub mod report;
pub mod run;
pub mod stats;
pub mod surface;

pub use error::BenchError;
pub use fanout::{ChildRole, serve_child};
pub use progress::Progress;
pub use report::{Figure, Goal, IDS, Machine, Report, Row, RowOutcome, Unit, machine};
pub use run::{BenchConfig, ROWS, run, run_all};
