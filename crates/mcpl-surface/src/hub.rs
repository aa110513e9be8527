//! The hub: every backing server's controller, under one lock, and what the agent is owed.
//!
//! Links feed frames in; meta-tools send commands; both drain the controller's effects here,
//! under the lock, so `Send`s leave in the order they were polled (§6.1) and every change is
//! queued for the agent in read order (H41). The lock is a std mutex: it is never held across
//! an await.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use mcpl_host::controller::{Controller, Effect, Outcome, Pending, Snapshot, Unconfirmed};
use mcpl_host::presenter::{Presenter, PresenterConfig};
use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_protocol::methods;
use mcpl_rpc::Peer;
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot};

use crate::connector::Connector;
use crate::link::{LinkStatus, LinkTiming, now};
use crate::meter::Meter;
use crate::news::{News, NewsItem};

/// How pushes reach the client besides the meta-tool results.
#[derive(Debug, Clone)]
pub(crate) enum ClientSink {
    /// As `notifications/message` (clients that show logs).
    Log(Peer),
    /// As `push/event` (the client advertised MCPL with `pushEvents`).
    Push(Peer),
}

/// One backing server as the hub sees it.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) status: LinkStatus,
    pub(crate) controller: Option<Controller>,
    peer: Option<Peer>,
    /// The last connection's picture, resumed on reconnect (H28).
    pub(crate) kept: Option<Snapshot>,
    pub(crate) wake: Arc<Notify>,
    /// Times this server connected; 2 and more are reconnects.
    pub(crate) connects: u64,
    /// Whether the current connection granted `pushEvents`.
    push_granted: bool,
}

impl Link {
    /// The freshest snapshot: the live controller's, or the one kept while down.
    pub(crate) fn snapshot(&self) -> Option<&Snapshot> {
        self.controller
            .as_ref()
            .map(Controller::snapshot)
            .or(self.kept.as_ref())
    }
}

/// State under the hub's lock.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) links: BTreeMap<String, Link>,
    waiters: BTreeMap<(String, Pending), oneshot::Sender<Outcome>>,
    pub(crate) news: News,
    pub(crate) meter: Meter,
    pub(crate) published: crate::front::Published,
    /// The host library's model-facing picture: the tool list and meta-tool routing.
    pub(crate) presenter: Presenter,
    sink: Option<ClientSink>,
    next_push_id: i64,
}

