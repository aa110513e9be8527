//! How a [`PrincipalState`] is laid out in Redis: one JSON value per principal (its ended
//! records with their expiry as wall-clock time, §5.3), and the key names.

use mcpl_protocol::rfc014::{EndedRecord, Presence};
use mcpl_server::{OpenKey, OpenState, PrincipalState, StoredEnd, ToolState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Redis key names under one prefix (one per deployment).
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        Keys {
            prefix: prefix.to_owned(),
        }
    }

    /// The principal's hash: `v`, its version, and `s`, its state.
    pub(crate) fn principal(&self, principal: &str) -> String {
        format!("{}:principal:{principal}", self.prefix)
    }

    /// A shared app document ([`crate::Document`]).
    pub(crate) fn doc(&self, name: &str) -> String {
        format!("{}:doc:{name}", self.prefix)
    }

    /// The set of principals with state.
    pub(crate) fn principals(&self) -> String {
        format!("{}:principals", self.prefix)
    }

    /// The pub/sub channel of a principal's changes.
    pub(crate) fn channel(&self, principal: &str) -> String {
        format!("{}:changes:{principal}", self.prefix)
    }

    /// The pattern matching every principal's channel.
    pub(crate) fn channel_pattern(&self) -> String {
        format!("{}:changes:*", self.prefix)
    }

    /// The principal a channel name belongs to.
    pub(crate) fn principal_of_channel<'a>(&self, channel: &'a str) -> Option<&'a str> {
        channel
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix(":changes:")
    }
}

/// The principal state as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Blob {
    open: Vec<(OpenKey, OpenState)>,
    #[serde(default)]
    ended: Vec<EndRow>,
    free: BTreeMap<String, ToolState>,
    presence: BTreeMap<String, Presence>,
    next_ended: u64,
    next_instance: u64,
    seeded: bool,
}

/// An ended record as stored: the record and its wall-clock expiry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EndRow {
    pub(crate) record: EndedRecord,
    /// Expiry, milliseconds since the Unix epoch.
    pub(crate) expires_ms: u64,
}

/// Maps this process's `Instant`s to wall-clock time and back: expiries are stored as wall
/// time, the only time two processes share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchor {
    at: Instant,
    wall_ms: u64,
}

impl Anchor {
    pub(crate) fn new(at: Instant, wall: SystemTime) -> Self {
        let wall_ms = wall
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Anchor { at, wall_ms }
    }

    pub(crate) fn to_wall_ms(self, t: Instant) -> u64 {
        match t.checked_duration_since(self.at) {
            Some(d) => self.wall_ms + d.as_millis() as u64,
            None => self
                .wall_ms
                .saturating_sub(self.at.duration_since(t).as_millis() as u64),
        }
    }

    pub(crate) fn to_instant(self, ms: u64) -> Instant {
        if ms >= self.wall_ms {
            self.at + Duration::from_millis(ms - self.wall_ms)
        } else {
            self.at
                .checked_sub(Duration::from_millis(self.wall_ms - ms))
                .unwrap_or(self.at)
        }
    }
}

/// `state` as stored: JSON, with expiries as wall-clock time.
pub(crate) fn encode(state: &PrincipalState, anchor: Anchor) -> String {
    let (mut blob, ended) = split(state, anchor);
    blob.ended = ended;
    serde_json::to_string(&blob).expect("principal state serializes")
}

/// A stored state read back.
pub(crate) fn decode(text: &str, anchor: Anchor) -> Result<PrincipalState, serde_json::Error> {
    let mut blob: Blob = serde_json::from_str(text)?;
    let ended = std::mem::take(&mut blob.ended);
    Ok(join(blob, ended, anchor))
}

/// Splits `state` into its blob and its ended rows.
pub(crate) fn split(state: &PrincipalState, anchor: Anchor) -> (Blob, Vec<EndRow>) {
    let blob = Blob {
        ended: Vec::new(),
        open: state
            .open
            .iter()
            .map(|(k, o)| (k.clone(), o.clone()))
            .collect(),
        free: state.free.clone(),
        presence: state.presence.clone(),
        next_ended: state.next_ended,
        next_instance: state.next_instance,
        seeded: state.seeded,
    };
    let ends = state
        .ended
        .iter()
        .map(|e| EndRow {
            record: e.record.clone(),
            expires_ms: anchor.to_wall_ms(e.expires),
        })
        .collect();
    (blob, ends)
}

/// Joins a blob and the ended rows still in Redis into a state.
pub(crate) fn join(blob: Blob, mut ends: Vec<EndRow>, anchor: Anchor) -> PrincipalState {
    ends.sort_by_key(|e| e.expires_ms);
    PrincipalState {
        open: blob.open.into_iter().collect(),
        free: blob.free,
        presence: blob.presence,
        ended: ends
            .into_iter()
            .map(|e| StoredEnd {
                record: e.record,
                expires: anchor.to_instant(e.expires_ms),
            })
            .collect(),
        next_ended: blob.next_ended,
        next_instance: blob.next_instance,
        seeded: blob.seeded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_3_expiries_cross_processes_as_wall_clock_time() {
        let t0 = Instant::now();
        let wall = UNIX_EPOCH + Duration::from_secs(1_000_000);
        // Two processes with different Instant origins agree on the wall-clock expiry.
        let here = Anchor::new(t0, wall);
        let there = Anchor::new(t0 + Duration::from_secs(50), wall + Duration::from_secs(50));
        let expires = t0 + Duration::from_secs(3600);
        let ms = here.to_wall_ms(expires);
        assert_eq!(ms, 1_000_000_000 + 3_600_000);
        assert_eq!(there.to_instant(ms), expires);
        assert_eq!(here.to_wall_ms(t0 - Duration::from_secs(1)), 999_999_000);
    }

    #[test]
    fn s5_6_channels_name_their_principal_and_nothing_else() {
        let keys = Keys::new("arcade");
        let channel = keys.channel("ada:west");
        assert_eq!(keys.principal_of_channel(&channel), Some("ada:west"));
        assert_eq!(keys.principal_of_channel("other:changes:ada"), None);
        assert_eq!(keys.principal_of_channel("arcade:principal:ada"), None);
    }

    #[test]
    fn s14_state_survives_its_stored_form() {
        let anchor = Anchor::new(Instant::now(), SystemTime::now());
        let mut state = PrincipalState {
            next_ended: 7,
            next_instance: 3,
            seeded: true,
            ..PrincipalState::default()
        };
        let key: OpenKey =
            serde_json::from_value(serde_json::json!({"toolset": "go", "instance": "g1"})).unwrap();
        let open: OpenState = serde_json::from_value(serde_json::json!({"options": {"size": 9},
            "title": "Go 9x9", "opener": {"Host": 4}, "tools": {"play": {"visible": false}},
            "phase": "Open"}))
        .unwrap();
        state.open.insert(key.clone(), open);
        let back = decode(&encode(&state, anchor), anchor).unwrap();
        assert_eq!(back.open[&key].title, "Go 9x9");
        assert_eq!(back.open[&key].tools["play"].visible, Some(false));
        assert!(back.is_open(&key));
        assert_eq!(
            (back.next_ended, back.next_instance, back.seeded),
            (7, 3, true)
        );
    }
}
