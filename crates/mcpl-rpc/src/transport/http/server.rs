//! Streamable HTTP, server side, as an axum [`Router`].
//!
//! - `POST` carries one client message. A request is answered on its own SSE stream (or, with
//!   [`HttpServerConfig::json_response`], as one JSON body); a notification or response gets
//!   `202 Accepted`. A POST without `Mcp-Session-Id` must be `initialize`: it opens a session,
//!   handed to the application as an [`HttpSession`].
//! - `GET` opens the session's stream for messages that belong to no client request
//!   (`push/event`, server requests, notifications). Its events carry ids; a `GET` with
//!   `Last-Event-ID` replays what the previous stream missed (the `replay` module beside this one).
//!   Messages written while no GET stream is open wait there and go out when one opens.
//! - `DELETE` ends the session.
//!
//! Each message goes on exactly one stream: a response on its request's stream, a message
//! [related](crate::Outbound::related) to an open request on that request's stream, anything
//! else on the GET stream. Order holds only within one stream (RFC-014 §6.1).
//!
//! What every request meets first, in order: the `Host` check (403 with a JSON-RPC error, see
//! [`AllowedHosts`]), the `Origin` check (403, see [`AllowedOrigins`]),
//! [`HttpServerConfig::authorize`] (its status), then the session it
//! names, which must exist and belong to the same [owner](HttpServerConfig::owner) as the
//! request (404 otherwise: a session is never revealed to other credentials). Sessions are
//! capped in all and per owner, and end after [`HttpServerConfig::idle_timeout`] without
//! traffic (then 404, and a client starts a new one). Each stream queues at most
//! [`HttpServerConfig::stream_queue`] messages: a client that reads slower than that loses
//! the stream (logged), not the session.

use super::body::read_capped;
use super::headers::{LAST_EVENT_ID_HEADER, SESSION_HEADER};
use super::replay::Replay;
use super::sse::sse_event;
use crate::transport::origin::{AllowedHosts, AllowedOrigins};
use crate::transport::{Guard, Inbound, Outbound, Transport, TransportKind};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId, Response as RpcResponse};
use mcpl_protocol::methods;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Decides whether a request's headers may use the endpoint (for example a bearer token);
/// the error is the HTTP status sent back.
pub type Authorize = Arc<dyn Fn(&HeaderMap) -> Result<(), StatusCode> + Send + Sync>;

/// Names who a request's credentials belong to (a principal). A session belongs to the owner
/// of the request that opened it and answers only requests of the same owner.
pub type Owner = Arc<dyn Fn(&HeaderMap) -> String + Send + Sync>;

/// Settings of a Streamable HTTP endpoint. The defaults leave room for many clients.
#[derive(Clone)]
pub struct HttpServerConfig {
    /// Frame limits for POST bodies.
    pub limits: Limits,
    /// Answer each request POST with one JSON body instead of an SSE stream. Messages
    /// related to the request then travel on the GET stream.
    pub json_response: bool,
    /// Checked on every POST, GET and DELETE after the `Origin` check.
    pub authorize: Option<Authorize>,
    /// Who a request's credentials belong to. Without one, the credentials themselves (the
    /// `Authorization` header) are the owner.
    pub owner: Option<Owner>,
    /// Browser origins allowed (default: loopback origins; requests without `Origin` pass).
    pub origins: AllowedOrigins,
    /// `Host` names allowed (default: loopback names, any port). A server that binds the
    /// router passes its address through [`AllowedHosts::bound_at`]: off loopback, every name
    /// then passes unless some are listed.
    pub hosts: AllowedHosts,
    /// Sessions open at once, in all (default 10,000).
    pub max_sessions: usize,
    /// Sessions open at once per owner (default 64: an agent, its tools, replicas' clients).
    pub max_sessions_per_owner: usize,
    /// A session with no request and no open stream for this long ends (default 30 minutes;
    /// `None`: never).
    pub idle_timeout: Option<Duration>,
    /// Messages a POST's stream may have queued for a slow client before it is closed and
    /// its later messages go on the GET stream (default 1,024).
    pub stream_queue: usize,
    /// GET-stream events kept per session for `Last-Event-ID` (default 1,024). A GET stream
    /// whose client falls further behind than this is closed (logged); it may resume.
    pub replay_events: usize,
    /// How long a delivered GET-stream event stays replayable (default 60 s). Kept events
    /// are dropped after it, so an idle session keeps none.
    pub replay_window: Duration,
}

