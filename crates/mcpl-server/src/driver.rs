//! The tokio driver: runs one [`Session`] per connection over an `mcpl-rpc` [`Peer`], runs app
//! code for each [`Effect::Call`], runs the principal store for each [`Effect::Load`],
//! [`Effect::Write`] and [`Effect::Apply`], and fans principal changes out between
//! connections.
//!
//! Thin by design: every `if` on RFC-014 state lives in the session core. The driver reads
//! the clock, feeds events in read order, awaits the store (on the connection's own task,
//! never blocking a worker thread), and writes `Send`s in the order they were polled.
//! Changes made on the server's initiative ([`Handle::apply`]) are committed in order by one
//! task per [`Handle`]: read the principal's state, [`Server::apply_to`], write it if its
//! version is unchanged, and on a conflict run again on the state the store returned.

use crate::context::{Call, CallKind, CloseReply, Context, OpenReply, Outcome, Reply};
use crate::decl::Catalog;
use crate::error::Error;
use crate::listen_options::ListenOptions;
use crate::observe::{OBSERVER_CAPACITY, Observation, hints_of};
use crate::principal::CallId;
use crate::principal::{ConnectionId, Identity, Principal};
use crate::server::Server;
use crate::session::{Effect, Session};
use crate::store::{PrincipalState, Versioned, WriteSet, Written};
use crate::update::{Event, PrincipalChange, Update};
use futures_util::FutureExt;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::methods;
use mcpl_rpc::{Event as RpcEvent, Peer, PeerConfig, Transport};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Instant;
use tokio::sync::mpsc;

/// What a server does: app code the SDK calls with a [`Context`].
///
/// Record state changes through the context (`ctx.show("play")`, `ctx.here().define(..)`,
/// `ctx.update_for(&opponent)`); the SDK turns them into hint changes on the right carrier.
/// Start follow-up work that must come after the call in rev order from
/// [`Context::after_commit`]: the driver runs those hooks right after it hands the call's
/// answer to the transport. If the host cancels a call, its app code runs on (the recorded
/// changes still reach the host, as `tools/hints`); check [`Context::is_cancelled`] to stop
/// early.
///
/// The driver polls a call's future once on the connection's own task: code that finishes
/// without waiting (most tool calls) is answered with no task spawned; code that waits goes
/// on in a task of its own. Long computations should therefore await (or move to
/// `tokio::task::spawn_blocking`) rather than block before their first await.
pub trait App: Send + Sync + 'static {
    /// Runs tool `tool` with `args`, already checked against the tool's current definition in
    /// the context's scope. Return `isError` results for tool failures.
    fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> impl Future<Output = CallToolResult> + Send;

    /// Opens the context's toolset or instance (options in `ctx.options()`, validated). The
    /// default opens it with every tool at its declared visibility.
    fn open(&self, ctx: &mut Context) -> impl Future<Output = OpenReply> + Send {
        let _ = ctx;
        async { OpenReply::default() }
    }

    /// Closes the context's toolset or instance; `disconnect` is true when a per-connection
    /// principal's connection went away (§5.6). The default closes it without comment.
    fn close(
        &self,
        ctx: &mut Context,
        disconnect: bool,
    ) -> impl Future<Output = CloseReply> + Send {
        let _ = (ctx, disconnect);
        async { CloseReply::default() }
    }
}

enum Command {
    Done(CallId, Box<Outcome>),
    Change(Arc<PrincipalChange>),
    Catalog,
}

/// A session's inbox: the small queue of `mcpl-rpc` rather than a tokio channel, which would
/// cost every connection about 0.8 KiB more for as long as it lives.
type Inbox = mcpl_rpc::queue::QueueSender<Command>;

/// Carries principal changes to the other processes (replicas) of the same server, e.g. by
/// Redis pub/sub. Set one with [`Handle::set_relay`]; the relay hands what it receives from
/// the others to [`Handle::deliver`].
pub trait Relay: Send + Sync + 'static {
    /// Sends `change`, committed in this process, to the other replicas. Called for changes of
    /// authenticated principals only: a per-connection principal lives in one process.
    fn publish(&self, change: &PrincipalChange);
}

