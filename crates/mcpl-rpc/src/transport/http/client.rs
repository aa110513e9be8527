//! Streamable HTTP, client side, on reqwest.
//!
//! Each outgoing message is one POST. `initialize` is sent and its response headers awaited
//! before anything else goes out, because they carry the `Mcp-Session-Id` every later POST
//! needs; then the GET stream is opened for server-initiated messages. Notifications and
//! responses wait for their `202`; other requests are sent concurrently, since a server may
//! hold a request's answer while it asks this side something. A request whose POST fails
//! gets a `-32603` answer naming the HTTP failure, so its caller does not wait for a timeout.
//!
//! Frames from every POST's response and from the GET stream go to the peer in the order
//! they are read, across streams: that is the client's read order. The GET stream is opened
//! again when the server ends it, with `Last-Event-ID` naming the last event read, so the
//! server replays what the cut stream missed and nothing twice. When the server answers 404
//! because it ended the session (expiry, restart), the client starts a new one by sending its
//! `initialize` again, as MCP says, and retries the request once.
//!
//! `https://` uses rustls with the web roots, plus the CAs in [`ClientOptions::tls`].

use super::body::read_capped;
use super::headers::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
use super::sse::{SseItem, SseParser};
use crate::error::RpcError;
use crate::transport::tls::{ClientTls, describe};
use crate::transport::{
    ClientOptions, Guard, Inbound, OUTBOUND_CAPACITY, Transport, TransportKind, outbound_queue,
};
use bytes::Bytes;
use futures_util::StreamExt;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId, Response};
use mcpl_protocol::methods;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;

/// The first pause before the GET stream is opened again.
const GET_RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest pause before the GET stream is opened again.
const GET_RETRY_MAX: Duration = Duration::from_secs(30);

/// Opens a Streamable HTTP client for the endpoint `url`, sending `headers` (for example
/// `Authorization`) with every request. Nothing is sent until the peer writes `initialize`.
pub fn connect(url: &str, headers: &[(&str, &str)], limits: Limits) -> Result<Transport, RpcError> {
    let mut options = ClientOptions::new().limits(limits);
    for (name, value) in headers {
        options = options.header(name, value);
    }
    connect_with(url, &options)
}

/// Opens a Streamable HTTP client for `url` (`http://` or `https://`) with `options`.
/// Nothing is sent until the peer writes `initialize`.
pub fn connect_with(url: &str, options: &ClientOptions) -> Result<Transport, RpcError> {
    let url = reqwest::Url::parse(url)
        .map_err(|e| RpcError::Transport(format!("bad http url `{url}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(RpcError::Transport(format!(
            "unsupported scheme `{}`: expected http:// or https://",
            url.scheme()
        )));
    }
    let mut header_map = HeaderMap::new();
    for (name, value) in options.header_pairs() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| RpcError::Transport(format!("bad header name `{name}`: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| RpcError::Transport(format!("bad value for header `{name}`: {e}")))?;
        header_map.insert(name, value);
    }
    let tls = options.tls.clone().unwrap_or_default();
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(ClientTls::config(&tls).as_ref().clone())
        .build()
        .map_err(|e| RpcError::Transport(format!("http client: {}", describe(&e))))?;
    let limits = options.limits;
    let (in_tx, in_rx) = crate::transport::inbound_queue();
    let (out_tx, out_rx) = outbound_queue(OUTBOUND_CAPACITY);
    let client = Arc::new(Client {
        http,
        url,
        headers: header_map,
        session: Mutex::new(None),
        protocol_version: Mutex::new(None),
        inbound: in_tx,
        limits,
        init: Mutex::new(None),
        initialized: Mutex::new(None),
        reinit: tokio::sync::Mutex::new(()),
        last_event_id: Mutex::new(None),
    });
    let writer = tokio::spawn(write_messages(client, out_rx));
    Ok(Transport {
        kind: TransportKind::StreamableHttp,
        limits,
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
    })
}

struct Client {
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    session: Mutex<Option<String>>,
    protocol_version: Mutex<Option<String>>,
    inbound: crate::transport::InboundSender,
    limits: Limits,
    /// The `initialize` POST's body, sent again to start a new session when the server ended
    /// the old one (404).
    init: Mutex<Option<Bytes>>,
    /// The `notifications/initialized` body, sent again after a re-initialize.
    initialized: Mutex<Option<Bytes>>,
    /// Held while a new session is being started.
    reinit: tokio::sync::Mutex<()>,
    /// The last GET-stream event id seen, for resuming with `Last-Event-ID`.
    last_event_id: Mutex<Option<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What an oversized or malformed frame from the server becomes. With an id read from its
/// first bytes, the driver acts on it as on any other transport: an answer fails the request
/// it answers at once (H76), a request gets its error reply. Without one there is nobody to
/// answer: it is only reported.
fn refusal(error: FrameError) -> Inbound {
    let answered = error.id().is_none();
    Inbound::Refused { error, answered }
}

impl Client {
    fn request(&self, method: Method) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(method, self.url.clone())
            .headers(self.headers.clone())
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(session) = lock(&self.session).clone() {
            builder = builder.header(SESSION_HEADER, session);
        }
        if let Some(version) = lock(&self.protocol_version).clone() {
            builder = builder.header(PROTOCOL_VERSION_HEADER, version);
        }
        builder
    }