impl Default for HttpServerConfig {
    fn default() -> Self {
        HttpServerConfig {
            limits: Limits::default(),
            json_response: false,
            authorize: None,
            owner: None,
            origins: AllowedOrigins::default(),
            hosts: AllowedHosts::default(),
            max_sessions: 10_000,
            max_sessions_per_owner: 64,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
            stream_queue: 1024,
            replay_events: 1024,
            replay_window: Duration::from_secs(60),
        }
    }
}

impl std::fmt::Debug for HttpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerConfig")
            .field("limits", &self.limits)
            .field("json_response", &self.json_response)
            .field("authorize", &self.authorize.is_some())
            .field("owner", &self.owner.is_some())
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_owner", &self.max_sessions_per_owner)
            .field("idle_timeout", &self.idle_timeout)
            .field("stream_queue", &self.stream_queue)
            .field("replay_events", &self.replay_events)
            .field("replay_window", &self.replay_window)
            .finish()
    }
}

/// A session opened by a client's `initialize` POST.
#[derive(Debug)]
pub struct HttpSession {
    /// The session's wire: hand it to [`crate::Peer::start`]. The `initialize` request is its
    /// first frame.
    pub transport: Transport,
    /// The `Mcp-Session-Id` given to the client.
    pub session_id: String,
    /// The headers of the `initialize` POST, for mapping credentials to a principal.
    pub headers: HeaderMap,
}

/// An axum router serving Streamable HTTP at `path`, and the stream of new sessions.
///
/// Sessions are refused with 503 once the receiver is dropped.
pub fn router(path: &str, config: HttpServerConfig) -> (Router, mpsc::Receiver<HttpSession>) {
    let (tx, rx) = mpsc::channel(16);
    let state = Arc::new(ServerState {
        config,
        sessions: Mutex::new(HashMap::new()),
        new_sessions: tx,
        sweeping: AtomicBool::new(false),
    });
    let router = Router::new()
        .route(
            path,
            post(handle_post).get(handle_get).delete(handle_delete),
        )
        .with_state(state);
    (router, rx)
}

struct ServerState {
    config: HttpServerConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    new_sessions: mpsc::Sender<HttpSession>,
    /// Whether the idle sweeper runs (started with the first session).
    sweeping: AtomicBool,
}

struct Session {
    id: String,
    owner: String,
    inbound: crate::transport::InboundSender,
    routes: Mutex<Routes>,
    /// Wakes GET streams: an event was kept, or the stream was replaced or ended.
    wake: tokio::sync::Notify,
    last_active: Mutex<Instant>,
}

/// Where outgoing messages go.
struct Routes {
    /// Open request POSTs by request id.
    posts: HashMap<RequestId, PostStream>,
    /// The generation of the open GET stream (a new GET replaces the old stream), if any.
    get: Option<u64>,
    /// The generation the next GET stream takes.
    next_get: u64,
    /// Whether the session ended (its streams end too).
    closed: bool,
    /// GET-stream events: the ones not delivered yet and the recent ones, for resuming.
    replay: Replay,
}

enum PostStream {
    Sse(mpsc::Sender<Bytes>),
    Json(oneshot::Sender<Message>),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The first 128 characters of client input, for logs.
fn clip(s: &str) -> String {
    mcpl_protocol::clip::clip(s).into_owned()
}

impl Routes {
    fn send_on_get(&mut self, message: Message) {
        // Kept until a GET stream takes it (see `get_stream`); woken by the caller.
        self.replay.push(Instant::now().into_std(), message);
    }

