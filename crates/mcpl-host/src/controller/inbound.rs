//! Reading frames: responses to the controller's requests (on time or late), server requests
//! (`push/event`) and notifications (`tools/hints`, list and manifest changes).

use std::sync::Arc;
use std::time::Instant;

use mcpl_protocol::jsonrpc::{
    ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response,
};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{HINTS_KEY, HintChanges, ListResult};
use serde_json::{Map, Value, json};

use super::state;
use super::{
    Answer, Carrier, Controller, EVENT_CAP, Effect, Outcome, PushEvent, ReadSeq, RecoveryReason,
    ReqKind,
};

/// The hint changes a result carries: `Ok(None)` without any, `Err` when they do not decode.
fn hints_of(result: &Value) -> Result<Option<HintChanges>, ()> {
    match result.get("_meta").and_then(|m| m.get(HINTS_KEY)) {
        None => Ok(None),
        Some(v) => HintChanges::from_value(v.clone()).map(Some).map_err(|_| ()),
    }
}

impl Controller {
    /// Reads one frame, in read order (H13). `read_seq` is the reader's sequence number for
    /// the frame, if the transport gives one; otherwise the controller counts frames itself.
    ///
    /// May queue: `Changed` (hints applied), `Notice` (suggestions), `Event` (a push),
    /// `Answered` (a command's answer), `Send` (replies, next pages, recovery reads) and
    /// `Recovering`.
    pub fn handle_message(&mut self, now: Instant, read_seq: Option<u64>, msg: Message) {
        if self.closed {
            return; // H27: nothing read after close applies
        }
        self.read_seq = read_seq.unwrap_or(self.read_seq + 1).max(self.read_seq);
        let seq = self.read_seq;
        match msg {
            Message::Response(r) => self.on_response(now, seq, r),
            Message::Request(r) => self.on_request(now, seq, r),
            Message::Notification(n) => self.on_notification(now, seq, n),
        }
    }

    /// A frame that could not be decoded (H76: too deep, a lone surrogate). If its id could be
    /// recovered, the request it answers fails as if the server had sent an error; otherwise
    /// the request times out as usual.
    pub fn handle_undecodable(&mut self, now: Instant, id: Option<RequestId>) {
        if self.closed {
            return;
        }
        if let Some(id) = id {
            let error = ErrorObject::new(ErrorCode::ParseError, "undecodable answer");
            self.on_response(
                now,
                self.read_seq,
                Response {
                    id: Some(id),
                    outcome: Err(error),
                    extra: Map::new(),
                },
            );
        }
    }

    fn on_response(&mut self, now: Instant, seq: ReadSeq, r: Response) {
        let Some(id) = r.id else { return };
        let outcome = r.outcome;
        let (kind, late) = match self.requests.remove(&id) {
            Some(req) => (req.kind, false),
            None => match self.late.iter().position(|(i, _)| *i == id) {
                Some(at) => match self.late.remove(at) {
                    Some((_, kind)) => (kind, true),
                    None => return,
                },
                // H05: late list pages were never kept, so they apply nothing.
                None => return,
            },
        };
        match kind {
            ReqKind::ListPage { run } => match &outcome {
                Ok(result) => self.list_page(now, run, result),
                Err(_) => self.list_error(now, run),
            },
            ReqKind::Statement { run, pending } => {
                let ok = match &outcome {
                    Ok(result) => self.read_statement(now, seq, result, run, pending, late),
                    Err(_) => false,
                };
                if let Some(p) = pending.filter(|_| !late) {
                    self.answer_with(p, outcome);
                }
                if let Some(run) = run {
                    self.statement_done(now, run, ok);
                }
            }
            ReqKind::Open {
                pending,
                toolset,
                instance,
            } => {
                if let Ok(result) = &outcome {
                    // §5.2: `instance` is always present for instanced toolsets.
                    // A bad instance name in the result marks nothing opened here.
                    let inst = match result.get("instance").and_then(Value::as_str) {
                        Some(i) => super::names::instance(Some(i)),
                        None => instance,
                    };
                    self.hinted_result(now, seq, pending, late, result);
                    let key = (
                        toolset.clone(),
                        self.snap.instance_key(&toolset, inst.as_ref()),
                    );
                    if self.snap.open.contains_key(&key) {
                        Arc::make_mut(&mut self.snap).opened_here.insert(key);
                    }
                }
                if !late {
                    self.answer_with(pending, outcome);
                }
            }
            ReqKind::Close { pending } | ReqKind::Call { pending } => {
                if let Ok(result) = &outcome {
                    self.hinted_result(now, seq, pending, late, result);
                }
                if !late {
                    self.answer_with(pending, outcome);
                }
            }
            ReqKind::Manifest => {
                if let Ok(result) = &outcome {
                    self.apply_manifest(now, result);
                }
            }
        }
    }

    fn answer_with(&mut self, pending: super::Pending, outcome: Result<Value, ErrorObject>) {
        let outcome = match outcome {
            Ok(v) => Outcome::Result(v),
            Err(e) => Outcome::Error(e),
        };
        self.effects
            .push_back(Effect::Answered(Answer { pending, outcome }));
    }

