//! Principal state and cross-replica fan-out for `mcpl-server` on Redis, so several server
//! replicas behind one address act as one server (RFC-014 §5.6: toolsets belong to the
//! principal, and every connection of the principal gets every change as hints on its own
//! rev counter).
//!
//! # Design
//!
//! **State.** [`RedisStore`] implements `mcpl_server::PrincipalStore`. Each authenticated
//! principal has one JSON blob (`PREFIX:state:ID`: open toolsets and instances with their
//! options, titles, phase and per-tool visibility and definitions; free tools; presence
//! moves; the ended-id and instance-name counters). Each `ended` record is a key of its own
//! (`PREFIX:end:N:ID`) written with `SET … PXAT expiry`, so Redis expires it, not a sweeper
//! of ours; `PREFIX:ends:ID` indexes them. Expiries cross processes as wall-clock
//! milliseconds; each replica maps them to its own `Instant`s. Per-connection principals
//! never leave their replica and stay in memory.
//!
//! **Atomicity.** Every `update` is an optimistic transaction: `WATCH` the blob, read, run
//! the closure on the fresh copy, write with `MULTI`/`EXEC`; an aborted `EXEC` (another
//! replica wrote first) reruns the closure on the newer copy. There is no client-side lock
//! across replicas. This needs the closure to be a pure edit of the state it is given, and
//! `mcpl_server::with_state` now documents that contract (every call site in `mcpl-server`
//! was checked: each computes only from the state and values it reads). Two replicas opening
//! the same instance at once: one transaction inserts it, the other reruns, finds it, and
//! adopts it (§5.2). An id counter that lives in the blob is only ever advanced inside such a
//! transaction, so ended ids are never reused.
//!
//! **Calling Redis from a synchronous seam.** The session core is sans-IO and calls the store
//! synchronously; the store uses the `redis` crate's blocking connection (one per replica,
//! loopback-fast), so the core stays pure and no runtime is entered from inside it. A
//! command blocks its tokio worker for one Redis round trip.
//!
//! **Fan-out.** [`Fanout`] sets a `mcpl_server::driver::Relay` on the replica's `Handle`:
//! every change committed on this replica is published, in commit order, on
//! `PREFIX:changes:ID` with the replica's id; a pattern subscription receives the other
//! replicas' changes and hands them to `Handle::deliver`, which gives them to this replica's
//! sessions of the principal exactly like an in-process change. Each session reads the
//! current state from Redis and states it on its own next rev, so revs stay consecutive per
//! connection on every replica.
//!
//! **Losing Redis.** A replica that cannot reach Redis refuses new opens with an error
//! saying so (`PrincipalStore::refuse_opens`, which pings Redis before each open), and keeps
//! serving what it can from its last copy of each principal: listings, calls and closes of
//! what is open ([`RedisStore::is_available`] turns false; changes made meanwhile stay on
//! this replica). Its subscriber reconnects and resubscribes when Redis returns; then
//! [`RedisStore::restore`] writes back the principals a restarted Redis lost (any update of
//! such a principal does the same), and each principal connected here gets a change that
//! restates every toolset, instance and free tool that may have changed meanwhile, so its
//! hosts converge on Redis's state through ordinary hints on their next revs. After a
//! restart without persistence, the first replica to write a principal back wins.
//!
//! **Shared and not shared.** Shared: open toolsets and instances, titles, options, tool
//! visibility and definitions, presence moves, ended records, id counters. Not shared: app
//! state the app keeps itself (a game's board), per-connection principals, connection ids
//! (an `Opener::Host` names a connection of the replica that opened).
//!
//! # Layout
//!
//! - `store`: [`RedisStore`], the `PrincipalStore`.
//! - `fanout`: [`Fanout`], pub/sub between replicas.
//! - `codec`: key names and the stored form of a principal's state.
//! - `error`: [`Error`].

mod codec;
mod error;
mod fanout;
mod store;

pub use error::Error;
pub use fanout::Fanout;
pub use store::RedisStore;