    fn is_streaming(&self) -> bool {
        self.get.is_some()
            || self.posts.values().any(|post| match post {
                PostStream::Sse(tx) => !tx.is_closed(),
                PostStream::Json(tx) => !tx.is_closed(),
            })
    }
}

/// The body of a GET stream: the session's kept events after `cursor`, in order, as the
/// client takes them. Ends when another GET replaces it, when the session ends, and when the
/// client falls so far behind that events it has not read were dropped.
fn get_stream(session: Arc<Session>, cursor: u64, generation: u64) -> Response {
    struct Cursor {
        session: Arc<Session>,
        cursor: u64,
        generation: u64,
        fresh: bool,
    }
    /// Clears the stream's mark when its body is dropped (the client went away).
    impl Drop for Cursor {
        fn drop(&mut self) {
            let mut routes = lock(&self.session.routes);
            if routes.get == Some(self.generation) {
                routes.get = None;
            }
        }
    }
    let state = Cursor {
        session,
        cursor,
        generation,
        fresh: true,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        loop {
            let session = state.session.clone();
            let woken = session.wake.notified();
            {
                let mut routes = lock(&session.routes);
                if routes.closed || routes.get != Some(state.generation) {
                    return None;
                }
                let next = match routes.replay.next_after(state.cursor) {
                    Ok(next) => next,
                    Err(first) if state.fresh => {
                        tracing::warn!(
                            session = %state.session.id,
                            "session {}: resuming after event {}, but events before {first} \
                             are no longer kept",
                            state.session.id,
                            state.cursor
                        );
                        state.cursor = first - 1;
                        continue;
                    }
                    Err(first) => {
                        tracing::warn!(
                            session = %state.session.id,
                            "closing the GET stream of session {}: the client reads too slowly \
                             (events after {} were dropped before it read them; the first kept \
                             is {first})",
                            state.session.id,
                            state.cursor
                        );
                        return None;
                    }
                };
                state.fresh = false;
                if let Some((id, event)) = next {
                    routes.replay.delivered(Instant::now().into_std(), id);
                    state.cursor = id;
                    drop(routes);
                    return Some((Ok::<Bytes, Infallible>(event), state));
                }
            }
            woken.await;
        }
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

impl Session {
    fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    fn route(&self, out: Outbound) {
        let mut routes = lock(&self.routes);
        let message = out.message;
        if let Message::Response(RpcResponse { id: Some(id), .. }) = &message {
            // A response ends its POST's stream (the sender is dropped here).
            match routes.posts.remove(id) {
                Some(PostStream::Sse(tx)) if tx.try_send(sse_event(None, &message)).is_ok() => {
                    return;
                }
                Some(PostStream::Json(tx)) => match tx.send(message) {
                    Ok(()) => return,
                    Err(message) => {
                        routes.send_on_get(message);
                        drop(routes);
                        return self.wake.notify_waiters();
                    }
                },
                Some(PostStream::Sse(_)) | None => {}
            }
        } else if let Some(id) = &out.related
            && let Some(PostStream::Sse(tx)) = routes.posts.get(id)
        {
            match tx.try_send(sse_event(None, &message)) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(
                        session = %self.id,
                        "closing a POST stream of session {}: the client reads too slowly; \
                         its messages go on the GET stream",
                        self.id
                    );
                    routes.posts.remove(id);
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
        routes.send_on_get(message);
        drop(routes);
        self.wake.notify_waiters();
    }
}

/// The response that turns a request away before it reaches a session (boxed: it is the
/// rare path).
type Refusal = Box<Response>;

impl ServerState {
    /// The `Host` and `Origin` checks, then `authorize`; the request's owner when all pass.
    fn admit(&self, headers: &HeaderMap) -> Result<String, Refusal> {
        let host = headers.get(header::HOST).map(|v| v.to_str().unwrap_or("?"));
        if !self.config.hosts.permits(host) {
            let why = crate::transport::origin::host_refusal(host);
            tracing::warn!("refused a request: {why}");
            let error = ErrorObject::new(ErrorCode::InvalidRequest, why);
            let reply = Message::Response(RpcResponse::error(None, error));
            return Err(Box::new(json_response(StatusCode::FORBIDDEN, &reply)));
        }
        let origin = headers
            .get(header::ORIGIN)
            .map(|v| v.to_str().unwrap_or("?"));
        if !self.config.origins.permits(origin) {
            let origin = clip(origin.unwrap_or_default());
            tracing::warn!(%origin, "refused a request from a foreign origin");
            let refusal = (
                StatusCode::FORBIDDEN,
                format!("origin `{origin}` is not allowed"),
            );
            return Err(Box::new(refusal.into_response()));
        }
        if let Some(check) = &self.config.authorize {
            check(headers).map_err(|status| match headers.get(SESSION_HEADER) {
                // A request that names a session without valid credentials learns nothing
                // about it: the same 404 as for a session that does not exist.
                Some(id) => {
                    let id = clip(id.to_str().unwrap_or_default());
                    tracing::warn!(
                        session = %id,
                        "refused a request naming session {id} without valid credentials"
                    );
                    Box::new(
                        (StatusCode::NOT_FOUND, format!("unknown session `{id}`")).into_response(),
                    )
                }
                None => Box::new(status.into_response()),
            })?;
        }
        Ok(match &self.config.owner {
            Some(owner) => owner(headers),
            None => headers
                .get(header::AUTHORIZATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default(),
        })
    }

    /// The session a request names: `Ok(None)` when it names none, 404 when it names one that
    /// does not exist (any more) or that belongs to another owner.
    fn session(&self, headers: &HeaderMap, owner: &str) -> Result<Option<Arc<Session>>, Refusal> {
        let Some(id) = headers.get(SESSION_HEADER) else {
            return Ok(None);
        };
        let id = id.to_str().unwrap_or_default();
        let unknown = || {
            Box::new(
                (
                    StatusCode::NOT_FOUND,
                    format!("unknown session `{}`", clip(id)),
                )
                    .into_response(),
            )
        };
        let session = lock(&self.sessions).get(id).cloned();
        match session {
            Some(session) if session.owner == owner => {
                session.touch();
                Ok(Some(session))
            }
            Some(_) => {
                tracing::warn!(
                    session = %clip(id),
                    "refused a request naming session {} with another principal's credentials",
                    clip(id)
                );
                Err(unknown())
            }
            None => Err(unknown()),
        }
    }

    /// Whether another session may open for `owner`; the refusal names the limit.
    fn room_for(&self, owner: &str) -> Result<(), String> {
        let sessions = lock(&self.sessions);
        if sessions.len() >= self.config.max_sessions {
            return Err(format!(
                "too many sessions: the server's limit is {}",
                self.config.max_sessions
            ));
        }
        let mine = sessions.values().filter(|s| s.owner == owner).count();
        if mine >= self.config.max_sessions_per_owner {
            return Err(format!(
                "too many sessions for these credentials: the limit is {} per principal",
                self.config.max_sessions_per_owner
            ));
        }
        Ok(())
    }

    async fn open_session(
        self: &Arc<Self>,
        headers: &HeaderMap,
        owner: String,
    ) -> Option<Arc<Session>> {
        let id = new_session_id();
        let (in_tx, in_rx) = crate::transport::inbound_queue();
        let (out_tx, out_rx) =
            crate::transport::outbound_queue(crate::transport::OUTBOUND_CAPACITY);
        let session = Arc::new(Session {
            id: id.clone(),
            owner,
            inbound: in_tx,
            routes: Mutex::new(Routes {
                posts: HashMap::new(),
                get: None,
                next_get: 0,
                closed: false,
                replay: Replay::new(self.config.replay_events, self.config.replay_window),
            }),
            wake: tokio::sync::Notify::new(),
            last_active: Mutex::new(Instant::now()),
        });
        let writer = tokio::spawn(write_session(Arc::downgrade(self), session.clone(), out_rx));
        let transport = Transport {
            kind: TransportKind::StreamableHttp,
            limits: self.config.limits,
            io: crate::transport::Io::Queues {
                inbound: in_rx,
                outbound: out_tx,
            },
            guard: Guard {
                writer: Some(writer),
                tasks: Vec::new(),
                child: None,
            },
            stderr: None,
        };
        lock(&self.sessions).insert(id.clone(), session.clone());
        self.start_sweeper();
        let handed = self.new_sessions.send(HttpSession {
            transport,
            session_id: id.clone(),
            headers: headers.clone(),
        });
        if handed.await.is_err() {
            lock(&self.sessions).remove(&id);
            return None;
        }
        Some(session)
    }

    /// Starts the task that ends idle sessions and drops old replay events, once.
    fn start_sweeper(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::SeqCst) {
            return;
        }
        let every = self
            .config
            .idle_timeout
            .unwrap_or(Duration::MAX)
            .min(self.config.replay_window)
            .div_f64(4.0)
            .clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(sweep(Arc::downgrade(self), every));
    }
}

/// Every `every`: ends sessions idle past the timeout and prunes replay buffers.
async fn sweep(state: Weak<ServerState>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(state) = state.upgrade() else {
            return;
        };
        let now = Instant::now();
        let sessions: Vec<Arc<Session>> = lock(&state.sessions).values().cloned().collect();
        for session in sessions {
            let streaming = {
                let mut routes = lock(&session.routes);
                routes.replay.prune(now.into_std());
                routes.is_streaming()
            };
            let idle = now.saturating_duration_since(*lock(&session.last_active));
            let Some(timeout) = state.config.idle_timeout else {
                continue;
            };
            if streaming || idle < timeout {
                continue;
            }
            lock(&state.sessions).remove(&session.id);
            tracing::info!(session = %session.id, "session {} expired after {idle:?} idle", session.id);
            let inbound = session.inbound.clone();
            tokio::spawn(async move {
                let _ = inbound
                    .send(Inbound::Closed {
                        reason: Some(format!("the session expired after {idle:?} idle")),
                    })
                    .await;
            });
        }
    }
}

/// Moves the peer's messages onto the session's streams; when the peer closes, the session
/// ends and its streams with it.
async fn write_session(
    state: Weak<ServerState>,
    session: Arc<Session>,
    mut rx: crate::transport::OutboundReceiver,
) {
    while let Some(out) = rx.recv().await {
        session.route(out);
    }
    if let Some(state) = state.upgrade() {
        lock(&state.sessions).remove(&session.id);
    }
    let mut routes = lock(&session.routes);
    routes.posts.clear();
    routes.closed = true;
    drop(routes);
    session.wake.notify_waiters();
}

/// 128 random bits, hex: unguessable, as MCP asks of session ids.
fn new_session_id() -> String {
    use rand::TryRngCore;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .expect("the operating system provides randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn with_session(mut response: Response, session: &Session) -> Response {
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

fn json_response(status: StatusCode, message: &Message) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        message.to_json(),
    )
        .into_response()
}

fn sse_response(rx: mpsc::Receiver<Bytes>) -> Response {
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((Ok::<Bytes, Infallible>(event), rx))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

async fn handle_post(
    State(state): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let owner = match state.admit(&headers) {
        Ok(owner) => owner,
        Err(refusal) => return *refusal,
    };
    let session = match state.session(&headers, &owner) {
        Ok(session) => session,
        Err(refusal) => return *refusal,
    };
    let limits = state.config.limits;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let refused = match read_capped(body.into_data_stream(), limits.max_frame_bytes, declared).await
    {
        Ok(bytes) => match frame::decode(&bytes, &limits) {
            Ok(message) => return deliver(&state, session, &headers, owner, message).await,
            Err(error) => (StatusCode::BAD_REQUEST, error),
        },
        Err(error) => (StatusCode::PAYLOAD_TOO_LARGE, error),
    };
    let (status, error): (StatusCode, FrameError) = refused;
    let reply = error.reply().map(Message::Response);
    if let Some(session) = &session {
        // The reply goes back on this POST; the peer only hears about it.
        let _ = session
            .inbound
            .send(Inbound::Refused {
                error,
                answered: true,
            })
            .await;
    }
    match reply {
        Some(reply) => json_response(status, &reply),
        None => status.into_response(),
    }
}

async fn deliver(
    state: &Arc<ServerState>,
    session: Option<Arc<Session>>,
    headers: &HeaderMap,
    owner: String,
    message: Message,
) -> Response {
    let session = match session {
        Some(session) => session,
        None => {
            let Message::Request(request) = &message else {
                return missing_session();
            };
            if request.method != methods::INITIALIZE {
                return missing_session();
            }
            if let Err(why) = state.room_for(&owner) {
                tracing::warn!("refused a new session: {why}");
                let error = ErrorObject::new(ErrorCode::InternalError, why);
                let reply = Message::Response(RpcResponse::error(Some(request.id.clone()), error));
                return json_response(StatusCode::SERVICE_UNAVAILABLE, &reply);
            }
            match state.open_session(headers, owner).await {
                Some(session) => session,
                None => {
                    return (StatusCode::SERVICE_UNAVAILABLE, "not accepting sessions")
                        .into_response();
                }
            }
        }
    };
    let ended = || {
        with_session(
            (StatusCode::NOT_FOUND, "session ended").into_response(),
            &session,
        )
    };
    let Message::Request(request) = message else {
        if session
            .inbound
            .send(Inbound::Message(message))
            .await
            .is_err()
        {
            return ended();
        }
        return with_session(StatusCode::ACCEPTED.into_response(), &session);
    };
    let id = request.id.clone();
    if state.config.json_response {
        let (tx, rx) = oneshot::channel();
        lock(&session.routes).posts.insert(id, PostStream::Json(tx));
        if session
            .inbound
            .send(Inbound::Message(Message::Request(request)))
            .await
            .is_err()
        {
            return ended();
        }
        match rx.await {
            Ok(reply) => with_session(json_response(StatusCode::OK, &reply), &session),
            Err(_) => ended(),
        }
    } else {
        let (tx, rx) = mpsc::channel(state.config.stream_queue.max(1));
        lock(&session.routes).posts.insert(id, PostStream::Sse(tx));
        if session
            .inbound
            .send(Inbound::Message(Message::Request(request)))
            .await
            .is_err()
        {
            return ended();
        }
        with_session(sse_response(rx), &session)
    }
}

fn missing_session() -> Response {
    (
        StatusCode::BAD_REQUEST,
        "missing Mcp-Session-Id header (only `initialize` opens a session)",
    )
        .into_response()
}

/// The session a GET or DELETE names, which it must.
fn named_session(state: &ServerState, headers: &HeaderMap) -> Result<Arc<Session>, Refusal> {
    let owner = state.admit(headers)?;
    match state.session(headers, &owner)? {
        Some(session) => Ok(session),
        None => Err(Box::new(
            (StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header").into_response(),
        )),
    }
}

async fn handle_get(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    let session = match named_session(&state, &headers) {
        Ok(session) => session,
        Err(refusal) => return *refusal,
    };
    let last_event = match headers.get(LAST_EVENT_ID_HEADER) {
        None => None,
        Some(value) => match value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            Some(id) => Some(id),
            None => {
                return (
                    StatusCode::BAD_REQUEST,
                    "Last-Event-ID is not an event id of this server",
                )
                    .into_response();
            }
        },
    };
    let (cursor, generation) = {
        let mut routes = lock(&session.routes);
        let generation = routes.next_get;
        routes.next_get += 1;
        routes.get = Some(generation);
        (
            last_event.unwrap_or(routes.replay.delivered_upto()),
            generation,
        )
    };
    // A stream this one replaces ends.
    session.wake.notify_waiters();
    with_session(get_stream(session.clone(), cursor, generation), &session)
}

async fn handle_delete(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    let session = match named_session(&state, &headers) {
        Ok(session) => session,
        Err(refusal) => return *refusal,
    };
    lock(&state.sessions).remove(&session.id);
    let _ = session
        .inbound
        .send(Inbound::Closed {
            reason: Some("the client ended the session".into()),
        })
        .await;
    StatusCode::OK.into_response()
}

/// The read buffer of one HTTP connection, and the most it holds: a request head must fit,
/// bodies stream through it. hyper's smallest (its default lets a buffer grow to 400 KiB,
/// and a buffer that once doubled stays doubled for the connection's life).
const CONNECTION_BUFFER: usize = 8 * 1024;

/// [`serve`] on plain TCP, each connection readied by [`crate::transport::tcp::ready_tcp`].
/// Use it (or readied connections) rather than `axum::serve` on a bare `TcpListener`: hyper
/// writes a response's head and body separately, and with Nagle's algorithm on the body waits
/// for the client's acknowledgement of the head, about 40 ms a request.
pub async fn serve_tcp(listener: tokio::net::TcpListener, router: Router) {
    use axum::serve::ListenerExt;
    serve(
        listener.tap_io(|tcp| crate::transport::tcp::ready_tcp(tcp)),
        router,
    )
    .await
}

/// Serves `router` (from [`router`]) on `listener` until the listener fails: one task per
/// HTTP/1.1 connection, run by hyper with the router converted once (`axum::serve`
/// rebuilds the router's tables for every connection) and each connection's buffer held to
/// 8 KiB (hyper's least). A Streamable HTTP session keeps at least two connections open (its
/// GET stream and its POSTs'), so what each costs at rest is what a session costs. On a
/// plain `TcpListener`, [`serve_tcp`] also turns Nagle's algorithm off.
pub async fn serve<L>(mut listener: L, router: Router)
where
    L: axum::serve::Listener,
{
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    let service = TowerToHyperService::new(router);
    loop {
        let (io, _) = listener.accept().await;
        let service = service.clone();
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .max_buf_size(CONNECTION_BUFFER)
                .serve_connection(TokioIo::new(io), service)
                .await;
            if let Err(e) = served {
                tracing::debug!("http connection ended: {e}");
            }
        });
    }
}
