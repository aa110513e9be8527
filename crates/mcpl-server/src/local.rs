//! Answering a session's store effects in place, without a runtime: for harnesses that
//! drive sessions themselves over a [`MemoryStore`] (tests, simulations).
//!
//! These are methods of [`Session`] and [`Server`], which already build on the store, taking
//! the store as an argument: so the store knows nothing of sessions or servers.

use crate::error::Error;
use crate::principal::Principal;
use crate::server::Server;
use crate::session::{Effect, Session};
use crate::store::{MemoryStore, Versioned, WriteSet, Written};
use crate::update::{PrincipalChange, Update};
use std::time::Instant;

impl Session {
    /// Answers `effect` from `store` now when it is a store read or write
    /// ([`Effect::Load`], [`Effect::Write`]); hands any other effect back.
    pub fn answer_from(
        &mut self,
        store: &MemoryStore,
        now: Instant,
        effect: Effect,
    ) -> Option<Effect> {
        match effect {
            Effect::Load(principal) => {
                self.handle_state(now, store.load_now(&principal));
                None
            }
            Effect::Write(write) => {
                match store.write_now(&write) {
                    Written::Done { version } => self.handle_written(now, version),
                    Written::Conflict(stored) => self.handle_conflict(now, stored),
                }
                None
            }
            other => Some(other),
        }
    }
}

impl Server {
    /// Commits `update` to `principal`'s state in `store` now ([`Server::apply_to`] on the
    /// stored state, written back, run again on a conflict) and returns the change, carrying
    /// the stored state, for the principal's sessions. A bad update changes nothing.
    pub fn apply_now(
        &self,
        store: &MemoryStore,
        now: Instant,
        principal: &Principal,
        update: &Update,
    ) -> Result<PrincipalChange, Error> {
        let mut stored = store.load_now(principal);
        loop {
            let mut state = stored.state.clone();
            let change =
                self.apply_to(now, principal, std::sync::Arc::make_mut(&mut state), update)?;
            let write = WriteSet {
                principal: principal.clone(),
                read: stored.version,
                state: Some(state.clone()),
            };
            match store.write_now(&write) {
                Written::Done { version } => {
                    return Ok(change.with_state(Versioned { state, version }));
                }
                Written::Conflict(now) => stored = now,
            }
        }
    }
}
