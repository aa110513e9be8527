//! The suite as a scripted host: one connection to the server under test, every message
//! recorded, every hint batch's rev noted in read order.

use crate::target::{Options, ServerTarget, Unreachable};
use crate::transcript::{Direction, Transcript};
use crate::verdict::{Step, Verdict, ensure, fail};
use crate::wire::{brief, result_hints, rev_of};
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use mcpl_protocol::methods;
use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Event, Events, Limits, Peer, PeerConfig, RequestOptions, RpcError, Transport};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::time::Instant;

/// What the scripted host advertises and grants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Profile {
    /// Advertise `toolHints: true`.
    pub tool_hints: bool,
    /// Advertise `pushEvents: true`.
    pub push_events: bool,
    /// Grant `pushEvents` in the initial policy.
    pub grant_push: bool,
    /// How to answer a `push/event`.
    pub push_reply: PushReply,
}

/// How the scripted host answers a `push/event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PushReply {
    /// `{accepted: true}`.
    Accept,
    /// `{accepted: false, reason}` (a refusal, §6.1: its hints still apply).
    Refuse,
    /// A JSON-RPC error (the push failed).
    Error,
}

impl Profile {
    /// A host with `toolHints` and a `pushEvents` grant that accepts every push.
    pub fn hinted() -> Self {
        Profile {
            tool_hints: true,
            push_events: true,
            grant_push: true,
            push_reply: PushReply::Accept,
        }
    }

    /// A host without `toolHints` (pushes granted).
    pub fn plain() -> Self {
        Profile {
            tool_hints: false,
            ..Profile::hinted()
        }
    }
}

/// Something the server sent on its own.
#[derive(Debug, Clone)]
pub(crate) enum Seen {
    /// A notification.
    Notification { method: String, params: Value },
    /// A `push/event` request (already answered as the profile says).
    Push { params: Value },
    /// Any other request (answered `-32601`).
    Request { method: String },
    /// An answer nobody awaited any more.
    Late { method: String, outcome: Value },
}

impl Seen {
    /// The hint batch this message carries, if any.
    pub fn hints(&self) -> Option<&Value> {
        match self {
            Seen::Notification { method, params } if method == methods::TOOLS_HINTS => Some(params),
            Seen::Push { params } => params.get("hints"),
            Seen::Late { outcome, .. } => result_hints(outcome),
            _ => None,
        }
    }

    /// Its params (a notification's or request's), or a late answer's outcome.
    pub fn params(&self) -> Value {
        match self {
            Seen::Notification { params, .. } | Seen::Push { params } => params.clone(),
            Seen::Request { .. } => Value::Null,
            Seen::Late { outcome, .. } => outcome.clone(),
        }
    }

    /// What carried it, as the vector file names carriers: the notification's method,
    /// `push/event`, `request METHOD`, or `late result`.
    pub fn carrier(&self) -> String {
        match self {
            Seen::Notification { method, .. } => method.clone(),
            Seen::Push { .. } => methods::PUSH_EVENT.to_owned(),
            Seen::Request { method } => format!("request {method}"),
            Seen::Late { .. } => "late result".to_owned(),
        }
    }

    /// A short description for failure messages.
    pub fn describe(&self) -> String {
        match self {
            Seen::Notification { method, params } => format!("{method} {}", brief(params)),
            Seen::Push { params } => format!("push/event {}", brief(params)),
            Seen::Request { method } => format!("request {method}"),
            Seen::Late { method, outcome } => format!("late answer to {method} {}", brief(outcome)),
        }
    }
}

/// One scripted-host connection.
pub(crate) struct Conn {
    label: String,
    peer: Peer,
    events: Events,
    transcript: Transcript,
    inbox: Vec<Seen>,
    /// Every hint batch read on this connection: (read-order number, rev, carrier).
    revs: Vec<(u64, Option<u64>, String)>,
    /// The `initialize` result.
    pub init: Value,
    profile: Profile,
    timeout: Duration,
    closed: bool,
    /// Frames that break JSON-RPC itself, as read: a response to no request in flight (a
    /// wrong id, an id whose type changed, a second response), an unreadable frame.
    violations: Vec<String>,
}

