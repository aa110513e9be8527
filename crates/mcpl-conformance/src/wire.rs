//! Small readers over raw JSON messages: where hints, revs, tools and texts sit.
//!
//! The suite reads raw values rather than typed ones on purpose: it must see what the peer
//! wrote (an absent member, a member of the wrong type) to judge it.

use mcpl_protocol::rfc014::{HINTS_KEY, INSTANCE_KEY, REV_KEY, TOOLSET_KEY, VISIBLE_KEY};
use serde_json::{Value, json};

/// `result._meta["mcpl/hints"]`, if present.
pub(crate) fn result_hints(result: &Value) -> Option<&Value> {
    result.get("_meta")?.get(HINTS_KEY)
}

/// A hint batch's `rev`, if it is a non-negative integer.
pub(crate) fn rev_of(hints: &Value) -> Option<u64> {
    hints.get("rev")?.as_u64()
}

/// `tools/list` result's `_meta["mcpl/rev"]`.
pub(crate) fn list_rev(result: &Value) -> Option<u64> {
    result.get("_meta")?.get(REV_KEY)?.as_u64()
}

/// The `tools` entries of a hint batch.
pub(crate) fn tool_entries(hints: &Value) -> Vec<&Value> {
    hints
        .get("tools")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The `toolsets` entries of a hint batch.
pub(crate) fn toolset_entries(hints: &Value) -> Vec<&Value> {
    hints
        .get("toolsets")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The entry for tool `name` (in `instance`, if given) in a hint batch.
pub(crate) fn tool_entry<'a>(
    hints: &'a Value,
    name: &str,
    instance: Option<&str>,
) -> Option<&'a Value> {
    tool_entries(hints).into_iter().find(|e| {
        e.get("name").and_then(Value::as_str) == Some(name)
            && e.get("instance").and_then(Value::as_str) == instance
    })
}

/// Whether the batch says tool `name` (in `instance`) is visible.
pub(crate) fn states_visible(hints: &Value, name: &str, instance: Option<&str>) -> Option<bool> {
    tool_entry(hints, name, instance)?.get("visible")?.as_bool()
}

/// The tools of a `tools/list` result.
pub(crate) fn listed_tools(result: &Value) -> Vec<&Value> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// A listed tool by name.
pub(crate) fn listed<'a>(result: &'a Value, name: &str) -> Option<&'a Value> {
    listed_tools(result)
        .into_iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
}

/// A listed tool's `_meta[key]`.
pub(crate) fn tool_meta<'a>(tool: &'a Value, key: &str) -> Option<&'a Value> {
    tool.get("_meta")?.get(key)
}

/// Whether a listed tool carries any RFC-014 `_meta` key.
pub(crate) fn has_hint_meta(tool: &Value) -> bool {
    ["mcpl/presence", VISIBLE_KEY, TOOLSET_KEY]
        .iter()
        .any(|k| tool_meta(tool, k).is_some())
}

/// Whether a `tools/call` result is a tool error.
pub(crate) fn is_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// The text of a result's content blocks, joined by newlines.
pub(crate) fn text_of(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// `tools/call` params for `name` with `args`, aimed at `instance` when given.
pub(crate) fn call_params(name: &str, args: Value, instance: Option<&str>) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    if let Some(i) = instance {
        params["_meta"] = json!({ INSTANCE_KEY: i });
    }
    params
}

/// The `open` entries of a `toolsets/list` result.
pub(crate) fn open_entries(result: &Value) -> Vec<&Value> {
    result
        .get("open")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// Whether a `toolsets/list` result lists `toolset` (and `instance`) as open.
pub(crate) fn lists_open(result: &Value, toolset: &str, instance: Option<&str>) -> bool {
    open_entries(result).iter().any(|e| {
        e.get("toolset").and_then(Value::as_str) == Some(toolset)
            && e.get("instance").and_then(Value::as_str) == instance
    })
}

/// The `ended` records of a `toolsets/list` result.
pub(crate) fn ended_records(result: &Value) -> Vec<&Value> {
    result
        .get("ended")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// A short rendering of a value for failure messages, cut at 300 characters.
pub(crate) fn brief(value: &Value) -> String {
    let s = value.to_string();
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(300).collect();
        format!("{cut}…")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s4_3_call_params_carry_the_instance_only_when_given() {
        let p = call_params("play", json!({"move": "C3"}), Some("vs-bot"));
        assert_eq!(p["_meta"]["mcpl/instance"], "vs-bot");
        let p = call_params("pass", json!({}), None);
        assert!(p.get("_meta").is_none());
    }

    #[test]
    fn s5_5_entries_match_by_name_and_instance() {
        let h = json!({"rev": 2, "tools": [
            {"name": "play", "instance": "a", "visible": true},
            {"name": "play", "instance": "b", "visible": false},
            {"name": "board", "visible": true}]});
        assert_eq!(states_visible(&h, "play", Some("a")), Some(true));
        assert_eq!(states_visible(&h, "play", Some("b")), Some(false));
        assert_eq!(states_visible(&h, "play", None), None);
        assert_eq!(states_visible(&h, "board", None), Some(true));
        assert_eq!(rev_of(&h), Some(2));
        assert_eq!(rev_of(&json!({"rev": -1})), None);
    }

    #[test]
    fn readers_tolerate_wrong_shapes() {
        let bad = json!({"tools": "no", "open": 3, "content": {"x": 1}, "_meta": []});
        assert!(listed_tools(&bad).is_empty());
        assert!(open_entries(&bad).is_empty());
        assert_eq!(text_of(&bad), "");
        assert!(result_hints(&bad).is_none());
        assert!(list_rev(&bad).is_none());
        assert!(!is_error(&json!({"isError": "yes"})));
    }

    #[test]
    fn brief_cuts_long_values_on_a_char_boundary() {
        let long = json!("é".repeat(400));
        let b = brief(&long);
        assert!(b.ends_with('…'));
        assert_eq!(b.chars().count(), 301);
    }
}
