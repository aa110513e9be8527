//! Streamable HTTP, server side, as an axum [`Router`].
//!
//! - `POST` carries one client message. A request is answered on its own SSE stream (or, with
//!   [`HttpServerConfig::json_response`], as one JSON body); a notification or response gets
//!   `202 Accepted`. A POST without `Mcp-Session-Id` must be `initialize`: it opens a session,
//!   handed to the application as an [`HttpSession`].
//! - `GET` opens the session's stream for messages that belong to no client request
//!   (`push/event`, server requests, notifications). Messages written while no GET stream is
//!   open wait in a backlog and go out when one opens.
//! - `DELETE` ends the session.
//!
//! Each message goes on exactly one stream: a response on its request's stream, a message
//! [related](crate::Outbound::related) to an open request on that request's stream, anything
//! else on the GET stream. Order holds only within one stream (RFC-014 §6.1).

use super::{SESSION_HEADER, read_capped, sse_event};
use crate::transport::{Guard, INBOUND_CAPACITY, Inbound, Outbound, Transport, TransportKind};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::jsonrpc::{Message, RequestId, Response as RpcResponse};
use mcpl_protocol::methods;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, oneshot};

/// Decides whether a request's headers may use the endpoint (for example a bearer token);
/// the error is the HTTP status sent back.
pub type Authorize = Arc<dyn Fn(&HeaderMap) -> Result<(), StatusCode> + Send + Sync>;

/// Settings of a Streamable HTTP endpoint.
#[derive(Clone, Default)]
pub struct HttpServerConfig {
    /// Frame limits for POST bodies.
    pub limits: Limits,
    /// Answer each request POST with one JSON body instead of an SSE stream. Messages
    /// related to the request then travel on the GET stream.
    pub json_response: bool,
    /// Checked on every POST, GET and DELETE before anything else.
    pub authorize: Option<Authorize>,
}

impl std::fmt::Debug for HttpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerConfig")
            .field("limits", &self.limits)
            .field("json_response", &self.json_response)
            .field("authorize", &self.authorize.is_some())
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
}

struct Session {
    id: String,
    inbound: mpsc::Sender<Inbound>,
    routes: Mutex<Routes>,
}

/// Where outgoing messages go.
#[derive(Default)]
struct Routes {
    /// Open request POSTs by request id.
    posts: HashMap<RequestId, PostStream>,
    /// The GET stream, if open.
    get: Option<mpsc::UnboundedSender<Message>>,
    /// Messages for the GET stream written while none was open.
    backlog: Vec<Message>,
}

enum PostStream {
    Sse(mpsc::UnboundedSender<Message>),
    Json(oneshot::Sender<Message>),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Routes {
    fn send_on_get(&mut self, message: Message) {
        let message = match &self.get {
            Some(tx) => match tx.send(message) {
                Ok(()) => return,
                Err(returned) => returned.0,
            },
            None => message,
        };
        // The client dropped its GET stream: keep the message for the next one.
        self.get = None;
        self.backlog.push(message);
    }
}

impl Session {
    fn route(&self, out: Outbound) {
        let mut routes = lock(&self.routes);
        let mut message = out.message;
        if let Message::Response(RpcResponse { id: Some(id), .. }) = &message {
            // A response ends its POST's stream (the sender is dropped here).
            match routes.posts.remove(id) {
                Some(PostStream::Sse(tx)) => match tx.send(message) {
                    Ok(()) => return,
                    Err(returned) => message = returned.0,
                },
                Some(PostStream::Json(tx)) => match tx.send(message) {
                    Ok(()) => return,
                    Err(returned) => message = returned,
                },
                None => {}
            }
        } else if let Some(PostStream::Sse(tx)) =
            out.related.as_ref().and_then(|id| routes.posts.get(id))
        {
            match tx.send(message) {
                Ok(()) => return,
                Err(returned) => message = returned.0,
            }
        }
        routes.send_on_get(message);
    }
}

impl ServerState {
    fn authorize(&self, headers: &HeaderMap) -> Result<(), StatusCode> {
        match &self.config.authorize {
            Some(check) => check(headers),
            None => Ok(()),
        }
    }

