//! The tokio driver: runs one [`Session`] per connection over an `mcpl-rpc` [`Peer`], runs app
//! code for each [`Effect::Call`], and fans principal changes out between connections.
//!
//! Thin by design: every `if` on RFC-014 state lives in the session core. The driver reads
//! the clock, feeds events in read order, and writes `Send`s in the order they were polled.

use crate::context::{Call, CallId, CallKind, CloseReply, Context, OpenReply, Outcome, Reply};
use crate::decl::Catalog;
use crate::error::Error;
use crate::listen::ListenOptions;
use crate::principal::{ConnectionId, Identity, Principal};
use crate::server::Server;
use crate::session::{Effect, Session};
use crate::update::{Event, PrincipalChange, Update};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, Notification};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::methods;
use mcpl_rpc::{Event as RpcEvent, Peer, PeerConfig, Transport};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

type Inbox = mpsc::UnboundedSender<Command>;

/// Carries principal changes to the other processes (replicas) of the same server, e.g. by
/// Redis pub/sub. Set one with [`Handle::set_relay`]; the relay hands what it receives from
/// the others to [`Handle::deliver`].
pub trait Relay: Send + Sync + 'static {
    /// Sends `change`, committed in this process, to the other replicas. Called for changes of
    /// authenticated principals only: a per-connection principal lives in one process.
    fn publish(&self, change: &PrincipalChange);
}

/// The in-process fan-out: each principal's connected sessions, plus an optional [`Relay`]
/// to other replicas.
#[derive(Default)]
struct Hub {
    sessions: Mutex<HashMap<Principal, Vec<(ConnectionId, Inbox)>>>,
    all: Mutex<HashMap<ConnectionId, mpsc::UnboundedSender<Command>>>,
    next_connection: AtomicU64,
    relay: std::sync::OnceLock<Arc<dyn Relay>>,
}

impl Hub {
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
    /// [`Update::instance`] and [`Event::about`]. A bad update changes nothing.
    pub fn apply(&self, principal: &Principal, update: Update) -> Result<(), Error> {
        let change = self.server.apply(now(), principal, update)?;
        self.hub.publish(change);
        Ok(())
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
    /// (with ended records and hints) and announces `mcpl/manifestChanged` (vector 31).
    pub fn replace_catalog(&self, catalog: Catalog) {
        for change in self.server.replace_catalog(now(), catalog) {
            self.hub.publish(change);
        }
        let all = self.hub.all.lock().unwrap_or_else(|p| p.into_inner());
        for tx in all.values() {
            let _ = tx.send(Command::Catalog);
        }
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
            crate::listen::DEFAULT_HANDSHAKE_TIMEOUT,
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
        let handshake = tokio::time::sleep(handshake_timeout);
        tokio::pin!(handshake);
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.register(&principal, connection, tx.clone());
        let mut session = self.server.session(principal.clone(), connection, now());
        let result = loop {
            match self.drain(&mut session, &peer, &tx) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
            let deadline = session.poll_timeout().map(tokio::time::Instant::from_std);
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = events.recv() => match event {
                    None | Some(RpcEvent::Closed { .. }) => break Ok(()),
                    Some(event) => {
                        if let Some(event) = lifecycle(event, &mut initialized) {
                            feed(&mut session, event);
                        }
                    }
                },
                () = &mut handshake, if !initialized => {
                    tracing::info!(
                        %connection,
                        "closing connection {connection}: no `initialize` within {handshake_timeout:?}"
                    );
                    break Ok(());
                }
                Some(cmd) = rx.recv() => self.command(&mut session, cmd),
                () = sleep => session.handle_timeout(now()),
            }
        };
        // The client stopped sending, but (on stdio, say) may still read: finish the calls it
        // made so their answers are written, then disconnect.
        while session.calls_in_flight() > 0 && !peer.is_closed() {
            let _ = self.drain(&mut session, &peer, &tx);
            if session.calls_in_flight() == 0 {
                break;
            }
            match rx.recv().await {
                Some(cmd) => self.command(&mut session, cmd),
                None => break,
            }
        }
        let _ = self.drain(&mut session, &peer, &tx);
        // §5.6: ends at disconnect run as app calls; finish them before leaving.
        session.handle_disconnect(now());
        loop {
            let _ = self.drain(&mut session, &peer, &tx);
            if session.calls_in_flight() == 0 {
                break;
            }
            match rx.recv().await {
                Some(cmd) => self.command(&mut session, cmd),
                None => break,
            }
        }
        self.unregister(&principal, connection);
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

    fn register(&self, p: &Principal, c: ConnectionId, tx: mpsc::UnboundedSender<Command>) {
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
            Command::Change(change) => session.handle_principal_change(now(), &change),
            Command::Catalog => session.handle_catalog_change(now()),
        }
    }

    /// Drains the session's effects in order: writes, app calls, publications. `Ok(false)`:
    /// the session asked to close.
    fn drain(
        &self,
        session: &mut Session,
        peer: &Peer,
        tx: &mpsc::UnboundedSender<Command>,
    ) -> Result<bool, Error> {
        while let Some(effect) = session.poll_effect() {
            match effect {
                Effect::Send(mut message) => {
                    // No error quotes more than 128 characters of client input.
                    mcpl_protocol::clip::bound_errors(&mut message);
                    peer.send(message)
                        .map_err(|e| Error::Transport(e.to_string()))?
                }
                Effect::Call(call) => {
                    let (id, kind) = (call.id, call.kind.clone());
                    let blank = call.context.blank();
                    let work = tokio::spawn(run(self.app.clone(), *call));
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        // App code that panics still gets its request answered.
                        let outcome = work.await.unwrap_or_else(|e| {
                            tracing::error!(error = %e, "app code failed");
                            Outcome {
                                context: blank,
                                reply: failure(&kind),
                            }
                        });
                        let _ = tx.send(Command::Done(id, Box::new(outcome)));
                    });
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

/// Runs app code for one call.
async fn run<A: App>(app: Arc<A>, mut call: Call) -> Outcome {
    let ctx = &mut call.context;
    let reply = match &call.kind {
        CallKind::Tool { tool, args } => Reply::Tool(app.call_tool(ctx, tool, args.clone()).await),
        CallKind::Open => Reply::Open(app.open(ctx).await),
        CallKind::Close { disconnect } => Reply::Close(app.close(ctx, *disconnect).await),
    };
    Outcome {
        context: call.context,
        reply,
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

/// Feeds one peer event to the session, in read order.
fn feed(session: &mut Session, event: RpcEvent) {
    let t = now();
    match event {
        RpcEvent::Request {
            request, responder, ..
        } => {
            // The session writes its own answer (§6.1: in rev order with everything else).
            responder.disarm();
            session.handle_message(t, Message::Request(request));
        }
        RpcEvent::Notification { notification, .. } => {
            session.handle_message(t, Message::Notification(notification))
        }
        RpcEvent::Cancelled { id, .. } => {
            let n = Notification::new(methods::CANCELLED, Some(json!({ "requestId": id })));
            session.handle_message(t, Message::Notification(n));
        }
        RpcEvent::Response { response, .. } => {
            session.handle_message(t, Message::Response(response))
        }
        _ => {}
    }
}
