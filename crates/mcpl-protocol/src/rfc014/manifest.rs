//! Toolset declarations and the other manifest members of the domain `toolsets` (§5.1).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Manifest key: the server implements RFC-014 (`experimental.mcpl.toolHints`).
pub const TOOL_HINTS_KEY: &str = "toolHints";
/// Manifest key: the toolset declarations.
pub const TOOLSETS_KEY: &str = "toolsets";
/// Manifest key: how the server as a whole is presented.
pub const SURFACE_KEY: &str = "surface";
/// The `mcpl/manifestChanged` domain these members make up (§5.1).
pub const TOOLSETS_DOMAIN: &str = "toolsets";

/// Whether a declared toolset starts open for each session of a principal (§5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsetDefault {
    /// Open from the start, listed by `toolsets/list` without any open.
    Open,
    /// The host opens it (the reading of an absent value).
    #[default]
    Closed,
}

/// A toolset as declared in the manifest's `toolsets` member (§5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsetDecl {
    /// Shown in the host's catalog and reminders.
    pub title: String,
    /// One or two sentences for the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// `"open"` or `"closed"`. Servers must send it; read it through
    /// [`ToolsetDecl::effective_default`], which applies the rules for absence and instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<ToolsetDefault>,
    /// `true`: opened as named instances, possibly several at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<bool>,
    /// JSON Schema for the `options` of `toolsets/open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolsetDecl {
    /// A closed toolset without instances or options, with `default` written out as the RFC
    /// asks servers to.
    pub fn new(title: impl Into<String>) -> Self {
        ToolsetDecl {
            title: title.into(),
            summary: None,
            default: Some(ToolsetDefault::Closed),
            instances: None,
            options: None,
            extra: Map::new(),
        }
    }

    /// Whether the toolset is opened as named instances.
    pub fn is_instanced(&self) -> bool {
        self.instances == Some(true)
    }

    /// The default in force: absent reads as closed, and a toolset with instances is always
    /// closed (§5.1, Appendix B.9).
    pub fn effective_default(&self) -> ToolsetDefault {
        if self.is_instanced() {
            ToolsetDefault::Closed
        } else {
            self.default.unwrap_or_default()
        }
    }
}

/// How the server as a whole is presented (`surface`, §5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    /// The server's display title.
    pub title: String,
    /// A short description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The RFC-014 members of the manifest (`experimental.mcpl`), domain `toolsets` (§5.1).
///
/// Flatten it into a manifest type, or read it from the manifest object with
/// `serde_json::from_value`; the other manifest members land in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestToolsetMembers {
    /// `true`: the server implements RFC-014.
    #[serde(rename = "toolHints", default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// The declared toolsets by name, in name order (deterministic for the §17.2 digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolsets: Option<BTreeMap<String, ToolsetDecl>>,
    /// How the server as a whole is presented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// The other manifest members, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn s5_1_manifest_example_round_trips() {
        let wire = json!({"version": "0.5", "pushEvents": true, "toolHints": true,
            "toolsets": {"game": {"title": "Go", "summary": "A game of Go",
                "default": "closed", "instances": true,
                "options": {"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}},
                "x-vendor": 1}},
            "surface": {"title": "Arcade", "summary": "Games", "icon": "go.png"}});
        let m: ManifestToolsetMembers = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(m.tool_hints, Some(true));
        let game = &m.toolsets.as_ref().unwrap()["game"];
        assert!(game.is_instanced());
        assert_eq!(game.extra["x-vendor"], json!(1));
        assert_eq!(m.surface.as_ref().unwrap().extra["icon"], json!("go.png"));
        assert_eq!(m.extra["pushEvents"], json!(true));
        assert_eq!(serde_json::to_value(&m).unwrap(), wire);
    }

    #[test]
    fn s5_1_absent_default_reads_as_closed() {
        let d: ToolsetDecl = serde_json::from_value(json!({"title": "Notes"})).unwrap();
        assert_eq!(d.default, None);
        assert_eq!(d.effective_default(), ToolsetDefault::Closed);
        // Round trip keeps it absent.
        assert_eq!(serde_json::to_value(&d).unwrap(), json!({"title": "Notes"}));
    }

    #[test]
    fn appendix_b9_open_default_with_instances_is_closed() {
        let d: ToolsetDecl =
            serde_json::from_value(json!({"title": "Go", "default": "open", "instances": true}))
                .unwrap();
        assert_eq!(d.effective_default(), ToolsetDefault::Closed);
        let d: ToolsetDecl =
            serde_json::from_value(json!({"title": "Tips", "default": "open"})).unwrap();
        assert_eq!(d.effective_default(), ToolsetDefault::Open);
    }

    #[test]
    fn new_writes_default_closed() {
        let d = ToolsetDecl::new("Notes");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"title": "Notes", "default": "closed"})
        );
    }
}