/// Work for the [`Handle`]'s committer task, done in order.
enum Job {
    /// Commit an update on the server's initiative; answer on `done` if given.
    Apply {
        principal: Principal,
        update: Update,
        done: Option<tokio::sync::oneshot::Sender<Result<(), Error>>>,
    },
    /// End what is open of removed toolsets for every principal, then announce the new
    /// declarations to every session.
    Catalog(crate::server::Removed),
}

/// The in-process fan-out: each principal's connected sessions, plus an optional [`Relay`]
/// to other replicas.
struct Hub {
    sessions: Mutex<HashMap<Principal, Vec<(ConnectionId, Inbox)>>>,
    all: Mutex<HashMap<ConnectionId, Inbox>>,
    next_connection: AtomicU64,
    relay: OnceLock<Arc<dyn Relay>>,
    /// Where this process's `push/event` ids start: random per process, so ids never repeat
    /// across processes or restarts.
    event_prefix: String,
    /// Writes refused because another writer got in first (each was run again).
    conflicts: AtomicU64,
    /// The committer task's queue, started on first use.
    jobs: OnceLock<mpsc::UnboundedSender<Job>>,
    /// The observer channel, made by the first [`Handle::observe`]; unset, nothing is built.
    observer: OnceLock<tokio::sync::broadcast::Sender<Observation>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            sessions: Mutex::default(),
            all: Mutex::default(),
            next_connection: AtomicU64::new(0),
            relay: OnceLock::new(),
            event_prefix: process_prefix(),
            conflicts: AtomicU64::new(0),
            jobs: OnceLock::new(),
            observer: OnceLock::new(),
        }
    }
}

/// A random prefix for this process's event ids: 64 bits from the standard library's
/// per-process random hash keys, with the process id and the time mixed in.
fn process_prefix() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:016x}", h.finish())
}

impl Hub {
    /// Hands a record to the observer, if one is attached (never blocks; a full channel drops
    /// the oldest records).
    fn observe(&self, record: impl FnOnce() -> Option<Observation>) {
        if let Some(tx) = self.observer.get()
            && let Some(record) = record()
        {
            let _ = tx.send(record);
        }
    }

    fn publish(&self, change: PrincipalChange) {
        if let Some(relay) = self.relay.get()
            && !change.principal.ends_at_disconnect()
            && !change.is_empty()
        {
            relay.publish(&change);
        }
        self.deliver(change);
    }

    /// Hands `change` to this process's sessions of its principal only.
    fn deliver(&self, change: PrincipalChange) {
        let change = Arc::new(change);
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        for (_, tx) in sessions.get(&change.principal).into_iter().flatten() {
            let _ = tx.send(Command::Change(change.clone()));
        }
    }
}