    async fn push(&self, inbound: Inbound) {
        let _ = self.inbound.send(inbound).await;
    }

    /// Answers a request whose POST failed, so its caller learns why at once.
    async fn fail(&self, id: Option<&RequestId>, why: String) {
        match id {
            Some(id) => {
                let error = ErrorObject::new(ErrorCode::InternalError, why);
                let response = Response::error(Some(id.clone()), error);
                self.push(Inbound::Message(Message::Response(response)))
                    .await;
            }
            None => tracing::warn!("streamable http: {why}"),
        }
    }

    /// Reads a POST's or the GET stream's body: one JSON message, or an SSE stream of them.
    async fn read_body(&self, response: reqwest::Response, initialize: bool, get: bool) {
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse {
            let mut parser = SseParser::new(self.limits.max_frame_bytes);
            let mut body = response.bytes_stream();
            while let Some(chunk) = body.next().await {
                let Ok(chunk) = chunk else { break };
                for item in parser.push(&chunk) {
                    match item {
                        SseItem::Data(bytes) => {
                            if initialize {
                                self.note_protocol_version(&bytes);
                            }
                            self.push(Inbound::Frame(bytes)).await;
                        }
                        SseItem::TooLarge { len, head } => {
                            let error =
                                FrameError::too_large(len, self.limits.max_frame_bytes, &head);
                            self.push(refusal(error)).await;
                        }
                    }
                }
                if get && let Some(id) = parser.last_id() {
                    *lock(&self.last_event_id) = Some(id.to_owned());
                }
            }
            return;
        }
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok());
        match read_capped(
            response.bytes_stream(),
            self.limits.max_frame_bytes,
            declared,
        )
        .await
        {
            Ok(bytes) if bytes.is_empty() => {}
            Ok(bytes) => {
                if initialize {
                    self.note_protocol_version(&bytes);
                }
                self.push(Inbound::Frame(bytes)).await;
            }
            Err(error) => self.push(refusal(error)).await,
        }
    }

    /// Remembers the version the server chose in its `initialize` result, for the
    /// `MCP-Protocol-Version` header of later requests.
    fn note_protocol_version(&self, bytes: &[u8]) {
        let Ok(Message::Response(response)) = frame::decode(bytes, &self.limits) else {
            return;
        };
        if let Some(version) = response
            .outcome
            .ok()
            .and_then(|r| r.get("protocolVersion")?.as_str().map(str::to_owned))
        {
            *lock(&self.protocol_version) = Some(version);
        }
    }

    /// Handles a POST's answer: 202, a body, or an HTTP failure.
    async fn finish_post(
        &self,
        sent: reqwest::Result<reqwest::Response>,
        id: Option<RequestId>,
        initialize: bool,
    ) {
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                return self
                    .fail(
                        id.as_ref(),
                        format!("http request failed: {}", describe(&e)),
                    )
                    .await;
            }
        };
        let status = response.status();
        if status == StatusCode::ACCEPTED {
            return;
        }
        if status.is_success() {
            return self.read_body(response, initialize, false).await;
        }
        if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
            self.push(Inbound::Closed {
                reason: Some("the server ended the session (404)".into()),
            })
            .await;
            return;
        }
        // A refusal may still carry a JSON-RPC error body; otherwise name the status.
        let body = response.bytes().await.unwrap_or_default();
        match frame::decode(&body, &self.limits) {
            Ok(message @ Message::Response(_)) => self.push(Inbound::Message(message)).await,
            _ => {
                let text = String::from_utf8_lossy(&body);
                let text: String = text.chars().take(200).collect();
                self.fail(id.as_ref(), format!("http status {status}: {text}"))
                    .await;
            }
        }
    }

    /// Keeps the GET stream open: when the server ends it, it is opened again after a pause
    /// that doubles up to [`GET_RETRY_MAX`], with `Last-Event-ID` so the server replays what
    /// the cut stream missed. A 404 means the session is gone: a new one is started
    /// ([`Client::reinitialize`]). Stops when the server refuses the stream (405: no GET
    /// stream offered) and when the transport closes.
    async fn read_get_stream(self: Arc<Self>) {
        let mut pause = GET_RETRY_FIRST;
        loop {
            let stale = lock(&self.session).clone();
            let mut get = self
                .request(Method::GET)
                .header(ACCEPT, "text/event-stream");
            if let Some(last) = lock(&self.last_event_id).clone() {
                get = get.header(LAST_EVENT_ID_HEADER, last);
            }
            match get.send().await {
                Ok(response) if response.status().is_success() => {
                    pause = GET_RETRY_FIRST;
                    self.read_body(response, false, true).await;
                    continue;
                }
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                    if let Some(stale) = stale
                        && self.reinitialize(&stale).await
                    {
                        continue;
                    }
                    self.push(Inbound::Closed {
                        reason: Some("the server ended the session (404)".into()),
                    })
                    .await;
                    return;
                }
                Ok(response) if response.status().is_client_error() => {
                    tracing::debug!(status = %response.status(), "no GET stream");
                    return;
                }
                Ok(response) => {
                    tracing::warn!(status = %response.status(), "streamable http GET stream")
                }
                Err(e) => tracing::warn!("streamable http GET stream: {}", describe(&e)),
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(GET_RETRY_MAX);
        }
    }

    /// POSTs one encoded message under the current session.
    async fn post(&self, body: Bytes) -> reqwest::Result<reqwest::Response> {
        self.request(Method::POST)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
    }

    /// POSTs a message; when the server answers 404 because it ended the session, starts a new
    /// session and sends it once more (MCP: a client re-initializes on 404).
    async fn post_or_reinitialize(&self, body: Bytes) -> reqwest::Result<reqwest::Response> {
        let stale = lock(&self.session).clone();
        let sent = self.post(body.clone()).await;
        match (&sent, stale) {
            (Ok(response), Some(stale))
                if response.status() == StatusCode::NOT_FOUND
                    && self.reinitialize(&stale).await =>
            {
                self.post(body).await
            }
            _ => sent,
        }
    }

    /// Starts a new session in place of `stale`, which the server no longer knows: the
    /// `initialize` request is sent again (its answer is not handed to the peer, which has one
    /// already), then `notifications/initialized`. Returns whether a session is open.
    async fn reinitialize(&self, stale: &str) -> bool {
        let _one_at_a_time = self.reinit.lock().await;
        let current = lock(&self.session).clone();
        if current.as_deref() != Some(stale) {
            return current.is_some(); // another task did it already
        }
        let Some(init) = lock(&self.init).clone() else {
            return false;
        };
        *lock(&self.session) = None;
        *lock(&self.last_event_id) = None;
        let response = match self.post(init).await {
            Ok(response) if response.status().is_success() => response,
            Ok(response) => {
                tracing::warn!(status = %response.status(), "re-initialize refused");
                return false;
            }
            Err(e) => {
                tracing::warn!("re-initialize failed: {}", describe(&e));
                return false;
            }
        };
        let session = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let Some(session) = session else {
            return false;
        };
        // The answer repeats the first one; read it to the end of its stream and drop it.
        let _ = response.bytes().await;
        *lock(&self.session) = Some(session);
        let initialized = lock(&self.initialized).clone();
        if let Some(initialized) = initialized {
            let _ = self.post(initialized).await;
        }
        tracing::info!("the server ended the session; a new one was started");
        true
    }
}

