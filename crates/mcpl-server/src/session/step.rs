//! Steps: how a session runs its inputs on its copy of the principal's state, stores what
//! changed, and runs a step again when another writer got in first.
//!
//! Every input (a frame, an app outcome, a published change, a timeout, a disconnect) runs
//! as one step on `Session::state`. A step that changed the state ends with one
//! [`Effect::Write`] carrying the version it read; its other effects (answers, pushes, app
//! calls, publications) are held back until the driver acknowledges the write, so nothing
//! leaves the session that the store might refuse. On a conflict the session puts back
//! everything the step changed on the connection (revs, calls, current instances), takes
//! the state the store holds now and runs the step's inputs again. When the store is
//! unreachable the step runs again with opens refused, and its other changes stay in the
//! session's copy until a later write gets through.

use super::data::{Input, Snapshot, Staged};
use super::{Effect, Session};
use crate::context::Outcome;
use crate::error::Error;
use crate::principal::CallId;
use crate::store::{Versioned, WriteSet};
use crate::update::seed;
use std::sync::Arc;
use std::time::Instant;

impl Session {
    /// Runs `input` now, or queues it while the session waits for its state or a write.
    pub(super) fn submit(&mut self, input: Input) -> Result<(), Error> {
        if !self.loaded || self.staged.is_some() {
            self.inbox.push_back(input);
            return Ok(());
        }
        self.run(vec![input])
    }

    /// Whether an outcome for `call` is waiting in the inbox (then it is not unknown).
    pub(super) fn inbox_has_call(&self, call: CallId) -> bool {
        self.inbox
            .iter()
            .any(|i| matches!(i, Input::CallDone(_, c, _) if *c == call))
    }

    /// Edits the principal's state; the step will store it. The first edit of a step copies
    /// the state if anything else holds it (the step's snapshot, the store, a published
    /// change, another session); later edits in the same step do not.
    pub(super) fn edit<R>(&mut self, f: impl FnOnce(&mut crate::store::PrincipalState) -> R) -> R {
        self.dirty = true;
        f(Arc::make_mut(&mut self.state))
    }

    /// Forgets the principal's state at the end of this step (§5.6).
    pub(super) fn forget_state(&mut self) {
        self.state = Default::default();
        self.forget = true;
        self.dirty = true;
    }

    /// Takes `stored` as the session's copy when it is newer and the copy holds nothing
    /// unstored.
    pub(super) fn adopt(&mut self, stored: &Versioned) {
        if stored.version > self.version && !self.dirty {
            self.take_state(stored.clone());
        }
    }

    /// Takes `stored` as the session's copy whatever the versions say: the store's state
    /// after an outage, which wins over changes this session could not store.
    pub(super) fn restate_from(&mut self, stored: &Versioned) {
        self.dirty = false;
        self.take_state(stored.clone());
    }

    fn take_state(&mut self, stored: Versioned) {
        self.state = stored.state;
        self.version = stored.version;
        self.forget = false;
        if !self.state.seeded {
            // §5.1: default-open toolsets open with the principal's first session.
            seed(&self.server.catalog(), Arc::make_mut(&mut self.state));
            self.dirty = true;
        }
    }

    /// Feeds the principal's stored state, answering [`Effect::Load`]. Inputs that waited
    /// for it run now.
    pub fn handle_state(&mut self, _now: Instant, stored: Versioned) {
        if !self.loaded {
            self.loaded = true;
            self.first_read = stored.version;
            self.take_state(stored);
        } else {
            self.adopt(&stored);
        }
        self.run_inbox();
    }

    /// The store took the step's [`Effect::Write`] as `version`: the step's held effects
    /// are released, and inputs that waited run.
    pub fn handle_written(&mut self, _now: Instant, version: u64) {
        let Some(staged) = self.staged.take() else {
            return;
        };
        self.version = version;
        self.dirty = false;
        let stored = (!self.forget).then(|| {
            Arc::new(Versioned {
                state: self.state.clone(),
                version,
            })
        });
        self.forget = false;
        for mut effect in staged.held {
            // Other sessions of the principal take the state as stored with the change.
            if let Effect::Publish(change) = &mut effect
                && change.principal == self.principal
            {
                change.state = stored.clone();
            }
            self.effects.push_back(effect);
        }
        self.run_inbox();
    }

    /// The store refused the step's [`Effect::Write`] because another writer got in first;
    /// `stored` is what it holds now. The step runs again on it, as if it had never run.
    pub fn handle_conflict(&mut self, _now: Instant, stored: Versioned) {
        let Some(staged) = self.unwind() else {
            return;
        };
        self.dirty = staged.snapshot.dirty;
        self.state = staged.snapshot.state;
        self.version = staged.snapshot.version;
        if self.dirty {
            // Changes kept while the store was away are lost to the newer state; say so.
            tracing::warn!(principal = %self.principal, "unstored changes dropped for the store's newer state");
        }
        self.dirty = false;
        self.take_state(stored);
        self.rerun(staged.inputs);
    }