/// The app-facing handle of a running server: change principal state and push events from
/// anywhere (a bot task, a timer), replace the declarations. Cheap to clone; make it before
/// the app so the app can keep one.
#[derive(Clone)]
pub struct Handle {
    server: Server,
    hub: Arc<Hub>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl Handle {
    /// Attaches a watcher: a bounded receiver of [`Observation`]s from now on. A slow
    /// receiver misses records (`Lagged`) and never holds up a connection.
    pub fn observe(&self) -> tokio::sync::broadcast::Receiver<Observation> {
        self.hub
            .observer
            .get_or_init(|| tokio::sync::broadcast::channel(OBSERVER_CAPACITY).0)
            .subscribe()
    }

    /// A handle for `server`, with no connections yet.
    pub fn new(server: Server) -> Self {
        Handle {
            server,
            hub: Arc::new(Hub::default()),
        }
    }

    /// The shared server (declarations, store, settings).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Changes `principal`'s state on the server's initiative and tells every connection of
    /// the principal: on a push that carries the hints when the update has an [`Event`] and
    /// the host granted `pushEvents`, else as `tools/hints` (§6.2). Target an instance with
    /// [`Update::instance`] and [`Event::about`]. An update the declarations refuse changes
    /// nothing and is an `Err` here; the commit itself runs on the handle's committer task,
    /// in call order (one that only the principal's state refuses is logged). Call it inside
    /// a tokio runtime.
    pub fn apply(&self, principal: &Principal, update: Update) -> Result<(), Error> {
        crate::update::check(&self.server.catalog(), &update)?;
        self.job(Job::Apply {
            principal: principal.clone(),
            update,
            done: None,
        });
        Ok(())
    }

    /// [`apply`](Self::apply), waiting until the change is stored and handed to the
    /// principal's sessions.
    pub async fn apply_now(&self, principal: &Principal, update: Update) -> Result<(), Error> {
        crate::update::check(&self.server.catalog(), &update)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.job(Job::Apply {
            principal: principal.clone(),
            update,
            done: Some(tx),
        });
        rx.await
            .unwrap_or_else(|_| Err(Error::Store("the committer task stopped".into())))
    }

    /// `principal`'s stored state as its first connection would see it (default-open
    /// toolsets open). A read: the store is not changed.
    pub async fn state(&self, principal: &Principal) -> Result<PrincipalState, Error> {
        let stored = self
            .server
            .store()
            .load(principal)
            .await
            .map_err(|e| Error::Store(e.to_string()))?;
        Ok(self.server.seeded(Arc::unwrap_or_clone(stored.state)))
    }

    /// How many writes were refused because another writer (another connection, another
    /// replica) got in first; each was run again on the newer state.
    pub fn conflicts(&self) -> u64 {
        self.hub.conflicts.load(Ordering::Relaxed)
    }

    /// The prefix of this process's `push/event` ids (random per process).
    pub fn event_prefix(&self) -> &str {
        &self.hub.event_prefix
    }

    fn job(&self, job: Job) {
        let tx = self.hub.jobs.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(commit_jobs(
                self.server.clone(),
                Arc::downgrade(&self.hub),
                rx,
            ));
            tx
        });
        let _ = tx.send(job);
    }

    /// Sets the relay that carries this process's principal changes to other replicas (see
    /// [`Relay`]). Only the first call takes effect; returns whether this one did.
    pub fn set_relay(&self, relay: Arc<dyn Relay>) -> bool {
        self.hub.relay.set(relay).is_ok()
    }

    /// Hands a change committed by another replica (through a [`Relay`]) to this process's
    /// connections of its principal, each on its own next rev (§5.6). It is not relayed
    /// again.
    pub fn deliver(&self, change: PrincipalChange) {
        self.hub.deliver(change);
    }

    /// The principals with a connection in this process now.
    pub fn connected_principals(&self) -> Vec<Principal> {
        let sessions = self.hub.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<Principal> = sessions.keys().cloned().collect();
        all.sort();
        all
    }

    /// Sends `event` to every connection of `principal`, with no state change.
    pub fn push(&self, principal: &Principal, event: Event) {
        let mut update = Update::new();
        update.event(event);
        // An update with only an event cannot break the declarations.
        let _ = self.apply(principal, update);
    }

    /// Replaces the declarations: ends instances of removed toolsets for every principal
    /// (with ended records and hints) and announces `mcpl/manifestChanged` (vector 31). The
    /// ends and the announcement run on the committer task, after earlier applies.
    pub fn replace_catalog(&self, catalog: Catalog) {
        let removed = self.server.replace_catalog(catalog);
        self.job(Job::Catalog(removed));
    }

    /// A fresh connection id.
    pub fn next_connection(&self) -> ConnectionId {
        ConnectionId(self.hub.next_connection.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Whether `principal` has a connection now.
    pub fn is_connected(&self, principal: &Principal) -> bool {
        let sessions = self.hub.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.contains_key(principal)
    }
}

/// Runs the committer's jobs in order until every handle is gone.
async fn commit_jobs(
    server: Server,
    hub: std::sync::Weak<Hub>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    while let Some(job) = jobs.recv().await {
        let Some(hub) = hub.upgrade() else {
            return;
        };
        match job {
            Job::Apply {
                principal,
                update,
                done,
            } => {
                let result = apply(&server, &hub, &principal, &update).await;
                if let Err(e) = &result {
                    tracing::warn!(error = %e, %principal, "server update not applied");
                }
                if let Some(done) = done {
                    let _ = done.send(result);
                }
            }
            Job::Catalog(removed) => {
                if !removed.is_empty() {
                    end_removed(&server, &hub, &removed).await;
                }
                let all = hub.all.lock().unwrap_or_else(|p| p.into_inner());
                for tx in all.values() {
                    let _ = tx.send(Command::Catalog);
                }
            }
        }
    }
}

/// Reads `principal`'s state, runs `edit` on it and writes it if nobody wrote meanwhile;
/// on a conflict runs `edit` again on the state the store returned. `edit` returns the
/// change to publish, or `None` when it changed nothing (then nothing is written).
async fn commit(
    server: &Server,
    hub: &Hub,
    principal: &Principal,
    mut edit: impl FnMut(&mut PrincipalState) -> Result<Option<PrincipalChange>, Error>,
) -> Result<Option<PrincipalChange>, Error> {
    let store = server.store();
    let failed = |e: crate::store::StoreError| Error::Store(e.to_string());
    let mut stored = store.load(principal).await.map_err(failed)?;
    loop {
        let mut state = stored.state.clone();
        let Some(change) = edit(Arc::make_mut(&mut state))? else {
            return Ok(None);
        };
        let write = WriteSet {
            principal: principal.clone(),
            read: stored.version,
            state: Some(state),
        };
        match store.write(&write).await.map_err(failed)? {
            Written::Done { version } => {
                let state = write.state.expect("written above");
                return Ok(Some(change.with_state(Versioned { state, version })));
            }
            Written::Conflict(now) => {
                hub.conflicts.fetch_add(1, Ordering::Relaxed);
                stored = now;
            }
        }
    }
}

/// Commits `update` for `principal` and hands the change to its sessions (and relay).
async fn apply(
    server: &Server,
    hub: &Hub,
    principal: &Principal,
    update: &Update,
) -> Result<(), Error> {
    if update.ops.is_empty() {
        // Only an event or suggestions: nothing to store.
        let change = PrincipalChange {
            principal: principal.clone(),
            origin: None,
            touches: Vec::new(),
            event: update.event.clone(),
            suggest: update.suggest.clone(),
            state: None,
            restated: false,
        };
        hub.publish(change);
        return Ok(());
    }
    let t = now();
    let change = commit(server, hub, principal, |state| {
        server.apply_to(t, principal, state, update).map(Some)
    })
    .await?;
    if let Some(change) = change {
        hub.publish(change);
    }
    Ok(())
}

/// Ends removed toolsets' instances for every principal in the store (vector 31).
async fn end_removed(server: &Server, hub: &Hub, removed: &crate::server::Removed) {
    let principals = match server.store().principals().await {
        Ok(all) => all,
        Err(e) => {
            tracing::warn!(error = %e, "removed toolsets not ended: the store is unreachable");
            return;
        }
    };
    let t = now();
    for principal in principals {
        let ended = commit(server, hub, &principal, |state| {
            Ok(server.end_removed(t, removed, &principal, state))
        })
        .await;
        match ended {
            Ok(Some(change)) => hub.publish(change),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, %principal, "removed toolsets not ended"),
        }
    }
}

