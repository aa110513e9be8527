//! Relaying a backend's push to an MCPL client in the surface's own name (MCPL §9.2, §9.4).
//!
//! The surface is the client's server: a push it sends names the one feature set it declared
//! in `initialize` ([`EVENTS_FEATURE_SET`]) and carries an `eventId` the surface minted
//! itself ([`EventIds`]), unique across its backends, their restarts and other surface
//! processes. What the backend said about itself moves into `origin`:
//!
//! | backend member | in the surface's push |
//! |---|---|
//! | `featureSet` | renamed: `origin.featureSet`; the push names `surface.events` |
//! | `eventId` | renamed: `origin.eventId`; the push has the surface's own id |
//! | `origin` | kept under `origin.origin` |
//! | `toolset`, `instance` | renamed: `origin.toolset`, `origin.instance` (the backend's toolsets, not the surface's) |
//! | `hints` | dropped: the surface applied them as the backend's host |
//! | `timestamp`, `payload`, `tags` | kept |
//! | other members | dropped |
//!
//! `origin.server` names the backend as the surface's config does.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcpl_host::names::ServerName;
use serde_json::{Map, Value, json};

/// The one feature set the surface declares and names in every push it sends.
pub const EVENTS_FEATURE_SET: &str = "surface.events";

/// The description of [`EVENTS_FEATURE_SET`] in the surface's `initialize`.
pub const EVENTS_DESCRIPTION: &str = "Events from the servers behind this surface";

/// Where the surface's `eventId`s come from: a prefix fixed for the source and a counter.
/// Clones share the counter, so one source never hands out an id twice.
#[derive(Debug, Clone)]
pub struct EventIds {
    prefix: Arc<str>,
    next: Arc<AtomicU64>,
}

impl EventIds {
    /// A source with a random prefix chosen now (64 bits from the standard library's
    /// randomly keyed hasher): two processes, or a process and its restart, never share ids.
    pub fn random() -> EventIds {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        EventIds::seeded(&format!("{:016x}", h.finish()))
    }

    /// A source with a given prefix (tests seed it; ids are `{prefix}-{n}` from 1).
    pub fn seeded(prefix: &str) -> EventIds {
        EventIds {
            prefix: Arc::from(format!("surface-{prefix}")),
            next: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The next id.
    pub fn next_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{n}", self.prefix)
    }
}

impl Default for EventIds {
    fn default() -> Self {
        EventIds::random()
    }
}

/// The `push/event` params the surface sends for a backend's push `params` from `server`,
/// under the id `event_id`.
pub fn relayed(server: &ServerName, params: &Value, event_id: String) -> Value {
    let get = |k: &str| params.get(k).cloned();
    let mut origin = Map::new();
    origin.insert("server".into(), json!(server));
    for (from, to) in [
        ("featureSet", "featureSet"),
        ("eventId", "eventId"),
        ("toolset", "toolset"),
        ("instance", "instance"),
        ("origin", "origin"),
    ] {
        if let Some(v) = get(from) {
            origin.insert(to.into(), v);
        }
    }
    let mut out = Map::new();
    out.insert("featureSet".into(), json!(EVENTS_FEATURE_SET));
    out.insert("eventId".into(), json!(event_id));
    out.insert(
        "timestamp".into(),
        get("timestamp").unwrap_or_else(|| json!("")),
    );
    out.insert("origin".into(), Value::Object(origin));
    out.insert(
        "payload".into(),
        get("payload").unwrap_or_else(|| json!({"content": []})),
    );
    if let Some(tags) = get("tags") {
        out.insert("tags".into(), tags);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcpl_9_2_a_relayed_push_names_the_surface_feature_set_and_moves_the_backend_into_origin() {
        let backend = json!({
            "featureSet": "events", "eventId": "c1-ev-0", "timestamp": "2026-01-01T00:00:00Z",
            "payload": {"content": [{"type": "text", "text": "The bot played E5"}]},
            "tags": ["game"], "hints": {"rev": 3}, "toolset": "go", "instance": "g",
            "origin": {"game": "g"}, "x-extra": 1
        });
        let arcade = ServerName::parse("arcade").unwrap();
        let out = relayed(&arcade, &backend, "surface-ab-1".into());
        assert_eq!(out["featureSet"], EVENTS_FEATURE_SET);
        assert_eq!(out["eventId"], "surface-ab-1");
        assert_eq!(out["timestamp"], backend["timestamp"]);
        assert_eq!(out["payload"], backend["payload"]);
        assert_eq!(out["tags"], backend["tags"]);
        assert_eq!(
            out["origin"],
            json!({"server": "arcade", "featureSet": "events", "eventId": "c1-ev-0",
                "toolset": "go", "instance": "g", "origin": {"game": "g"}})
        );
        for gone in ["hints", "toolset", "instance", "x-extra"] {
            assert!(out.get(gone).is_none(), "{gone} passed on: {out}");
        }
        let parsed: mcpl_protocol::mcpl::PushEventParams =
            serde_json::from_value(out).expect("a valid push/event");
        assert!(parsed.hints.is_none() && parsed.toolset.is_none());
    }

    #[test]
    fn mcpl_9_4_ids_from_one_source_never_repeat_and_two_random_sources_differ() {
        let ids = EventIds::seeded("t");
        let copy = ids.clone();
        let drawn = [ids.next_id(), copy.next_id(), ids.next_id()];
        assert_eq!(drawn, ["surface-t-1", "surface-t-2", "surface-t-3"]);
        let (a, b) = (EventIds::random(), EventIds::random());
        assert_ne!(a.next_id(), b.next_id());
    }
}