    /// The session a request names: `Ok(None)` when it names none, an error (404) when it
    /// names one that does not exist (any more).
    fn session(&self, headers: &HeaderMap) -> Result<Option<Arc<Session>>, (StatusCode, String)> {
        let Some(id) = headers.get(SESSION_HEADER) else {
            return Ok(None);
        };
        let id = id.to_str().unwrap_or_default();
        match lock(&self.sessions).get(id) {
            Some(session) => Ok(Some(session.clone())),
            None => Err((StatusCode::NOT_FOUND, format!("unknown session `{id}`"))),
        }
    }

    async fn open_session(self: &Arc<Self>, headers: &HeaderMap) -> Option<Arc<Session>> {
        let id = new_session_id();
        let (in_tx, in_rx) = mpsc::channel(INBOUND_CAPACITY);
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let session = Arc::new(Session {
            id: id.clone(),
            inbound: in_tx,
            routes: Mutex::new(Routes::default()),
        });
        let writer = tokio::spawn(write_session(Arc::downgrade(self), session.clone(), out_rx));
        let transport = Transport {
            kind: TransportKind::StreamableHttp,
            limits: self.config.limits,
            inbound: in_rx,
            outbound: out_tx,
            guard: Guard {
                writer: Some(writer),
                tasks: Vec::new(),
                child: None,
            },
            stderr: None,
        };
        lock(&self.sessions).insert(id.clone(), session.clone());
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
}

/// Moves the peer's messages onto the session's streams; when the peer closes, the session
/// ends and its streams with it.
async fn write_session(
    state: std::sync::Weak<ServerState>,
    session: Arc<Session>,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
) {
    while let Some(out) = rx.recv().await {
        session.route(out);
    }
    if let Some(state) = state.upgrade() {
        lock(&state.sessions).remove(&session.id);
    }
    let mut routes = lock(&session.routes);
    routes.posts.clear();
    routes.get = None;
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

fn sse_response(rx: mpsc::UnboundedReceiver<Message>) -> Response {
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let message = rx.recv().await?;
        Some((Ok::<Bytes, Infallible>(sse_event(&message)), rx))
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
    if let Err(status) = state.authorize(&headers) {
        return status.into_response();
    }
    let session = match state.session(&headers) {
        Ok(session) => session,
        Err(refusal) => return refusal.into_response(),
    };
    let limits = state.config.limits;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let refused = match read_capped(body.into_data_stream(), limits.max_frame_bytes, declared).await
    {
        Ok(bytes) => match frame::decode(&bytes, &limits) {
            Ok(message) => return deliver(&state, session, &headers, message).await,
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
    message: Message,
) -> Response {
    let session = match session {
        Some(session) => session,
        None => {
            let is_initialize =
                matches!(&message, Message::Request(r) if r.method == methods::INITIALIZE);
            if !is_initialize {
                return (
                    StatusCode::BAD_REQUEST,
                    "missing Mcp-Session-Id header (only `initialize` opens a session)",
                )
                    .into_response();
            }
            match state.open_session(headers).await {
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
        let (tx, rx) = mpsc::unbounded_channel();
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

async fn handle_get(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    if let Err(status) = state.authorize(&headers) {
        return status.into_response();
    }
    let session = match state.session(&headers) {
        Ok(Some(session)) => session,
        Ok(None) => {
            return (StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header").into_response();
        }
        Err(refusal) => return refusal.into_response(),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut routes = lock(&session.routes);
        for message in routes.backlog.drain(..) {
            let _ = tx.send(message);
        }
        routes.get = Some(tx);
    }
    with_session(sse_response(rx), &session)
}

async fn handle_delete(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    if let Err(status) = state.authorize(&headers) {
        return status.into_response();
    }
    let session = match state.session(&headers) {
        Ok(Some(session)) => session,
        Ok(None) => {
            return (StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header").into_response();
        }
        Err(refusal) => return refusal.into_response(),
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