/// A running server: a [`Handle`] and the app. Clone it into the tasks that serve
/// connections.
pub struct Runtime<A: App> {
    handle: Handle,
    app: Arc<A>,
}

impl<A: App> Clone for Runtime<A> {
    fn clone(&self) -> Self {
        Runtime {
            handle: self.handle.clone(),
            app: self.app.clone(),
        }
    }
}

impl<A: App> std::ops::Deref for Runtime<A> {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.handle
    }
}

impl<A: App> Runtime<A> {
    /// A runtime serving `handle`'s server with `app` (which may keep a clone of `handle` to
    /// push later).
    pub fn new(handle: Handle, app: A) -> Self {
        Runtime {
            handle,
            app: Arc::new(app),
        }
    }

    /// A runtime for `server` with `app`, when the app needs no handle.
    pub fn from_server(server: Server, app: A) -> Self {
        Self::new(Handle::new(server), app)
    }

    /// The handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The app.
    pub fn app(&self) -> &Arc<A> {
        &self.app
    }

    /// Serves one connection over `transport` for `principal` until it closes. The caller
    /// derives `principal` from an operator-configured [`crate::Identity`], never from what
    /// the client claims.
    ///
    /// A connection that has not sent `initialize` within
    /// [`crate::listen::DEFAULT_HANDSHAKE_TIMEOUT`] is closed (see [`Runtime::serve_within`]).
    pub async fn serve(
        &self,
        transport: Transport,
        principal: Principal,
        connection: ConnectionId,
    ) -> Result<(), Error> {
        self.serve_within(
            transport,
            principal,
            connection,
            crate::listen_options::DEFAULT_HANDSHAKE_TIMEOUT,
        )
        .await
    }

