//! Answering a session's store effects in place, without a runtime: for harnesses that
//! drive sessions themselves over a [`MemoryStore`] (tests, simulations).

use crate::error::Error;
use crate::principal::Principal;
use crate::server::Server;
use crate::session::{Effect, Session};
use crate::store::{MemoryStore, Versioned, WriteSet, Written};
use crate::update::{PrincipalChange, Update};
use std::time::Instant;

impl MemoryStore {
    /// Answers `effect` for `session` now when it is a store read or write
    /// ([`Effect::Load`], [`Effect::Write`]); hands any other effect back.
    pub fn serve(&self, now: Instant, session: &mut Session, effect: Effect) -> Option<Effect> {
        match effect {
            Effect::Load(principal) => {
                session.handle_state(now, self.load_now(&principal));
                None
            }
            Effect::Write(write) => {
                match self.write_now(&write) {
                    Written::Done { version } => session.handle_written(now, version),
                    Written::Conflict(stored) => session.handle_conflict(now, stored),
                }
                None
            }
            other => Some(other),
        }
    }

    /// Commits `update` to `principal`'s state now ([`Server::apply_to`] on the stored state,
    /// written back, run again on a conflict) and returns the change, carrying the stored
    /// state, for the principal's sessions. A bad update changes nothing.
    pub fn apply_now(
        &self,
        server: &Server,
        now: Instant,
        principal: &Principal,
        update: &Update,
    ) -> Result<PrincipalChange, Error> {
        let mut stored = self.load_now(principal);
        loop {
            let mut state = stored.state.clone();
            let change =
                server.apply_to(now, principal, std::sync::Arc::make_mut(&mut state), update)?;
            let write = WriteSet {
                principal: principal.clone(),
                read: stored.version,
                state: Some(state.clone()),
            };
            match self.write_now(&write) {
                Written::Done { version } => {
                    return Ok(change.with_state(Versioned { state, version }));
                }
                Written::Conflict(now) => stored = now,
            }
        }
    }
}