    /// The store could not take the step's [`Effect::Write`] (`why`). The step runs again
    /// with new opens refused, saying `why` (an open the principal's other replicas cannot
    /// see must not happen); its other changes stay in this session's copy and are stored
    /// with the next write that gets through.
    pub fn handle_store_error(&mut self, _now: Instant, why: &str) {
        let Some(staged) = self.unwind() else {
            return;
        };
        self.state = staged.snapshot.state;
        self.version = staged.snapshot.version;
        self.dirty = staged.snapshot.dirty;
        self.forget = staged.snapshot.forget;
        self.store_down = Some(format!(
            "cannot open now: the shared principal store is unreachable ({why}); try again later"
        ));
        self.rerun(staged.inputs);
    }

    /// Why opens are refused in this step, if they are.
    pub(super) fn refuse_opens(&self) -> Option<String> {
        self.store_down.clone()
    }

    /// Puts the connection back as it was before the staged step; returns the step.
    fn unwind(&mut self) -> Option<Staged> {
        let mut staged = self.staged.take()?;
        for effect in staged.held.drain(..) {
            if let Effect::Committed { call, hooks } = effect {
                self.rerun_hooks.insert(call, hooks);
            }
        }
        let s = &staged.snapshot;
        self.host = s.host;
        self.rev = s.rev;
        self.calls = s.calls.clone();
        self.by_request = s.by_request.clone();
        self.next_call = s.next_call;
        self.next_out = s.next_out;
        self.current = s.current.clone();
        self.announced = s.announced.clone();
        self.disconnected = s.disconnected;
        self.pending_events = s.pending_events.clone();
        self.forget = s.forget;
        Some(staged)
    }

    fn rerun(&mut self, inputs: Vec<Input>) {
        if let Err(e) = self.run(inputs) {
            tracing::warn!(error = %e, "an input failed when its step ran again");
        }
        // Store failures refuse opens for that one run only; the next step tries again.
        self.store_down = None;
        if self.staged.is_none() {
            self.run_inbox();
        }
    }

    fn run_inbox(&mut self) {
        if !self.loaded || self.staged.is_some() || self.inbox.is_empty() {
            return;
        }
        let inputs: Vec<Input> = self.inbox.drain(..).collect();
        if let Err(e) = self.run(inputs) {
            tracing::warn!(error = %e, "a queued input failed");
        }
    }

    /// Runs `inputs` as one step; returns the first error.
    fn run(&mut self, inputs: Vec<Input>) -> Result<(), Error> {
        let snapshot = Snapshot {
            host: self.host,
            rev: self.rev,
            calls: self.calls.clone(),
            by_request: self.by_request.clone(),
            next_call: self.next_call,
            next_out: self.next_out,
            current: self.current.clone(),
            announced: self.announced.clone(),
            disconnected: self.disconnected,
            pending_events: self.pending_events.clone(),
            state: self.state.clone(),
            version: self.version,
            dirty: self.dirty,
            forget: self.forget,
        };
        let mark = self.effects.len();
        let kept: Vec<Input> = inputs.iter().map(Input::duplicate).collect();
        let mut first = None;
        for input in inputs {
            let result = match input {
                Input::Message(now, m) => {
                    self.message(now, m);
                    Ok(())
                }
                Input::CallDone(now, call, outcome) => self.call_done(now, call, *outcome),
                Input::Change(now, change) => {
                    self.principal_change(now, &change);
                    Ok(())
                }
                Input::Catalog(_) => {
                    self.catalog_change();
                    Ok(())
                }
                Input::Timeout(now) => {
                    self.expire(now);
                    Ok(())
                }
                Input::Disconnect(now) => {
                    self.disconnect(now);
                    Ok(())
                }
            };
            if let Err(e) = result {
                first.get_or_insert(e);
            }
        }
        if self.dirty && self.store_down.is_none() {
            let held = self.effects.split_off(mark);
            let write = WriteSet {
                principal: self.principal.clone(),
                read: self.version,
                state: (!self.forget).then(|| self.state.clone()),
            };
            self.effects.push_back(Effect::Write(write));
            self.staged = Some(Staged {
                snapshot,
                inputs: kept,
                held,
            });
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Outcome {
    /// A copy without the hooks (they run once, from the first run).
    pub(crate) fn duplicate(&self) -> Outcome {
        Outcome {
            context: self.context.duplicate(),
            reply: self.reply.clone(),
        }
    }
}