    /// [`Runtime::serve`], closing the connection if it has not sent `initialize` within
    /// `handshake_timeout`. Before `initialize`, only `ping` is served: any other request gets
    /// an error and changes nothing, and other notifications are dropped.
    pub async fn serve_within(
        &self,
        transport: Transport,
        principal: Principal,
        connection: ConnectionId,
        handshake_timeout: std::time::Duration,
    ) -> Result<(), Error> {
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        let mut initialized = false;
        // Timers are boxed and dropped when done: inline, each would size the connection's
        // task for its whole life.
        let mut handshake = Some(Box::pin(tokio::time::sleep(handshake_timeout)));
        let (tx, mut rx) = mcpl_rpc::queue::unbounded();
        self.register(&principal, connection, tx.clone());
        // Only while a watcher is attached: then each inbound message costs one atomic store.
        let mut seen = None;
        self.hub.observe(|| {
            let last = Arc::new(crate::observe::LastSeen::new(now()));
            seen = Some(last.clone());
            Some(Observation::Connected {
                connection,
                principal: principal.clone(),
                seen: last,
            })
        });
        let mut session = self.server.session(principal.clone(), connection, now());
        session.set_event_prefix(self.hub.event_prefix.clone());
        let result = loop {
            match self.drain(&mut session, &peer, &tx).await {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
            if initialized {
                handshake = None;
            }
            let deadline = session.poll_timeout().map(tokio::time::Instant::from_std);
            let mut sleep = deadline.map(|d| Box::pin(tokio::time::sleep_until(d)));
            tokio::select! {
                event = events.recv() => match event {
                    None | Some(RpcEvent::Closed { .. }) => break Ok(()),
                    Some(event) => {
                        if let Some(seen) = &seen {
                            seen.touch(now());
                        }
                        if let Some(event) = lifecycle(event, &mut initialized) {
                            feed(&mut session, event);
                        }
                    }
                },
                () = async { handshake.as_mut().expect("set until initialized").await }, if handshake.is_some() => {
                    tracing::info!(
                        %connection,
                        "closing connection {connection}: no `initialize` within {handshake_timeout:?}"
                    );
                    break Ok(());
                }
                Some(cmd) = rx.recv() => self.command(&mut session, cmd),
                () = async { sleep.as_mut().expect("set with a deadline").await }, if sleep.is_some() => {
                    session.handle_timeout(now());
                }
            }
        };
        // The client stopped sending, but (on stdio, say) may still read: finish the calls it
        // made so their answers are written, then disconnect.
        while session.calls_in_flight() > 0 && !peer.is_closed() {
            let _ = self.drain(&mut session, &peer, &tx).await;
            if session.calls_in_flight() == 0 {
                break;
            }
            match rx.recv().await {
                Some(cmd) => self.command(&mut session, cmd),
                None => break,
            }
        }
        let _ = self.drain(&mut session, &peer, &tx).await;
        // §5.6: ends at disconnect run as app calls; finish them before leaving.
        session.handle_disconnect(now());
        loop {
            let _ = self.drain(&mut session, &peer, &tx).await;
            if session.calls_in_flight() == 0 {
                break;
            }
            match rx.recv().await {
                Some(cmd) => self.command(&mut session, cmd),
                None => break,
            }
        }
        self.unregister(&principal, connection);
        self.hub.observe(|| {
            Some(Observation::Disconnected {
                connection,
                principal: principal.clone(),
            })
        });
        peer.close().await;
        result
    }

    /// Serves the process's own stdin and stdout for `principal` (the stdio default: one
    /// principal per process).
    pub async fn serve_stdio(&self, principal: Principal) -> Result<(), Error> {
        let connection = self.next_connection();
        self.serve(Transport::process_stdio(), principal, connection)
            .await
    }

    /// Accepts WebSocket connections on `listener` until it fails, serving each for the
    /// principal `identity` derives from its `Authorization: Bearer TOKEN` header (§5.6: never
    /// from what the client claims). A handshake without a known token is refused with 401.
    /// The defences are [`ListenOptions`]' defaults (see [`Runtime::serve_ws_with`]).
    pub async fn serve_ws(
        &self,
        listener: tokio::net::TcpListener,
        identity: Identity,
    ) -> Result<(), Error> {
        self.serve_ws_with(listener, identity, ListenOptions::default())
            .await
    }

    /// Serves Streamable HTTP at `path` on `listener` until it fails. Every request must
    /// carry `Authorization: Bearer TOKEN` that `identity` knows (401 otherwise) under
    /// [`Identity::Tokens`]; each session acts for the principal its `initialize` POST's
    /// token names. The defences are [`ListenOptions`]' defaults (see
    /// [`Runtime::serve_http_with`]).
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        path: &str,
        identity: Identity,
    ) -> Result<(), Error> {
        self.serve_http_with(listener, path, identity, ListenOptions::default())
            .await
    }

