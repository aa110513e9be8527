//! RFC-014's members of MCP's own messages: the `_meta` accessors on [`Tool`] and
//! [`ToolHintsMeta::of`] / [`ToolHintsMeta::write_to`] (§4.1),
//! [`Rev::of_list`] / [`Rev::set_on_list`] on a [`ToolsListResult`] (`mcpl/rev`, §6.1),
//! [`CallToolParams`] (`mcpl/instance`, §4.3) and [`HintChanges::of_result`] /
//! [`HintChanges::set_on_result`] on a [`CallToolResult`] (`mcpl/hints`, §6).
//!
//! They live here, not beside the MCP types, so that MCP's module never depends on RFC-014's:
//! RFC-014 builds on MCP (hints carry tool definitions), not the other way round.

use serde_json::{Map, Value};

use super::hints::HintChanges;
use super::meta::{HINTS_KEY, INSTANCE_KEY, REV_KEY, Rev, TOOLSET_KEY, ToolHintsMeta, VISIBLE_KEY};
use crate::mcp::tool::Tool;
use crate::mcp::tools::{
    CallToolParams, CallToolResult, MetaError, ToolsListResult, read_meta, write_meta,
};

impl ToolHintsMeta {
    /// The RFC-014 `_meta` members of `tool` (§4.1); a member of the wrong type reads as
    /// absent.
    pub fn of(tool: &Tool) -> Self {
        Self::read(tool.meta.as_ref())
    }

    /// Writes these members into `tool`'s `_meta`, removing those left absent; a `_meta` left
    /// empty is dropped.
    pub fn write_to(&self, tool: &mut Tool) {
        let meta = tool.meta.get_or_insert_with(Map::new);
        self.write(meta);
        if meta.is_empty() {
            tool.meta = None;
        }
    }
}

// `Tool`'s methods here name no RFC-014 type (presence is read and written through
// `ToolHintsMeta::of` and `ToolHintsMeta::write_to`): tools that count an impl's methods as
// part of the module defining the type (cargo-modules) then see no edge from `mcp` to here.
impl Tool {
    /// Removes every RFC-014 `_meta` member (§6.3: tailoring for a host without `toolHints`).
    pub fn strip_hints_meta(&mut self) {
        ToolHintsMeta::default().write_to(self);
    }

    /// `mcpl/visible` as stated.
    pub fn visible(&self) -> Option<bool> {
        self.meta_value(VISIBLE_KEY).and_then(Value::as_bool)
    }

    /// Sets or removes `mcpl/visible`.
    pub fn set_visible(&mut self, visible: Option<bool>) {
        self.set_meta_value(VISIBLE_KEY, visible.map(Value::from));
    }

    /// Whether the tool is usable now: as stated, else visible (§4.1).
    pub fn is_visible(&self) -> bool {
        self.visible().unwrap_or(true)
    }

    /// `mcpl/toolset`: the toolset the tool belongs to, kept as given.
    pub fn toolset(&self) -> Option<&str> {
        self.meta_value(TOOLSET_KEY).and_then(Value::as_str)
    }

    /// Sets or removes `mcpl/toolset`.
    pub fn set_toolset(&mut self, toolset: Option<&str>) {
        self.set_meta_value(TOOLSET_KEY, toolset.map(Value::from));
    }
}

// `Rev` and `HintChanges` read and write themselves on MCP's results (not `impl
// ToolsListResult` or `impl CallToolResult` here): a method of an MCP type whose signature named
// an RFC-014 type would count, for tools that file an impl's methods under the type's module,
// as an edge from `mcp` to `rfc014`.
impl Rev {
    /// `_meta["mcpl/rev"]` of a `tools/list` page: the last rev the server had taken when it
    /// wrote the page (RFC-014 §4.1). `Ok(None)` when absent (a server without `toolHints`); an
    /// error when present but not a non-negative integer (H07 treats such pages specially).
    pub fn of_list(list: &ToolsListResult) -> Result<Option<Rev>, MetaError> {
        read_meta(list.meta.as_ref(), REV_KEY)
    }