async fn write_messages(client: Arc<Client>, mut rx: crate::transport::OutboundReceiver) {
    // Readers of response bodies and the GET stream live as long as this writer.
    let mut readers = JoinSet::new();
    let mut get_opened = false;
    while let Some(out) = rx.recv().await {
        while readers.try_join_next().is_some() {}
        let message = out.message;
        let (id, initialize) = match &message {
            Message::Request(r) => (Some(r.id.clone()), r.method == methods::INITIALIZE),
            _ => (None, false),
        };
        let body = Bytes::from(frame::encode(&message));
        if initialize {
            *lock(&client.init) = Some(body.clone());
        } else if matches!(&message, Message::Notification(n) if n.method == methods::INITIALIZED) {
            *lock(&client.initialized) = Some(body.clone());
        }
        if id.is_some() && !initialize {
            let client = client.clone();
            readers.spawn(async move {
                let sent = client.post_or_reinitialize(body).await;
                client.finish_post(sent, id, false).await;
            });
            continue;
        }
        if initialize {
            let sent = client.post(body).await;
            if let Ok(response) = &sent {
                let session = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if session.is_some() {
                    *lock(&client.session) = session;
                }
            }
            let client2 = client.clone();
            readers.spawn(async move { client2.finish_post(sent, id, true).await });
            if !get_opened && lock(&client.session).is_some() {
                get_opened = true;
                readers.spawn(client.clone().read_get_stream());
            }
        } else {
            let sent = client.post_or_reinitialize(body).await;
            client.finish_post(sent, id, false).await;
        }
    }
    // The peer closed: end the session on the server too.
    if lock(&client.session).is_some() {
        let _ = client.request(Method::DELETE).send().await;
    }
    readers.abort_all();
}
