//! Revs, presence and the `_meta` keys RFC-014 adds to MCP messages (§4.1, §6.1).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// `Tool._meta` key: `"static"` or `"dynamic"` (§4.1). Absent reads as static.
pub const PRESENCE_KEY: &str = "mcpl/presence";
/// `Tool._meta` key: whether the tool is usable now (§4.1). Absent reads as visible.
pub const VISIBLE_KEY: &str = "mcpl/visible";
/// `Tool._meta` key: the toolset the tool belongs to; implies dynamic (§4.1).
pub const TOOLSET_KEY: &str = "mcpl/toolset";
/// `tools/call` params `_meta` key: the target instance (§4.3).
pub const INSTANCE_KEY: &str = "mcpl/instance";
/// `tools/list` result `_meta` key: the last rev taken on the connection (§6.1).
pub const REV_KEY: &str = "mcpl/rev";
/// Result `_meta` key carrying [`HintChanges`](super::HintChanges) (§6).
pub const HINTS_KEY: &str = "mcpl/hints";

/// A position in a connection's hint stream (§6.1).
///
/// The first rev a server allocates on a connection is 1; `Rev::ZERO` means "none yet", as in
/// a `tools/list` result written before any hints.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Rev(pub u64);

impl Rev {
    /// "No rev taken yet".
    pub const ZERO: Rev = Rev(0);

    /// The rev after this one.
    pub fn next(self) -> Rev {
        Rev(self.0 + 1)
    }

    /// The number on the wire.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Rev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Whether a tool belongs in the model's stable header (§3, §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// In the stable header (the default when absent).
    #[default]
    Static,
    /// Presented outside the header; comes and goes with state.
    Dynamic,
}

/// The RFC-014 members of a listed tool's `_meta` (§4.1), read from or written into the map.
///
/// Absent members stay `None` here; [`ToolHintsMeta::effective_presence`] and
/// [`ToolHintsMeta::effective_visible`] apply the defaults of §4.1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHintsMeta {
    /// `mcpl/presence`.
    pub presence: Option<Presence>,
    /// `mcpl/visible`.
    pub visible: Option<bool>,
    /// `mcpl/toolset`, kept as given (it may break the name grammar).
    pub toolset: Option<String>,
}

impl ToolHintsMeta {
    /// Reads the three keys from a tool's `_meta`. A member of the wrong type reads as absent.
    pub fn read(meta: Option<&Map<String, Value>>) -> Self {
        let Some(meta) = meta else {
            return Self::default();
        };
        ToolHintsMeta {
            presence: meta
                .get(PRESENCE_KEY)
                .and_then(|v| Presence::deserialize(v).ok()),
            visible: meta.get(VISIBLE_KEY).and_then(Value::as_bool),
            toolset: meta
                .get(TOOLSET_KEY)
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }

    /// Writes the present members into `meta`, replacing any earlier values, and removes the
    /// keys of absent members.
    pub fn write(&self, meta: &mut Map<String, Value>) {
        match self.presence {
            Some(Presence::Static) => meta.insert(PRESENCE_KEY.into(), "static".into()),
            Some(Presence::Dynamic) => meta.insert(PRESENCE_KEY.into(), "dynamic".into()),
            None => meta.remove(PRESENCE_KEY),
        };
        match self.visible {
            Some(v) => meta.insert(VISIBLE_KEY.into(), v.into()),
            None => meta.remove(VISIBLE_KEY),
        };
        match &self.toolset {
            Some(t) => meta.insert(TOOLSET_KEY.into(), t.clone().into()),
            None => meta.remove(TOOLSET_KEY),
        };
    }

    /// Removes every RFC-014 key from `meta` (§6.3: no hint `_meta` for hosts without
    /// `toolHints`).
    pub fn strip(meta: &mut Map<String, Value>) {
        meta.remove(PRESENCE_KEY);
        meta.remove(VISIBLE_KEY);
        meta.remove(TOOLSET_KEY);
    }

    /// The presence in force: dynamic whenever a toolset is named (§4.1), else as stated,
    /// else static.
    pub fn effective_presence(&self) -> Presence {
        if self.toolset.is_some() {
            Presence::Dynamic
        } else {
            self.presence.unwrap_or_default()
        }
    }

    /// The visibility in force: as stated, else visible.
    pub fn effective_visible(&self) -> bool {
        self.visible.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rev_is_a_plain_number_on_the_wire() {
        assert_eq!(serde_json::to_value(Rev(41)).unwrap(), json!(41));
        assert_eq!(serde_json::from_value::<Rev>(json!(7)).unwrap(), Rev(7));
        assert_eq!(Rev::ZERO.next(), Rev(1));
        assert!(serde_json::from_value::<Rev>(json!(-1)).is_err());
    }

    #[test]
    fn s4_1_defaults_when_absent() {
        let m = ToolHintsMeta::read(None);
        assert_eq!(m.effective_presence(), Presence::Static);
        assert!(m.effective_visible());
    }

    #[test]
    fn s4_1_toolset_implies_dynamic_even_with_explicit_static() {
        let meta =
            json!({"mcpl/presence": "static", "mcpl/toolset": "game", "mcpl/visible": false});
        let m = ToolHintsMeta::read(meta.as_object());
        assert_eq!(m.presence, Some(Presence::Static));
        assert_eq!(m.effective_presence(), Presence::Dynamic);
        assert!(!m.effective_visible());
    }

    #[test]
    fn write_and_strip_touch_only_rfc_keys() {
        let mut meta = json!({"other": 1}).as_object().cloned().unwrap();
        let m = ToolHintsMeta {
            presence: Some(Presence::Dynamic),
            visible: Some(false),
            toolset: Some("game".into()),
        };
        m.write(&mut meta);
        assert_eq!(
            Value::Object(meta.clone()),
            json!({"other": 1, "mcpl/presence": "dynamic", "mcpl/visible": false, "mcpl/toolset": "game"})
        );
        assert_eq!(ToolHintsMeta::read(Some(&meta)), m);
        ToolHintsMeta::strip(&mut meta);
        assert_eq!(Value::Object(meta), json!({"other": 1}));
    }
}
