//! The reference fixture: a small, correct RFC-014 server that meets the [fixture
//! contract](crate::fixture), written straight on `mcpl-rpc`, with [`Faults`] that break it one
//! rule at a time (the broken fixtures the suite is tested against).
//!
//! It is a test subject, not an SDK: it shows a server author in any language what the suite
//! expects, and lets the suite be run end to end (`mcpl-conformance-fixture` serves it on stdio
//! or WebSocket). One task per connection writes every message, so allocating a rev and writing
//! its message are one step (§6.1). Principal state lives in a [`Principal`] shared by the
//! connections of one principal; changes made on one connection reach the others as hint
//! changes on their own revs (§5.6).
//!
//! - this file: [`Principal`], [`ReferenceServer`], [`serve`] and the connection loop.
//! - `world`: [`Faults`] and what connections share; `session`: one connection's answers;
//!   `call`: its `tools/call`.

mod call;
mod session;
mod world;

use crate::target::{BoxFuture, Connector, Unreachable};
use mcpl_rpc::{Event, Peer, PeerConfig, Transport};
use serde_json::json;
use session::Session;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
pub use world::Faults;
use world::{World, lock};

/// The state of one principal, shared by its connections. Cheap to clone.
#[derive(Clone)]
pub struct Principal {
    world: Arc<Mutex<World>>,
}

impl Default for Principal {
    fn default() -> Self {
        Principal::new()
    }
}

impl Principal {
    /// A principal with nothing open (the default-open toolset aside).
    pub fn new() -> Self {
        Principal {
            world: Arc::new(Mutex::new(World::new())),
        }
    }
}

/// Opens in-memory connections to the reference fixture: a [`Connector`] for
/// [`crate::ServerTarget::Connector`].
pub struct ReferenceServer {
    faults: Faults,
    shared: Option<Principal>,
}

impl ReferenceServer {
    /// A fixture whose connections all act for one principal.
    pub fn shared(faults: Faults) -> Arc<ReferenceServer> {
        Arc::new(ReferenceServer {
            faults,
            shared: Some(Principal::new()),
        })
    }

    /// A fixture whose every connection is its own principal.
    pub fn separate(faults: Faults) -> Arc<ReferenceServer> {
        Arc::new(ReferenceServer {
            faults,
            shared: None,
        })
    }
}

impl Connector for ReferenceServer {
    fn connect(&self) -> BoxFuture<'_, Result<Transport, Unreachable>> {
        let principal = self.shared.clone().unwrap_or_default();
        let faults = self.faults;
        Box::pin(async move {
            let (ours, theirs) = Transport::memory_pair();
            tokio::spawn(serve(ours, principal, faults));
            Ok(theirs)
        })
    }

    fn shares_principal(&self) -> bool {
        self.shared.is_some()
    }

    fn describe(&self) -> String {
        format!("in-memory reference fixture {:?}", self.faults)
    }
}

/// Serves one connection of `principal` on `transport` until it closes.
pub async fn serve(transport: Transport, principal: Principal, faults: Faults) {
    let world = principal.world;
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let me = {
        let mut w = lock(&world);
        let me = w.next_conn;
        w.next_conn += 1;
        w.conns.push((me, tx.clone()));
        me
    };
    let mut s = Session {
        peer,
        world: world.clone(),
        faults,
        me,
        tx,
        rev: 0,
        allocated: 0,
        hinted: false,
        push: false,
        revealed: false,
        current: None,
        cancelled: HashSet::new(),
        events: 0,
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                None | Some(Event::Closed { .. }) => break,
                Some(Event::Request { request, responder, .. }) => {
                    let params = request.params.clone().unwrap_or(json!({}));
                    s.request(&request.method, params, request.id.clone(), responder);
                }
                Some(Event::Notification { .. }) => {}
                Some(Event::Cancelled { id, .. }) => { s.cancelled.insert(id); }
                Some(_) => {}
            },
            Some(work) = rx.recv() => s.internal(work),
        }
    }
    let mut w = lock(&world);
    w.conns.retain(|(id, _)| *id != me);
    if faults.forget_on_disconnect {
        w.instances.clear();
    }
}
