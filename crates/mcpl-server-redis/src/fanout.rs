//! [`Fanout`]: principal changes between replicas over Redis pub/sub.

use crate::codec::{self, Anchor, Keys};
use crate::error::Error;
use crate::store::RedisStore;
use futures_util::StreamExt;
use mcpl_protocol::rfc014::{EndedRecord, InstanceName, ToolsetName};
use mcpl_server::driver::{Handle, Relay};
use mcpl_server::{OpenKey, Principal, PrincipalChange, PrincipalState, PrincipalStore, Versioned};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long to wait before reconnecting to Redis after losing it.
const RETRY: Duration = Duration::from_millis(100);

/// One message on a principal's channel.
#[derive(Serialize, Deserialize)]
struct Wire {
    /// The replica that committed the change; it already delivered it locally.
    replica: u64,
    change: Value,
    /// The principal's state as stored with the change, and its version, so the other
    /// replicas' sessions state it without reading Redis again.
    #[serde(default)]
    stored: Option<(u64, String)>,
}

/// The [`Relay`] half: publishes this replica's changes, in commit order.
struct Publisher {
    replica: u64,
    keys: Keys,
    anchor: Anchor,
    tx: mpsc::UnboundedSender<(String, String)>,
}

impl Relay for Publisher {
    fn publish(&self, change: &PrincipalChange) {
        let wire = Wire {
            replica: self.replica,
            change: change.to_wire(),
            stored: change
                .state()
                .map(|s| (s.version, codec::encode(&s.state, self.anchor))),
        };
        let payload = serde_json::to_string(&wire).expect("a change serializes");
        let _ = self
            .tx
            .send((self.keys.channel(change.principal().id()), payload));
    }
}

/// Cross-replica fan-out for one replica: every change committed here is published on its
/// principal's channel, and every change another replica publishes reaches this replica's
/// connections of the principal through [`Handle::deliver`], each on its own next rev
/// (§5.6, §6.1). Dropping it stops both tasks.
pub struct Fanout {
    replica: u64,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Fanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fanout")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Fanout {
    /// Subscribes to every principal's channel under `store`'s prefix and sets the relay on
    /// `handle` (whose server must use `store`). Returns once the subscription is in place,
    /// so a change published after this reaches this replica. Fails when `handle` already
    /// has a relay or Redis cannot be reached.
    pub async fn start(handle: &Handle, store: Arc<RedisStore>) -> Result<Fanout, Error> {
        let replica = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let keys = store.keys().clone();
        let client = store.client().clone();
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.psubscribe(keys.channel_pattern()).await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let relay = Publisher {
            replica,
            keys: keys.clone(),
            anchor: store.anchor(),
            tx,
        };
        if !handle.set_relay(Arc::new(relay)) {
            return Err(Error::Unavailable("the handle already has a relay".into()));
        }
        let publisher = tokio::spawn(publish(client.clone(), rx));
        let subscriber = tokio::spawn(subscribe(handle.clone(), store, replica, pubsub));
        Ok(Fanout {
            replica,
            tasks: vec![publisher, subscriber],
        })
    }
}

/// Publishes queued changes one at a time, so they arrive in commit order.
async fn publish(client: redis::Client, mut rx: mpsc::UnboundedReceiver<(String, String)>) {
    let mut conn = None;
    while let Some((channel, payload)) = rx.recv().await {
        if conn.is_none() {
            conn = client.get_multiplexed_async_connection().await.ok();
        }
        let Some(c) = conn.as_mut() else {
            // Redis is away: the other replicas' hosts recover by the rev rules later.
            tracing::warn!(%channel, "change not relayed: redis unreachable");
            continue;
        };
        let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
            .arg(&channel)
            .arg(&payload)
            .query_async(c)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, %channel, "change not relayed");
            conn = None;
        }
    }
}

/// Delivers other replicas' changes; resubscribes (and restores lost state) when Redis
/// comes back.
async fn subscribe(
    handle: Handle,
    store: Arc<RedisStore>,
    replica: u64,
    mut pubsub: redis::aio::PubSub,
) {
    let keys = store.keys().clone();
    loop {
        {
            let mut messages = pubsub.on_message();
            while let Some(msg) = messages.next().await {
                let channel = msg.get_channel_name().to_owned();
                let Some(principal) = keys.principal_of_channel(&channel) else {
                    continue;
                };
                let Ok(payload) = msg.get_payload::<String>() else {
                    continue;
                };
                let Ok(wire) = serde_json::from_str::<Wire>(&payload) else {
                    tracing::warn!(%channel, "unreadable change ignored");
                    continue;
                };
                if wire.replica == replica {
                    continue;
                }
                let principal = Principal::authenticated(principal);
                if let Some(mut change) = PrincipalChange::from_wire(principal, wire.change) {
                    if let Some((version, text)) = &wire.stored
                        && let Ok(state) = codec::decode(text, store.anchor())
                    {
                        let stored = Versioned {
                            state: std::sync::Arc::new(state),
                            version: *version,
                        };
                        // What another replica stored is this replica's copy too: after an
                        // outage, `restore` must not write back an older one.
                        store.remember(change.principal(), stored.clone());
                        change = change.with_state(stored);
                    }
                    handle.deliver(change);
                }
            }
        }
        tracing::warn!("redis subscription lost; reconnecting");
        pubsub = loop {
            tokio::time::sleep(RETRY).await;
            let Ok(mut fresh) = store.client().get_async_pubsub().await else {
                continue;
            };
            if fresh.psubscribe(keys.channel_pattern()).await.is_ok() {
                break fresh;
            }
        };
        let changes = catch_up(&store, handle.connected_principals()).await;
        tracing::info!(principals = changes.len(), "resubscribed to redis");
        for change in changes {
            handle.deliver(change);
        }
    }
}

/// After resubscribing: restores what Redis lost, then, for each principal connected here,
/// a change restating everything that may have changed meanwhile (every toolset or instance
/// open before or after, or ended since, and every tool outside toolsets with state), so
/// this replica's hosts converge on Redis's state through ordinary hints.
async fn catch_up(store: &RedisStore, connected: Vec<Principal>) -> Vec<PrincipalChange> {
    let before: Vec<(Principal, Option<PrincipalState>)> = connected
        .into_iter()
        .filter(|p| !p.ends_at_disconnect())
        .map(|p| {
            let copy = store.cached(&p);
            (p, copy)
        })
        .collect();
    if let Err(e) = store.restore().await {
        tracing::warn!(error = %e, "state not restored");
    }
    let mut changes = Vec::new();
    for (principal, old) in before {
        let stored = store.load(&principal).await.unwrap_or_default();
        let now = &stored.state;
        {
            let mut keys: BTreeSet<OpenKey> = now.open.keys().cloned().collect();
            let mut free: BTreeSet<String> = now.free.keys().cloned().collect();
            if let Some(old) = &old {
                keys.extend(old.open.keys().cloned());
                free.extend(old.free.keys().cloned());
            }
            keys.extend(now.ended.iter().filter_map(|e| ended_key(&e.record)));
            changes
                .push(PrincipalChange::restate(principal, keys, free).with_state(stored.clone()));
        }
    }
    changes
}

/// The toolset or instance an ended record names.
fn ended_key(record: &EndedRecord) -> Option<OpenKey> {
    let toolset = ToolsetName::parse(&record.toolset).ok()?;
    let instance = match &record.instance {
        Some(i) => Some(InstanceName::parse(i).ok()?),
        None => None,
    };
    Some(OpenKey::new(toolset, instance))
}