    fn register(&self, p: &Principal, c: ConnectionId, tx: Inbox) {
        let mut sessions = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.entry(p.clone()).or_default().push((c, tx.clone()));
        let mut all = self.hub.all.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(c, tx);
    }

    fn unregister(&self, p: &Principal, c: ConnectionId) {
        let mut sessions = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = sessions.get_mut(p) {
            list.retain(|(id, _)| *id != c);
            if list.is_empty() {
                sessions.remove(p);
            }
        }
        let mut all = self.hub.all.lock().unwrap_or_else(|e| e.into_inner());
        all.remove(&c);
    }

    fn command(&self, session: &mut Session, cmd: Command) {
        match cmd {
            Command::Done(id, outcome) => {
                if let Err(e) = session.handle_call_done(now(), id, *outcome) {
                    tracing::warn!(error = %e, "app outcome rejected");
                }
            }
            Command::Change(change) => session.handle_shared_change(now(), change),
            Command::Catalog => session.handle_catalog_change(now()),
        }
    }

    /// Drains the session's effects in order: store reads and writes, messages, app calls,
    /// publications. `Ok(false)`: the session asked to close.
    async fn drain(&self, session: &mut Session, peer: &Peer, tx: &Inbox) -> Result<bool, Error> {
        let store = self.server.store();
        while let Some(effect) = session.poll_effect() {
            match effect {
                Effect::Load(principal) => {
                    let stored = store.load(&principal).await.unwrap_or_else(|e| {
                        // A write from this empty copy conflicts with what the store really
                        // holds, and the step then runs again on that.
                        tracing::warn!(error = %e, %principal, "state not read; starting empty");
                        Versioned::default()
                    });
                    session.handle_state(now(), stored);
                }
                Effect::Write(write) => match store.write(&write).await {
                    Ok(Written::Done { version }) => session.handle_written(now(), version),
                    Ok(Written::Conflict(stored)) => {
                        self.hub.conflicts.fetch_add(1, Ordering::Relaxed);
                        session.handle_conflict(now(), stored);
                    }
                    Err(e) => session.handle_store_error(now(), &e.0),
                },
                Effect::Apply(principal, update) => {
                    // Boxed: a rare path whose future would otherwise sit in every
                    // connection's task.
                    let applied = Box::pin(apply(&self.server, &self.hub, &principal, &update));
                    if let Err(e) = applied.await {
                        tracing::warn!(error = %e, %principal, "app update for another principal not applied");
                    }
                }
                Effect::Send(mut message) => {
                    // No error quotes more than 128 characters of client input.
                    mcpl_protocol::clip::bound_errors(&mut message);
                    self.hub.observe(|| {
                        let (carrier, hints) = hints_of(&message)?;
                        Some(Observation::Hints {
                            connection: session.connection(),
                            principal: session.principal().clone(),
                            carrier,
                            hints,
                        })
                    });
                    peer.send(message)
                        .map_err(|e| Error::Transport(e.to_string()))?
                }
                Effect::Call(call) => {
                    let id = call.id;
                    let mut work = Box::pin(run(self.app.clone(), *call));
                    // App code that finishes without waiting (most tool calls) finishes here,
                    // on the connection's task: no task to spawn, no hop back. Code that
                    // waits goes on in a task of its own, from where it stopped.
                    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    match work.as_mut().poll(&mut cx) {
                        Poll::Ready(outcome) => {
                            if let Err(e) = session.handle_call_done(now(), id, outcome) {
                                tracing::warn!(error = %e, "app outcome rejected");
                            }
                        }
                        Poll::Pending => {
                            let tx = tx.clone();
                            tokio::spawn(async move {
                                let outcome = work.await;
                                let _ = tx.send(Command::Done(id, Box::new(outcome)));
                            });
                        }
                    }
                }
                Effect::Publish(change) => self.hub.publish(change),
                // The call's answer went to the peer's writer above, in order; what the hooks
                // start (a bot's reply) is published after it and takes a later rev (§6.1).
                Effect::Committed { hooks, .. } => hooks.run(),
                Effect::Close => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// Runs app code for one call. App code that panics still gets its request answered (with
/// a failure, and nothing it recorded kept).
async fn run<A: App>(app: Arc<A>, call: Call) -> Outcome {
    let Call {
        mut kind,
        mut context,
        ..
    } = call;
    let args = match &mut kind {
        CallKind::Tool { args, .. } => std::mem::take(args),
        _ => Map::new(),
    };
    let work = async {
        match &kind {
            CallKind::Tool { tool, .. } => {
                Reply::Tool(app.call_tool(&mut context, tool, args).await)
            }
            CallKind::Open => Reply::Open(app.open(&mut context).await),
            CallKind::Close { disconnect } => {
                Reply::Close(app.close(&mut context, *disconnect).await)
            }
        }
    };
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(reply) => Outcome { context, reply },
        Err(_) => {
            tracing::error!("app code failed (panicked)");
            Outcome {
                context: context.blank(),
                reply: failure(&kind),
            }
        }
    }
}

/// The reply for app code that panicked.
fn failure(kind: &CallKind) -> Reply {
    match kind {
        CallKind::Tool { tool, .. } => Reply::Tool(CallToolResult::error(format!(
            "tool `{tool}` failed inside the server"
        ))),
        CallKind::Open => Reply::Open(OpenReply::refuse("the server failed while opening it")),
        CallKind::Close { .. } => Reply::Close(CloseReply::text("closed after a server error")),
    }
}

/// The lifecycle rule: before `initialize`, only `ping` is served. Any other request is
/// answered with an error and goes no further; other notifications are dropped.
fn lifecycle(event: RpcEvent, initialized: &mut bool) -> Option<RpcEvent> {
    if *initialized {
        return Some(event);
    }
    match event {
        RpcEvent::Request {
            request, responder, ..
        } if request.method != methods::INITIALIZE && request.method != methods::PING => {
            let method = mcpl_protocol::clip::clip(&request.method);
            tracing::debug!("refused `{method}` before `initialize`");
            let _ = responder.error(ErrorObject::new(
                ErrorCode::InvalidRequest,
                format!("`{method}` before `initialize`: a session starts with `initialize`"),
            ));
            None
        }
        RpcEvent::Request { ref request, .. } => {
            *initialized = request.method == methods::INITIALIZE;
            Some(event)
        }
        RpcEvent::Notification { notification, .. } => {
            let method = mcpl_protocol::clip::clip(&notification.method);
            tracing::debug!("dropped `{method}` before `initialize`");
            None
        }
        event => Some(event),
    }
}

/// The token of an `Authorization: Bearer TOKEN` header.
pub(crate) fn bearer(
    header: Option<&tokio_tungstenite::tungstenite::http::HeaderValue>,
) -> Option<&str> {
    header
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Feeds one peer event to the session, in read order, through the one seam between
/// `mcpl-rpc` and a core ([`RpcEvent::into_message`], as the host's driver does): a request's
/// responder is disarmed (the session writes its own answer, in rev order with everything
/// else, §6.1), a cancellation becomes its notification, a late response its response.
fn feed(session: &mut Session, event: RpcEvent) {
    if let Some(message) = event.into_message() {
        session.handle_message(now(), message);
    }
}
