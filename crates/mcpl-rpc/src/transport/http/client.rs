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
//! again when the server ends it; resuming with `Last-Event-ID` is not done, so messages sent
//! while it is down are lost unless the server keeps them (ours does: see
//! [`super::server`]).

use super::sse::{SseItem, SseParser};
use super::{PROTOCOL_VERSION_HEADER, SESSION_HEADER, read_capped};
use crate::error::RpcError;
use crate::transport::{Guard, INBOUND_CAPACITY, Inbound, Outbound, Transport, TransportKind};
use futures_util::StreamExt;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId, Response};
use mcpl_protocol::methods;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// The first pause before the GET stream is opened again.
const GET_RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest pause before the GET stream is opened again.
const GET_RETRY_MAX: Duration = Duration::from_secs(30);

/// Opens a Streamable HTTP client for the endpoint `url`, sending `headers` (for example
/// `Authorization`) with every request. Nothing is sent until the peer writes `initialize`.
pub fn connect(url: &str, headers: &[(&str, &str)], limits: Limits) -> Result<Transport, RpcError> {
    let url = reqwest::Url::parse(url)
        .map_err(|e| RpcError::Transport(format!("bad http url `{url}`: {e}")))?;
    if url.scheme() != "http" {
        return Err(RpcError::Transport(format!(
            "unsupported scheme `{}`: only http:// is built in",
            url.scheme()
        )));
    }
    let mut header_map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| RpcError::Transport(format!("bad header name `{name}`: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| RpcError::Transport(format!("bad value for header `{name}`: {e}")))?;
        header_map.insert(name, value);
    }
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| RpcError::Transport(format!("http client: {e}")))?;
    let (in_tx, in_rx) = mpsc::channel(INBOUND_CAPACITY);
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let client = Arc::new(Client {
        http,
        url,
        headers: header_map,
        session: Mutex::new(None),
        protocol_version: Mutex::new(None),
        inbound: in_tx,
        limits,
    });
    let writer = tokio::spawn(write_messages(client, out_rx));
    Ok(Transport {
        kind: TransportKind::StreamableHttp,
        limits,
        inbound: in_rx,
        outbound: out_tx,
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
    inbound: mpsc::Sender<Inbound>,
    limits: Limits,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
    async fn read_body(&self, response: reqwest::Response, initialize: bool) {
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
                        SseItem::TooLarge(len) => {
                            let error = FrameError::TooLarge {
                                len,
                                max: self.limits.max_frame_bytes,
                            };
                            // Nobody to answer on this wire: report only.
                            self.push(Inbound::Refused {
                                error,
                                answered: true,
                            })
                            .await;
                        }
                    }
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
            Err(error) => {
                self.push(Inbound::Refused {
                    error,
                    answered: true,
                })
                .await;
            }
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
                    .fail(id.as_ref(), format!("http request failed: {e}"))
                    .await;
            }
        };
        let status = response.status();
        if status == StatusCode::ACCEPTED {
            return;
        }
        if status.is_success() {
            return self.read_body(response, initialize).await;
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
    /// that doubles up to [`GET_RETRY_MAX`]. Stops when the server refuses it (405: no GET
    /// stream offered; 404: the session is gone) and when the transport closes.
    async fn read_get_stream(self: Arc<Self>) {
        let mut pause = GET_RETRY_FIRST;
        loop {
            let sent = self
                .request(Method::GET)
                .header(ACCEPT, "text/event-stream")
                .send()
                .await;
            match sent {
                Ok(response) if response.status().is_success() => {
                    pause = GET_RETRY_FIRST;
                    self.read_body(response, false).await;
                }
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
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
                Err(e) => tracing::warn!("streamable http GET stream: {e}"),
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(GET_RETRY_MAX);
        }
    }
}

async fn write_messages(client: Arc<Client>, mut rx: mpsc::UnboundedReceiver<Outbound>) {
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
        let post = client
            .request(Method::POST)
            .header(CONTENT_TYPE, "application/json")
            .body(frame::encode(&message));
        if id.is_some() && !initialize {
            let client = client.clone();
            readers.spawn(async move {
                let sent = post.send().await;
                client.finish_post(sent, id, false).await;
            });
            continue;
        }
        let sent = post.send().await;
        if initialize {
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
            client.finish_post(sent, id, false).await;
        }
    }
    // The peer closed: end the session on the server too.
    if lock(&client.session).is_some() {
        let _ = client.request(Method::DELETE).send().await;
    }
    readers.abort_all();
}