    /// H13, H14: a result's hints apply when read, late or not.
    fn hinted_result(
        &mut self,
        now: Instant,
        seq: ReadSeq,
        pending: super::Pending,
        late: bool,
        result: &Value,
    ) {
        if !self.snap.hinted {
            return; // H12
        }
        match hints_of(result) {
            Ok(Some(h)) => self.place(now, seq, Carrier::Result { pending, late }, h),
            Ok(None) => {}
            // Hints that cannot be read cannot be ordered: apply nothing, re-read instead.
            Err(()) => self.trigger(now, RecoveryReason::Malformed),
        }
    }

    /// Reads a `toolsets/list` result; false when malformed or stale (H22).
    fn read_statement(
        &mut self,
        now: Instant,
        seq: ReadSeq,
        result: &Value,
        run: Option<u64>,
        pending: Option<super::Pending>,
        late: bool,
    ) -> bool {
        if !self.snap.hinted {
            return false;
        }
        // H22: `open` missing or not an array (or no hints with a rev) is malformed.
        let Ok(list) = serde_json::from_value::<ListResult>(result.clone()) else {
            tracing::warn!(server = %self.cfg.server, "malformed toolsets/list result; nothing applied");
            return false;
        };
        let rev = list.hints().rev.get();
        let away = run.is_some_and(|r| self.run_is_connect(r));
        let carrier = match pending {
            Some(p) => Carrier::Result { pending: p, late },
            None => Carrier::Statement,
        };
        self.place_statement(now, seq, carrier, &list, rev, away)
    }

    fn on_request(&mut self, now: Instant, seq: ReadSeq, r: Request) {
        match r.method.as_str() {
            methods::PUSH_EVENT => self.on_push(now, seq, r),
            methods::PING => self.reply(r.id, Ok(json!({}))),
            _ => {
                let message = format!("method `{}` is not handled here", r.method);
                self.reply(
                    r.id,
                    Err(ErrorObject::new(ErrorCode::MethodNotFound, message)),
                );
            }
        }
    }

    fn on_push(&mut self, now: Instant, seq: ReadSeq, r: Request) {
        let params = r.params.clone().unwrap_or(Value::Null);
        let accepted = self.cfg.push_events;
        let event_id = params
            .get("eventId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let duplicate = event_id.as_ref().is_some_and(|e| self.seen_set.contains(e));
        if self.snap.hinted {
            if let Some(raw) = params.get("hints") {
                match HintChanges::from_value(raw.clone()) {
                    // H17: ignore its hints, count its rev as passed.
                    Ok(h) if duplicate => self.pass_duplicate(now, Some(h.rev.get())),
                    Ok(h) => {
                        // H13, B.19: applied on read, accepted or refused.
                        let carrier = Carrier::Push {
                            event_id: event_id.clone(),
                            accepted,
                        };
                        self.place(now, seq, carrier, h);
                    }
                    Err(_) => self.trigger(now, RecoveryReason::Malformed),
                }
            }
        }
        if let Some(e) = event_id.filter(|_| !duplicate) {
            if self.seen_events.len() >= EVENT_CAP {
                if let Some(old) = self.seen_events.pop_front() {
                    self.seen_set.remove(&old);
                }
            }
            self.seen_set.insert(e.clone());
            self.seen_events.push_back(e);
        }
        if accepted {
            if !duplicate {
                self.effects.push_back(Effect::Event(PushEvent {
                    seq,
                    params,
                    accepted,
                }));
            }
            self.reply(r.id, Ok(json!({ "accepted": true })));
        } else {
            let error = ErrorObject::new(ErrorCode::CapabilityDenied, "pushEvents is not granted")
                .with_data(json!({ "capability": "pushEvents" }));
            self.reply(r.id, Err(error));
        }
    }

    fn on_notification(&mut self, now: Instant, seq: ReadSeq, n: Notification) {
        match n.method.as_str() {
            methods::TOOLS_HINTS => {
                if !self.snap.hinted {
                    return; // H12
                }
                let params = n.params.unwrap_or(Value::Null);
                match HintChanges::from_value(params) {
                    Ok(h) => self.place(now, seq, Carrier::Hints, h),
                    Err(_) => self.trigger(now, RecoveryReason::Malformed),
                }
            }
            methods::TOOLS_LIST_CHANGED => self.trigger(now, RecoveryReason::ListChanged),
            methods::MANIFEST_CHANGED => {
                self.request(now, methods::MANIFEST, Some(json!({})), ReqKind::Manifest);
            }
            _ => {}
        }
    }

    fn reply(&mut self, id: RequestId, outcome: Result<Value, ErrorObject>) {
        self.effects
            .push_back(Effect::Send(Message::Response(Response {
                id: Some(id),
                outcome,
                extra: Map::new(),
            })));
    }

    /// H30: a new manifest (from `mcpl/manifest`); removed declarations close their
    /// instances, and a withdrawn toolHints makes the server hint-less.
    fn apply_manifest(&mut self, now: Instant, manifest: &Value) {
        let manifest = manifest.get("manifest").unwrap_or(manifest);
        if !self.snap.hinted {
            return;
        }
        if manifest.get("toolHints").and_then(Value::as_bool) != Some(true) {
            state::drop_hints(Arc::make_mut(&mut self.snap));
            return;
        }
        let items = state::set_declared(Arc::make_mut(&mut self.snap), Some(manifest));
        self.emit_at(self.read_seq, Carrier::Manifest, items);
        self.trigger(now, RecoveryReason::ListChanged);
    }
}
