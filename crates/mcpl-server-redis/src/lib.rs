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
//! and one per document, loopback-fast), so the core stays pure and no runtime is entered
//! from inside it. A command blocks its tokio worker for one Redis round trip; connecting
//! and every command time out after two seconds, so an unreachable Redis is an error.
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
//! **App documents.** State an app keeps itself can be shared the same way:
//! [`RedisStore::document`] gives a [`Document`], one JSON value at `PREFIX:doc:NAME`
//! edited by the same optimistic transactions (`WATCH`, read, edit, `MULTI`/`EXEC`, rerun
//! on abort; a value that did not change is not written). A stored value that does not
//! parse is an error naming the key, never silently replaced. A document keeps no copy on
//! the replica: while Redis is away every call is an error (the app decides what to tell
//! its players), and a Redis restarted without persistence has lost it (`restore` brings
//! back principal state only). It has a connection of its own and reports reachability to
//! the store.
//!
//! **Shared and not shared.** Shared: open toolsets and instances, titles, options, tool
//! visibility and definitions, presence moves, ended records, id counters, and app documents
//! (the arcade's games: boards, seats, challenges and standings live in one document, so any
//! replica can serve the next move). Not shared: per-connection principals, connection ids
//! (an `Opener::Host` names a connection of the replica that opened), and work in flight on
//! a replica (the arcade's bot thinks on the replica that served the move).
//!
//! # Layout
//!
//! - `store`: [`RedisStore`], the `PrincipalStore`.
//! - `doc`: [`Document`], a shared JSON document of an app's own.
//! - `link`: one blocking connection with timeouts, reopened after a failure.
//! - `fanout`: [`Fanout`], pub/sub between replicas.
//! - `codec`: key names and the stored form of a principal's state.
//! - `error`: [`Error`].

mod codec;
mod doc;
mod error;
mod fanout;
mod link;
mod store;

pub use doc::Document;
pub use error::Error;
pub use fanout::Fanout;
pub use store::RedisStore;