    /// Sets `_meta["mcpl/rev"]` of a `tools/list` page (`None` removes it). The result itself
    /// takes no rev (§6.1).
    pub fn set_on_list(list: &mut ToolsListResult, rev: Option<Rev>) {
        write_meta(&mut list.meta, REV_KEY, rev.map(|r| Value::from(r.get())));
    }
}

impl CallToolParams {
    /// `_meta["mcpl/instance"]`: the target instance (§4.3), kept as given. `Ok(None)` when
    /// absent; an error when it is not a string.
    pub fn instance(&self) -> Result<Option<String>, MetaError> {
        read_meta(self.meta.as_ref(), INSTANCE_KEY)
    }

    /// Sets or removes `_meta["mcpl/instance"]`. Hosts never set it for a toolset without
    /// instances (§4.3).
    pub fn set_instance(&mut self, instance: Option<&str>) {
        write_meta(&mut self.meta, INSTANCE_KEY, instance.map(Value::from));
    }
}

impl HintChanges {
    /// `_meta["mcpl/hints"]` of a `tools/call` result: what the call caused (RFC-014 §6).
    /// `Ok(None)` when absent.
    pub fn of_result(result: &CallToolResult) -> Result<Option<HintChanges>, MetaError> {
        read_meta(result.meta.as_ref(), HINTS_KEY)
    }