impl Conn {
    /// Opens a connection to `target`, runs `initialize`, `notifications/initialized` and the
    /// initial policy (`featureSets/update`, a Request even when it grants nothing: MCPL §5.3).
    pub async fn open(
        target: &ServerTarget,
        options: &Options,
        transcript: &Transcript,
        label: &str,
        profile: Profile,
    ) -> Step<Conn> {
        let transport = connect(target).await.map_err(|e| Verdict::Fail(e.reason))?;
        let config = PeerConfig {
            default_timeout: options.timeout,
            ..PeerConfig::default()
        };
        let (peer, events) = Peer::start(transport, config);
        let mut conn = Conn {
            label: label.to_owned(),
            peer,
            events,
            transcript: transcript.clone(),
            inbox: Vec::new(),
            revs: Vec::new(),
            init: Value::Null,
            profile,
            timeout: options.timeout,
            closed: false,
            violations: Vec::new(),
        };
        let mut mcpl = json!({"version": "0.5"});
        if profile.tool_hints {
            mcpl["toolHints"] = json!(true);
        }
        if profile.push_events {
            mcpl["pushEvents"] = json!(true);
        }
        let init = conn
            .request(
                methods::INITIALIZE,
                json!({
                    "protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                    "capabilities": {"experimental": {"mcpl": mcpl}},
                    "clientInfo": {"name": "mcpl-conformance", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        conn.init = init;
        conn.notify(methods::INITIALIZED, json!({}))?;
        let policy = if profile.grant_push {
            json!({"effectiveCapabilities": ["pushEvents"]})
        } else {
            json!({})
        };
        // A server without MCPL grants may refuse this; that is not this suite's concern.
        let _ = conn
            .request_raw(methods::FEATURE_SETS_UPDATE, policy)
            .await?;
        Ok(conn)
    }

    /// The server's `experimental.mcpl` (its manifest), or `null`.
    pub fn manifest(&self) -> &Value {
        self.init
            .pointer("/capabilities/experimental/mcpl")
            .unwrap_or(&Value::Null)
    }

    /// Whether the server advertised `toolHints`.
    pub fn server_has_hints(&self) -> bool {
        self.manifest().get("toolHints").and_then(Value::as_bool) == Some(true)
    }

    /// The declaration of `toolset` in the manifest.
    pub fn declaration(&self, toolset: &str) -> Option<&Value> {
        self.manifest().get("toolsets")?.get(toolset)
    }

    /// Sends a request and returns its result; a JSON-RPC error fails the check.
    pub async fn request(&mut self, method: &str, params: Value) -> Step<Value> {
        match self.request_raw(method, params).await? {
            Ok(v) => Ok(v),
            Err(e) => fail!(
                "`{method}` on {} was answered with error {}: {}",
                self.label,
                e.code,
                e.message
            ),
        }
    }

    /// Sends a request and returns its result or error object; only a transport failure or a
    /// timeout fails the check. Events read meanwhile are handled in read order.
    pub async fn request_raw(
        &mut self,
        method: &str,
        params: Value,
    ) -> Step<Result<Value, ErrorObject>> {
        let pending = self
            .peer
            .start_request(
                method,
                Some(params.clone()),
                RequestOptions::timeout(self.timeout),
            )
            .map_err(|e| Verdict::Fail(format!("cannot send `{method}`: {e}")))?;
        self.record_out(Message::Request(Request::new(
            pending.id().clone(),
            method,
            Some(params),
        )));
        let id = pending.id().clone();
        let wait = pending.wait();
        tokio::pin!(wait);
        loop {
            tokio::select! {
                biased;
                answer = &mut wait => return self.finish(method, id, answer),
                event = self.events.recv(), if !self.closed => {
                    self.handle(event);
                    self.check_frames()?;
                }
            }
        }
    }

    /// Fails at the first frame that broke JSON-RPC, naming it: the check ends as soon as
    /// such a frame is read, not at the suite's timeout.
    fn check_frames(&self) -> Step {
        if let Some(first) = self.violations.first() {
            fail!("on {}: {first}", self.label);
        }
        Ok(())
    }

    fn finish(
        &mut self,
        method: &str,
        id: RequestId,
        answer: Result<mcpl_rpc::Answered<Value>, RpcError>,
    ) -> Step<Result<Value, ErrorObject>> {
        match answer {
            Ok(answered) => {
                self.record_in(Message::Response(Response::ok(
                    id.clone(),
                    answered.value.clone(),
                )));
                ensure!(
                    answered.value.is_object(),
                    "on {}: the answer to `{method}` (id {id}) has a result that is not an object: {}",
                    self.label,
                    brief(&answered.value)
                );
                if let Some(h) = result_hints(&answered.value) {
                    self.revs
                        .push((answered.seq, rev_of(h), format!("{method} result")));
                }
                Ok(Ok(answered.value))
            }
            Err(RpcError::Remote { error, .. }) => {
                self.record_in(Message::Response(Response::error(
                    Some(id),
                    (*error).clone(),
                )));
                Ok(Err(*error))
            }
            Err(e) => fail!("`{method}` on {} got no answer: {e}", self.label),
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Step {
        self.record_out(Message::Notification(Notification::new(
            method,
            Some(params.clone()),
        )));
        self.peer
            .notify_value(method, Some(params))
            .map_err(|e| Verdict::Fail(format!("cannot send `{method}`: {e}")))
    }

    /// Starts a `tools/call` and returns its id without waiting, for a check that cancels it.
    pub fn start_call(&mut self, params: Value) -> Step<mcpl_rpc::PendingRequest> {
        let pending = self
            .peer
            .start_request(
                methods::TOOLS_CALL,
                Some(params.clone()),
                RequestOptions::timeout(self.timeout),
            )
            .map_err(|e| Verdict::Fail(format!("cannot send `tools/call`: {e}")))?;
        self.record_out(Message::Request(Request::new(
            pending.id().clone(),
            methods::TOOLS_CALL,
            Some(params),
        )));
        Ok(pending)
    }

    /// Records the `notifications/cancelled` the peer sent for `id`.
    pub fn note_cancel(&mut self, id: &RequestId) {
        self.record_out(Message::Notification(Notification::new(
            methods::CANCELLED,
            Some(json!({"requestId": id, "reason": "cancelled by the conformance suite"})),
        )));
    }

    /// `tools/call` of `name` with `args` (and `mcpl/instance`); a JSON-RPC error fails.
    pub async fn call(&mut self, name: &str, args: Value, instance: Option<&str>) -> Step<Value> {
        self.request(
            methods::TOOLS_CALL,
            crate::wire::call_params(name, args, instance),
        )
        .await
    }

    /// Handles events for `dur`, or until the connection closes.
    pub async fn watch(&mut self, dur: Duration) {
        let deadline = Instant::now() + dur;
        while !self.closed {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return,
                event = self.events.recv() => self.handle(event),
            }
        }
    }

    /// Waits up to `dur` for a message that `pred` accepts and takes it out of the inbox.
    pub async fn wait_for(&mut self, dur: Duration, pred: impl Fn(&Seen) -> bool) -> Option<Seen> {
        let deadline = Instant::now() + dur;
        loop {
            if let Some(i) = self.inbox.iter().position(&pred) {
                return Some(self.inbox.remove(i));
            }
            if self.closed {
                return None;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return None,
                event = self.events.recv() => self.handle(event),
            }
        }
    }

    /// A sync point instead of a quiet window: sends `tools/list` and takes in everything the
    /// server sent before its answer. A server handles one connection's requests in order, so
    /// what it sent while handling an earlier request is read by then; and the list's
    /// `_meta["mcpl/rev"]` is the last rev the server took (§6.1), so a hint batch it issued
    /// before answering shows there even if its carrier is still on the way. Returns the
    /// list's rev.
    pub async fn sync(&mut self) -> Step<Option<u64>> {
        let list = self.request(methods::TOOLS_LIST, json!({})).await?;
        while let Some(event) = self.events.try_recv() {
            self.handle(Some(event));
        }
        self.check_frames()?;
        Ok(crate::wire::list_rev(&list))
    }

    /// Everything the server sent on its own and no check took yet.
    pub fn inbox(&self) -> &[Seen] {
        &self.inbox
    }

    /// Every hint batch read so far, in read order: (rev, carrier).
    pub fn revs(&self) -> Vec<(Option<u64>, String)> {
        let mut revs = self.revs.clone();
        revs.sort_by_key(|r| r.0);
        revs.into_iter().map(|(_, r, c)| (r, c)).collect()
    }

    /// §6.1: the revs read so far are 1, 2, 3, ... in read order, one per hinted message.
    ///
    /// Server messages read before the last answer may still wait in the event queue (an
    /// answer goes to its caller at once, a notification through the queue), so they are
    /// taken first: a rev is judged against everything read before it, not only what a
    /// check happened to wait for.
    ///
    /// It also fails at any frame read so far that broke JSON-RPC (see `violations`).
    pub fn check_revs(&mut self) -> Step {
        while let Some(event) = self.events.try_recv() {
            self.handle(Some(event));
        }
        self.check_frames()?;
        for (i, (rev, carrier)) in self.revs().iter().enumerate() {
            let want = i as u64 + 1;
            match rev {
                None => fail!(
                    "the hints in the {carrier} on {} carry no integer rev",
                    self.label
                ),
                Some(r) if *r != want => fail!(
                    "the hints in the {carrier} on {} carry rev {r}; rev {want} was due (§6.1: revs are consecutive from 1 across every carrier)",
                    self.label
                ),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The last rev read, or 0.
    pub fn last_rev(&self) -> u64 {
        self.revs().last().and_then(|r| r.0).unwrap_or(0)
    }

    /// Closes the connection.
    pub async fn close(mut self) {
        self.peer.close().await;
        while let Some(event) = self.events.recv().await {
            self.handle(Some(event));
        }
    }

    fn handle(&mut self, event: Option<Event>) {
        let Some(event) = event else {
            self.closed = true;
            return;
        };
        match event {
            Event::Request {
                seq,
                request,
                responder,
            } => {
                self.record_in(Message::Request(request.clone()));
                let params = request.params.clone().unwrap_or(Value::Null);
                if request.method == methods::PUSH_EVENT {
                    if let Some(h) = params.get("hints") {
                        self.revs.push((seq, rev_of(h), "push/event".into()));
                    }
                    let outcome = self.push_answer();
                    self.record_out(Message::Response(match &outcome {
                        Ok(v) => Response::ok(request.id.clone(), v.clone()),
                        Err(e) => Response::error(Some(request.id.clone()), e.clone()),
                    }));
                    let _ = match outcome {
                        Ok(v) => responder.respond(v),
                        Err(e) => responder.error(e),
                    };
                    self.inbox.push(Seen::Push { params });
                } else {
                    let id = request.id.clone();
                    self.record_out(Message::Response(Response::method_not_found(
                        id,
                        &request.method,
                    )));
                    let _ = responder.method_not_found();
                    self.inbox.push(Seen::Request {
                        method: request.method,
                    });
                }
            }
            Event::Notification { seq, notification } => {
                self.record_in(Message::Notification(notification.clone()));
                let params = notification.params.unwrap_or(Value::Null);
                if notification.method == methods::TOOLS_HINTS {
                    self.revs.push((seq, rev_of(&params), "tools/hints".into()));
                }
                self.inbox.push(Seen::Notification {
                    method: notification.method,
                    params,
                });
            }
            Event::LateResponse {
                seq,
                id,
                method,
                outcome,
                ..
            } => {
                self.record_in(Message::Response(Response {
                    id: Some(id),
                    outcome: outcome.clone(),
                    extra: Default::default(),
                }));
                let outcome = outcome.unwrap_or_else(|e| json!({"error": e}));
                if let Some(h) = result_hints(&outcome) {
                    self.revs
                        .push((seq, rev_of(h), format!("late {method} result")));
                }
                self.inbox.push(Seen::Late { method, outcome });
            }
            Event::Response { response, .. } => {
                let id = response.id.as_ref().map_or_else(
                    || "null".to_owned(),
                    |i| serde_json::to_string(i).unwrap_or_default(),
                );
                self.violations.push(format!(
                    "the server sent a response with id {id}, which answers no request in flight (a wrong id, an id whose type changed, or a second response to one request)"
                ));
                self.record_in(Message::Response(response));
            }
            Event::Cancelled { id, .. } => {
                self.record_in(Message::Notification(Notification::new(
                    methods::CANCELLED,
                    Some(json!({"requestId": id})),
                )));
            }
            Event::BadFrame { error, .. } => {
                self.violations.push(format!(
                    "the server sent a frame that is not a JSON-RPC message: {error}"
                ));
                self.transcript.record(
                    &self.label,
                    Direction::Peer,
                    json!({"unreadable frame": error.to_string()}),
                );
            }
            Event::Closed { .. } => self.closed = true,
            _ => {}
        }
    }

    fn push_answer(&self) -> Result<Value, ErrorObject> {
        use mcpl_protocol::jsonrpc::ErrorCode;
        if !self.profile.grant_push {
            return Err(
                ErrorObject::new(ErrorCode::CapabilityDenied, "capability denied")
                    .with_data(json!({"capability": "pushEvents"})),
            );
        }
        match self.profile.push_reply {
            PushReply::Accept => Ok(json!({"accepted": true})),
            PushReply::Refuse => {
                Ok(json!({"accepted": false, "reason": "refused by the conformance suite"}))
            }
            PushReply::Error => Err(ErrorObject::new(
                ErrorCode::InternalError,
                "push failed in the conformance suite",
            )),
        }
    }

    fn record_out(&self, message: Message) {
        self.transcript
            .record(&self.label, Direction::Suite, to_value(&message));
    }

    fn record_in(&self, message: Message) {
        self.transcript
            .record(&self.label, Direction::Peer, to_value(&message));
    }

    /// Fails unless the server advertised `toolHints`.
    pub fn require_hints(&self) -> Step {
        ensure!(
            self.server_has_hints(),
            "the server does not advertise experimental.mcpl.toolHints: true in its initialize result"
        );
        Ok(())
    }
}

fn to_value(message: &Message) -> Value {
    serde_json::from_str(&message.to_json()).unwrap_or(Value::Null)
}

/// Opens a transport to the target.
async fn connect(target: &ServerTarget) -> Result<Transport, Unreachable> {
    match target {
        ServerTarget::Command(cmd) => {
            let Some((program, args)) = cmd.split_first() else {
                return Err(Unreachable::new("empty server command"));
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            Transport::child(command, StderrMode::Discard, Limits::default())
                .map_err(Unreachable::new)
        }
        ServerTarget::Url {
            url,
            token,
            headers: extra,
        } => {
            if !url.starts_with("ws://") {
                return Err(Unreachable::new(format!(
                    "`{url}`: only ws:// URLs are supported by this suite so far"
                )));
            }
            let bearer = token.as_ref().map(|t| format!("Bearer {t}"));
            let mut headers: Vec<(&str, &str)> = extra
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            if let Some(bearer) = bearer.as_deref() {
                headers.push(("Authorization", bearer));
            }
            mcpl_rpc::transport::ws::connect(url, &headers, Limits::default())
                .await
                .map_err(Unreachable::new)
        }
        ServerTarget::Connector(c) => c.connect().await,
    }
}
