//! The HTTP side: the page, its assets, its live stream (server-sent events), and the login
//! form when a token is required. Read-only: nothing here changes the server.

use crate::access::{Access, COOKIE, Verdict};
use crate::host::HostModel;
use crate::model::ServerModel;
use axum::Router;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use mcpl_server::driver::Handle;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");
const LOGIN: &str = include_str!("assets/login.html");

/// Scripts and styles from this page only; nothing inline, nothing from elsewhere.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

/// A running inspector: its address and the task serving it.
#[derive(Debug)]
pub struct Inspector {
    /// Where the page is served.
    pub addr: std::net::SocketAddr,
}

#[derive(Clone)]
struct Shared {
    access: Arc<Access>,
    snapshots: watch::Receiver<Arc<String>>,
}

/// The least time between two host-view builds: a burst of host turns is drawn once.
const HOST_VIEW_GAP: Duration = Duration::from_millis(100);

/// Serves the server view of `handle` on `listener` (already bound) until the process ends.
/// `token`: required when the address is not loopback.
pub async fn inspect_server(
    listener: tokio::net::TcpListener,
    handle: Handle,
    token: Option<String>,
) -> Result<Inspector, crate::access::AccessError> {
    let access = access_for(&listener, token)?;
    let records = handle.observe();
    let (tx, rx) = watch::channel(Arc::new(String::new()));
    tokio::spawn(follow(handle, records, tx));
    Ok(spawn_page(listener, access, rx))
}

/// Serves the host view of a surface's `host` on `listener` (already bound) until the
/// process ends: backends, revs and recovery, the model-facing list with its digest and
/// change count, the news waiting to be told. `token`: required off loopback.
pub async fn inspect_host(
    listener: tokio::net::TcpListener,
    host: mcpl_host::driver::Host,
    token: Option<String>,
) -> Result<Inspector, crate::access::AccessError> {
    let access = access_for(&listener, token)?;
    let (tx, rx) = watch::channel(Arc::new(String::new()));
    if let Ok(turns) = host.turns().await {
        tokio::spawn(follow_host(host, turns, tx));
    }
    Ok(spawn_page(listener, access, rx))
}

fn access_for(
    listener: &tokio::net::TcpListener,
    token: Option<String>,
) -> Result<Arc<Access>, crate::access::AccessError> {
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    Ok(Arc::new(Access::new(addr, token)?))
}

fn spawn_page(
    listener: tokio::net::TcpListener,
    access: Arc<Access>,
    snapshots: watch::Receiver<Arc<String>>,
) -> Inspector {
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    let shared = Shared { access, snapshots };
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router(shared)).await {
            tracing::warn!(error = %e, "the inspector stopped");
        }
    });
    Inspector { addr }
}

/// Reads the host's status after its turns and publishes each new snapshot. Builds are at
/// least [`HOST_VIEW_GAP`] apart and a page that reads slowly sees only the latest one, so
/// neither a busy host nor a slow page makes the other wait.
async fn follow_host(
    host: mcpl_host::driver::Host,
    mut turns: watch::Receiver<u64>,
    tx: watch::Sender<Arc<String>>,
) {
    let start = tokio::time::Instant::now();
    let ms = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut model = HostModel::default();
    loop {
        turns.borrow_and_update();
        let Ok(status) = host.status().await else {
            return;
        };
        model.update(ms(), &status);
        let _ = tx.send(Arc::new(model.snapshot(ms()).to_string()));
        if turns.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(HOST_VIEW_GAP).await;
    }
}

/// How often the server view looks for connections that received messages since it last
/// drew (their last-seen time moves without a record).
const SEEN_EVERY: Duration = Duration::from_secs(1);

/// Keeps the model current from observer records and publishes each new snapshot. A page
/// that reads slowly sees only the latest snapshot (a watch channel keeps one).
async fn follow(
    handle: Handle,
    mut records: broadcast::Receiver<mcpl_server::observe::Observation>,
    tx: watch::Sender<Arc<String>>,
) {
    let start = tokio::time::Instant::now();
    let ms = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut model = ServerModel::new(start.into_std());
    let _ = tx.send(Arc::new(model.snapshot(ms()).to_string()));
    let mut seen_tick = tokio::time::interval(SEEN_EVERY);
    seen_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let record = tokio::select! {
            record = records.recv() => record,
            _ = seen_tick.tick() => {
                if model.refresh_seen() {
                    let _ = tx.send(Arc::new(model.snapshot(ms()).to_string()));
                }
                continue;
            }
        };
        let principal = match record {
            Ok(record) => model.record(ms(), record),
            Err(broadcast::error::RecvError::Lagged(n)) => {
                model.missed(n);
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let p = handle
            .connected_principals()
            .into_iter()
            .find(|p| p.to_string() == principal);
        if let Some(p) = p
            && let Ok(state) = handle.state(&p).await
        {
            model.set_state(&principal, &state);
        }
        model.refresh_seen();
        let _ = tx.send(Arc::new(model.snapshot(ms()).to_string()));
    }
}

fn router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/app.css", get(style))
        .route("/events", get(events))
        .route("/login", get(login_form).post(login))
        .with_state(shared)
}

fn refused(verdict: Verdict) -> Option<Response> {
    match verdict {
        Verdict::Allow => None,
        Verdict::Forbidden => Some((StatusCode::FORBIDDEN, "forbidden\n").into_response()),
        Verdict::Login => Some(Redirect::to("/login").into_response()),
    }
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

async fn page(State(s): State<Shared>, headers: HeaderMap) -> Response {
    refused(s.access.check(&headers)).unwrap_or_else(|| asset("text/html; charset=utf-8", PAGE))
}

async fn script(State(s): State<Shared>, headers: HeaderMap) -> Response {
    refused(s.access.check(&headers))
        .unwrap_or_else(|| asset("text/javascript; charset=utf-8", SCRIPT))
}

async fn style(State(s): State<Shared>, headers: HeaderMap) -> Response {
    refused(s.access.check(&headers)).unwrap_or_else(|| asset("text/css; charset=utf-8", STYLE))
}

async fn events(State(s): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(r) = refused(s.access.check(&headers)) {
        return match r.status() {
            StatusCode::FORBIDDEN => r,
            _ => (StatusCode::UNAUTHORIZED, "log in first\n").into_response(),
        };
    }
    let rx = s.snapshots.clone();
    let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let json = rx.borrow_and_update().clone();
        let event: Result<Event, Infallible> = Ok(Event::default().data(json.as_str()));
        Some((event, (rx, false)))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

async fn login_form(State(s): State<Shared>, headers: HeaderMap) -> Response {
    refused(s.access.check_site(&headers))
        .unwrap_or_else(|| asset("text/html; charset=utf-8", LOGIN))
}

/// The login form's body.
#[derive(serde::Deserialize)]
struct Login {
    token: String,
}

async fn login(State(s): State<Shared>, headers: HeaderMap, Form(form): Form<Login>) -> Response {
    if let Some(r) = refused(s.access.check_site(&headers)) {
        return r;
    }
    if !s.access.has_token() || !s.access.token_matches(&form.token) {
        return (StatusCode::UNAUTHORIZED, "wrong token\n").into_response();
    }
    let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", form.token);
    let mut r = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}