    /// Sets or removes `_meta["mcpl/hints"]` of a `tools/call` result.
    pub fn set_on_result(
        result: &mut CallToolResult,
        hints: Option<&HintChanges>,
    ) -> Result<(), serde_json::Error> {
        let value = hints.map(serde_json::to_value).transpose()?;
        write_meta(&mut result.meta, HINTS_KEY, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rfc014::meta::Presence;
    use crate::test_util::round_trip;
    use serde_json::json;

    /// Sets `mcpl/presence` on `tool`, keeping its other members.
    fn set_presence(tool: &mut Tool, presence: Option<Presence>) {
        let mut hints = ToolHintsMeta::of(tool);
        hints.presence = presence;
        hints.write_to(tool);
    }

    #[test]
    fn s4_1_meta_defaults_and_toolset_forces_dynamic() {
        let mut tool = Tool::new("board");
        assert_eq!(ToolHintsMeta::of(&tool).presence, None);
        assert_eq!(
            ToolHintsMeta::of(&tool).effective_presence(),
            Presence::Static
        );
        assert!(tool.is_visible());
        set_presence(&mut tool, Some(Presence::Static));
        tool.set_toolset(Some("go"));
        assert_eq!(tool.toolset(), Some("go"));
        assert_eq!(
            ToolHintsMeta::of(&tool).effective_presence(),
            Presence::Dynamic
        );
        tool.set_visible(Some(false));
        assert!(!tool.is_visible());
        assert_eq!(
            serde_json::to_value(&tool).unwrap()["_meta"],
            json!({"mcpl/presence": "static", "mcpl/toolset": "go", "mcpl/visible": false})
        );
    }

    #[test]
    fn s6_3_stripping_hints_keeps_other_meta_and_drops_an_empty_meta() {
        let mut tool = Tool::new("t");
        tool.set_toolset(Some("go"));
        tool.set_visible(Some(true));
        tool.strip_hints_meta();
        assert_eq!(tool.meta, None);
        tool.set_meta_value("vendor/x", Some(json!(1)));
        set_presence(&mut tool, Some(Presence::Dynamic));
        tool.strip_hints_meta();
        assert_eq!(
            tool.meta,
            Some(json!({"vendor/x": 1}).as_object().unwrap().clone())
        );
    }

    #[test]
    fn wrong_typed_meta_reads_as_absent() {
        let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {},
            "_meta": {"mcpl/presence": "sideways", "mcpl/visible": "yes", "mcpl/toolset": 3}}))
        .unwrap();
        assert_eq!(ToolHintsMeta::of(&tool), ToolHintsMeta::default());
        assert_eq!(tool.visible(), None);
        assert_eq!(tool.toolset(), None);
    }
    #[test]
    fn s4_1_tools_list_result_round_trips_and_reads_rev() {
        let r: ToolsListResult = round_trip(json!({
            "tools": [{"name": "challenge", "inputSchema": {"type": "object"}},
                      {"name": "play", "inputSchema": {"type": "object"},
                       "_meta": {"mcpl/toolset": "go", "mcpl/visible": false}}],
            "nextCursor": "p2",
            "_meta": {"mcpl/rev": 12, "other": "kept"},
            "vendor": {}
        }));
        assert_eq!(Rev::of_list(&r).unwrap(), Some(Rev(12)));
        assert_eq!(r.tools[1].toolset(), Some("go"));
    }

    #[test]
    fn s6_1_rev_zero_before_any_hints_and_set_rev_writes_a_number() {
        let mut r = ToolsListResult::new(vec![]);
        assert_eq!(Rev::of_list(&r).unwrap(), None);
        Rev::set_on_list(&mut r, Some(Rev::ZERO));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"tools": [], "_meta": {"mcpl/rev": 0}})
        );
        Rev::set_on_list(&mut r, None);
        assert_eq!(r.meta, None);
    }

    #[test]
    fn h07_non_numeric_rev_is_reported_not_hidden() {
        let r: ToolsListResult =
            serde_json::from_value(json!({"tools": [], "_meta": {"mcpl/rev": "7"}})).unwrap();
        let err = Rev::of_list(&r).unwrap_err();
        assert_eq!(err.key, "mcpl/rev");
        assert!(err.to_string().contains("mcpl/rev"));
        let r: ToolsListResult =
            serde_json::from_value(json!({"tools": [], "_meta": {"mcpl/rev": -1}})).unwrap();
        assert!(Rev::of_list(&r).is_err());
    }

    #[test]
    fn s4_3_call_params_round_trip_and_carry_the_instance() {
        let mut p: CallToolParams = round_trip(json!({"name": "play",
            "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "vs-bot",
            "progressToken": 3}}));
        assert_eq!(p.instance().unwrap().as_deref(), Some("vs-bot"));
        p.set_instance(None);
        assert_eq!(
            p.meta,
            Some(json!({"progressToken": 3}).as_object().unwrap().clone())
        );
        let bad: CallToolParams =
            serde_json::from_value(json!({"name": "play", "_meta": {"mcpl/instance": 1}})).unwrap();
        assert!(bad.instance().is_err());
        assert!(
            serde_json::from_value::<CallToolParams>(json!({"name": "x", "arguments": [1]}))
                .is_err()
        );
    }

    #[test]
    fn s6_call_result_round_trips_and_carries_hints() {
        let r: CallToolResult = round_trip(json!({
            "content": [{"type": "text", "text": "White played E5"},
                        {"type": "image", "data": "AA==", "mimeType": "image/png"}],
            "structuredContent": {"board": "..."},
            "isError": false,
            "_meta": {"mcpl/hints": {"rev": 3, "tools": [{"name": "pass", "instance": "g1",
                      "visible": true}]}},
            "vendor": 1
        }));
        let hints = HintChanges::of_result(&r).unwrap().unwrap();
        assert_eq!(hints.rev, Rev(3));
        assert!(!r.failed());
        let mut plain = CallToolResult::error("not open");
        assert!(plain.failed());
        assert_eq!(HintChanges::of_result(&plain).unwrap(), None);
        HintChanges::set_on_result(&mut plain, Some(&hints)).unwrap();
        assert_eq!(HintChanges::of_result(&plain).unwrap(), Some(hints));
        HintChanges::set_on_result(&mut plain, None).unwrap();
        assert_eq!(plain.meta, None);
    }

    #[test]
    fn malformed_hints_leave_the_result_readable() {
        let r: CallToolResult = serde_json::from_value(json!({"content": [],
            "_meta": {"mcpl/hints": {"rev": "x"}}}))
        .unwrap();
        assert_eq!(HintChanges::of_result(&r).unwrap_err().key, "mcpl/hints");
    }
}