/// Shared by the links, the front and the meta-tools.
pub(crate) struct Hub {
    inner: Mutex<Inner>,
    connector: Arc<dyn Connector>,
    timing: LinkTiming,
    principal: String,
    shut: AtomicBool,
    shut_notify: Notify,
    /// Signalled whenever a link's state changes (listed, down), for waiters on readiness.
    pub(crate) progress: Notify,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl Hub {
    pub(crate) fn new(
        names: &[String],
        connector: Arc<dyn Connector>,
        timing: LinkTiming,
        principal: String,
    ) -> Self {
        let mut inner = Inner {
            links: BTreeMap::new(),
            waiters: BTreeMap::new(),
            news: News::default(),
            meter: Meter::default(),
            published: crate::front::Published::default(),
            presenter: Presenter::new(PresenterConfig::default()),
            sink: None,
            next_push_id: 0,
        };
        for name in names {
            inner.links.insert(
                name.clone(),
                Link {
                    status: LinkStatus::Connecting { attempt: 1 },
                    controller: None,
                    peer: None,
                    kept: None,
                    wake: Arc::new(Notify::new()),
                    connects: 0,
                    push_granted: false,
                },
            );
        }
        Hub {
            inner: Mutex::new(inner),
            connector,
            timing,
            principal,
            shut: AtomicBool::new(false),
            shut_notify: Notify::new(),
            progress: Notify::new(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn connector(&self) -> &dyn Connector {
        &*self.connector
    }

    pub(crate) fn timing(&self) -> LinkTiming {
        self.timing
    }

    pub(crate) fn principal(&self) -> String {
        self.principal.clone()
    }

    pub(crate) fn wake_of(&self, server: &str) -> Option<Arc<Notify>> {
        self.lock().links.get(server).map(|l| l.wake.clone())
    }

    pub(crate) fn shut_down(&self) {
        self.shut.store(true, Ordering::SeqCst);
        self.shut_notify.notify_waiters();
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut.load(Ordering::SeqCst)
    }

    pub(crate) async fn shut_down_signal(&self) {
        let notified = self.shut_notify.notified();
        if self.is_shut_down() {
            return;
        }
        notified.await;
    }

    pub(crate) fn set_sink(&self, sink: ClientSink) {
        self.lock().sink = Some(sink);
    }

    pub(crate) fn set_status(&self, server: &str, status: LinkStatus) {
        let mut inner = self.lock();
        if let Some(link) = inner.links.get_mut(server) {
            if let LinkStatus::Down { error, .. } = &status {
                // Told once per outage, in read order with everything else.
                if link.status == LinkStatus::Up {
                    let text = format!("connection lost ({error}); reconnecting");
                    inner.news.push(NewsItem::Status {
                        server: server.to_owned(),
                        text,
                    });
                }
            }
            if let Some(link) = inner.links.get_mut(server) {
                link.status = status;
            }
        }
        drop(inner);
        self.progress.notify_waiters();
    }

    /// Installs a new connection's controller, resumed from the kept snapshot.
    pub(crate) fn attach(
        &self,
        server: &str,
        make: impl FnOnce(Option<Snapshot>) -> Controller,
        peer: Peer,
        push_granted: bool,
    ) {
        let mut inner = self.lock();
        let Some(link) = inner.links.get_mut(server) else {
            return;
        };
        let kept = link.kept.take();
        link.controller = Some(make(kept));
        link.peer = Some(peer);
        link.push_granted = push_granted;
        link.connects += 1;
        let again = link.connects > 1;
        link.status = LinkStatus::Up;
        if again {
            let text = "reconnected; re-reading its toolsets (nothing is re-opened)".to_owned();
            inner.news.push(NewsItem::Status {
                server: server.to_owned(),
                text,
            });
        }
        drain(&mut inner, server);
        drop(inner);
        self.progress.notify_waiters();
    }

    /// The connection ended: pending commands settle as unconfirmed (H82) and the picture is
    /// kept for the next connection.
    pub(crate) fn detach(&self, server: &str, reason: &str) {
        let retry_in = self.timing.backoff(1);
        let mut inner = self.lock();
        let Some(link) = inner.links.get_mut(server) else {
            return;
        };
        if link.status == LinkStatus::Up {
            link.status = LinkStatus::Down {
                attempt: 0,
                error: reason.to_owned(),
                retry_in,
            };
            let text = format!("connection lost ({reason}); reconnecting");
            inner.news.push(NewsItem::Status {
                server: server.to_owned(),
                text,
            });
        }
        let Some(link) = inner.links.get_mut(server) else {
            return;
        };
        if let Some(mut c) = link.controller.take() {
            c.handle_close(now());
            link.peer = None;
            // Answers still queued must reach their waiters before the controller goes.
            let mut answers = Vec::new();
            while let Some(effect) = c.poll_effect() {
                if let Effect::Answered(a) = effect {
                    answers.push(a);
                }
            }
            link.kept = Some(c.snapshot().clone());
            for a in answers {
                if let Some(tx) = inner.waiters.remove(&(server.to_owned(), a.pending)) {
                    let _ = tx.send(a.outcome);
                }
            }
            sync_presenter(&mut inner, server);
        }
        drop(inner);
        self.progress.notify_waiters();
    }

    pub(crate) fn poll_timeout(&self, server: &str) -> Option<Instant> {
        let inner = self.lock();
        inner.links.get(server)?.controller.as_ref()?.poll_timeout()
    }

    /// Runs `f` on the server's live controller and drains what it queued.
    pub(crate) fn with_controller(&self, server: &str, f: impl FnOnce(&mut Controller)) {
        let mut inner = self.lock();
        let Some(c) = inner
            .links
            .get_mut(server)
            .and_then(|l| l.controller.as_mut())
        else {
            return;
        };
        f(c);
        drain(&mut inner, server);
        drop(inner);
        self.progress.notify_waiters();
    }

    /// Starts a command on a live controller; its answer comes through the returned receiver.
    /// `Err` carries the refusal text for the agent.
    pub(crate) fn command(
        &self,
        server: &str,
        f: impl FnOnce(&mut Controller, Instant) -> Result<Pending, mcpl_host::Error>,
    ) -> Result<(oneshot::Receiver<Outcome>, Pending), String> {
        let mut inner = self.lock();
        let link = inner
            .links
            .get_mut(server)
            .ok_or_else(|| format!("no server named `{server}`"))?;
        let status = link.status.clone();
        let Some(c) = link.controller.as_mut() else {
            return Err(format!(
                "server `{server}` is {status}: nothing was sent; try again shortly"
            ));
        };
        let pending = f(c, now()).map_err(|e| format!("server `{server}`: {e}"))?;
        let wake = link.wake.clone();
        let (tx, rx) = oneshot::channel();
        inner.waiters.insert((server.to_owned(), pending), tx);
        drain(&mut inner, server);
        drop(inner);
        // The link task re-reads the controller's deadline.
        wake.notify_one();
        Ok((rx, pending))
    }

    /// Waits for a command's answer; a dropped waiter means the connection went away.
    pub(crate) async fn answer(rx: oneshot::Receiver<Outcome>) -> Outcome {
        rx.await
            .unwrap_or(Outcome::Unconfirmed(Unconfirmed::Disconnected))
    }

    /// True once every server has been listed or has failed at least once.
    pub(crate) fn settled(&self) -> bool {
        self.lock().links.values().all(|l| {
            l.snapshot()
                .is_some_and(|s| s.listed() && s.ready() || s.listed() && !s.hinted())
                || matches!(l.status, LinkStatus::Down { .. })
        })
    }
}

/// Hands the presenter the server's freshest snapshot (live, or kept while down).
fn sync_presenter(inner: &mut Inner, server: &str) {
    let Some(link) = inner.links.get(server) else {
        return;
    };
    if let Some(snap) = link.snapshot() {
        let push = link.push_granted;
        inner.presenter.update(snap, push);
    }
    // A static definition changed (never a toolset, §8.1): tell the client once, so it
    // re-lists at a time it chooses.
    if inner.published.published() && !inner.published.told_stale && inner.presenter.needs_rebuild()
    {
        inner.published.told_stale = true;
        if let Some(ClientSink::Log(peer) | ClientSink::Push(peer)) = &inner.sink {
            let _ = peer.notify_value(methods::TOOLS_LIST_CHANGED, None);
        }
    }
}

/// Drains one controller's effects: writes, changes and events for the agent, answers.
fn drain(inner: &mut Inner, server: &str) {
    loop {
        let Some(link) = inner.links.get_mut(server) else {
            return;
        };
        let Some(c) = link.controller.as_mut() else {
            return;
        };
        let Some(effect) = c.poll_effect() else {
            break;
        };
        match effect {
            Effect::Send(msg) => {
                if let Some(peer) = &link.peer {
                    // A failed write means the connection is going; the link sees it close.
                    let _ = peer.send(msg);
                }
            }
            Effect::Changed(change) => {
                inner.news.push(NewsItem::Change {
                    server: server.to_owned(),
                    change,
                });
                let snaps: BTreeMap<&str, &Snapshot> = inner
                    .links
                    .iter()
                    .filter_map(|(n, l)| l.snapshot().map(|s| (n.as_str(), s)))
                    .collect();
                inner.meter.sample(&snaps);
            }
            Effect::Notice(notice) => {
                inner.news.push(NewsItem::Notice {
                    server: server.to_owned(),
                    notice,
                });
            }
            Effect::Event(event) => {
                forward(inner, server, &event.params);
                inner.news.push(NewsItem::Event {
                    server: server.to_owned(),
                    params: event.params,
                });
            }
            Effect::Answered(a) => {
                if let Some(tx) = inner.waiters.remove(&(server.to_owned(), a.pending)) {
                    let _ = tx.send(a.outcome);
                }
            }
            Effect::Recovering(reason) => {
                tracing::debug!(server, ?reason, "recovering");
            }
            _ => {}
        }
    }
    sync_presenter(inner, server);
}

/// Sends a push on to the client: as `push/event` to an MCPL client, else as a log message.
fn forward(inner: &mut Inner, server: &str, params: &Value) {
    let text = crate::news::event_text(server, params);
    match &inner.sink {
        Some(ClientSink::Log(peer)) => {
            let params = json!({ "level": "info", "logger": server, "data": text });
            let _ = peer.notify_value(methods::MESSAGE, Some(params));
        }
        Some(ClientSink::Push(peer)) => {
            inner.next_push_id += 1;
            let mut p = params.clone();
            if let Some(obj) = p.as_object_mut() {
                // The client is not our server's host: hints are ours to apply, not its.
                obj.remove("hints");
                let origin = json!({ "server": server });
                obj.insert("origin".into(), origin);
            }
            let id = RequestId::String(format!("surface-push-{}", inner.next_push_id));
            let _ = peer.send(Message::Request(Request {
                id,
                method: methods::PUSH_EVENT.to_owned(),
                params: Some(p),
                extra: Map::new(),
            }));
        }
        None => {}
    }
}
