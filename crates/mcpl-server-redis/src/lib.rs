//! Principal state and cross-replica fan-out for `mcpl-server` on Redis, so several server
//! replicas behind one address act as one server (RFC-014 §5.6: toolsets belong to the
//! principal, and every connection of the principal gets every change as hints on its own
//! rev counter).
//!
//! # Design
//!
//! **State.** [`RedisStore`] implements `mcpl_server::PrincipalStore`. Each authenticated
//! principal is one hash, `PREFIX:principal:ID`: `s`, its state as JSON (open toolsets and
//! instances with their options, titles, phase and per-tool visibility and definitions; free
//! tools; presence moves; ended records with their expiry as wall-clock milliseconds; the
//! ended-id and instance-name counters), and `v`, its version. `PREFIX:principals` lists
//! them. Expiries cross processes as wall-clock time; each replica maps them to its own
//! `Instant`s, and sessions drop expired records (§5.3). Per-connection principals never
//! leave their replica and stay in memory.
//!
//! **Atomicity.** Sessions never call the store: they compute a change on the state they
//! were given and ask for a write set with the version they read. A write is one `EVAL` of a
//! Lua script: store the new state and bump the version if the stored version is still the
//! one read, else answer the current state and version. One round trip either way, and no
//! lock across replicas: on a conflict the driver hands the current state to the session,
//! which runs its step again. Two replicas opening the same instance at once: one write
//! marks it opening, the other conflicts, runs again, and finds it (§5.2).
//!
//! **Async.** Every command goes over one `redis` tokio multiplexed connection per store,
//! awaited by the driver on the connection's own task, never blocking a worker thread.
//! Connecting and every command time out after two seconds; a connection left from before a
//! Redis restart is replaced and the command run once more.
//!
//! **Fan-out.** [`Fanout`] sets a `mcpl_server::driver::Relay` on the replica's `Handle`:
//! every change committed on this replica is published, in commit order, on
//! `PREFIX:changes:ID` with the replica's id and the principal's state as stored with it; a
//! pattern subscription receives the other replicas' changes and hands them, with that
//! state, to `Handle::deliver`. Each session takes the state if it is newer than its copy
//! and states the change on its own next rev, so revs stay consecutive per connection on
//! every replica, without reading Redis again.
//!
//! **Losing Redis.** A write that cannot reach Redis fails; the session runs its step again
//! with new opens refused, saying the store is unreachable, and keeps its other changes in
//! its copy until a later write gets through (listings, calls and closes of what is open go
//! on; [`RedisStore::is_available`] turns false). Reads come from the replica's last copy.
//! When Redis returns, the subscriber resubscribes, [`RedisStore::restore`] writes back, with
//! their versions, the principals a restarted Redis lost, and each principal connected here
//! gets a restatement of everything that may have changed, carrying Redis's state, which
//! replaces its sessions' copies: the hosts converge through ordinary hints on their next
//! revs. After a restart without persistence, the first replica to write a principal back
//! wins.
//!
//! **App documents.** State an app keeps itself can be shared too: [`Document::open`]
//! gives a [`Document`], one JSON value at `PREFIX:doc:NAME` edited by optimistic
//! transactions on the store's async connection (read, edit, then one `EVAL` that writes
//! only if the key still holds what was read, rerun when it does not; a value that did not
//! change is not written). Keep one document per game (`PREFIX:doc:game:ID`) so moves of
//! different games never contend. A stored value that does not parse is an error naming the
//! key. While Redis is away every call is an error; a Redis restarted without persistence
//! gets this replica's last copy back on the next update.
//!
//! **Shared and not shared.** Shared: open toolsets and instances, titles, options, tool
//! visibility and definitions, presence moves, ended records, id counters, and app
//! documents. Not shared: per-connection principals, connection ids (an `Opener::Host`
//! names a connection of the replica that opened), and work in flight on a replica.
//!
//! # Layout
//!
//! - `store`: [`RedisStore`], the async `PrincipalStore` (the write and restore scripts).
//! - `doc`: [`Document`], a shared JSON document of an app's own.
//! - `fanout`: [`Fanout`], pub/sub between replicas.
//! - `codec`: key names and the stored form of a principal's state.
//! - `error`: [`Error`].
//! - `local`: [`LocalRedis`], a throwaway `redis-server` child for tests and benchmarks.

mod codec;
mod doc;
mod error;
mod fanout;
mod local;
mod store;

pub use doc::Document;
pub use error::Error;
pub use fanout::Fanout;
pub use local::{LocalRedis, LocalRedisError};
pub use store::RedisStore;
