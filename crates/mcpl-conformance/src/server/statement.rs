//! Full statements checked both ways (§5.3): every open instance's tools are stated visible,
//! and nothing closed is stated visible.

use crate::fixture::{DEFAULT_OPEN, ECHO, FINISH, FLAT, FLAT_TOOL, INSTANCED, OPENED_TOOL};
use crate::verdict::{Step, ensure, fail};
use crate::wire::{brief, lists_open, open_entries, result_hints, states_visible, tool_entries};
use serde_json::Value;

/// Checks a `toolsets/list` result against what the check itself opened and closed: `opened`
/// are listed open, `closed` are not, every listed instance's tools are stated visible (none
/// left out, oldest or newest), and no tool of an instance or toolset that is not open is
/// stated visible.
pub(super) fn agrees(list: &Value, opened: &[String], closed: &[String], when: &str) -> Step {
    let Some(h) = result_hints(list) else {
        fail!(
            "toolsets/list {when} carries no full statement: {}",
            brief(list)
        );
    };
    for i in opened {
        ensure!(
            lists_open(list, INSTANCED, Some(i)),
            "toolsets/list {when} does not list the open instance `{i}`: {}",
            brief(list)
        );
    }
    for i in closed {
        ensure!(
            !lists_open(list, INSTANCED, Some(i)),
            "toolsets/list {when} still lists the closed instance `{i}` open"
        );
    }
    let listed_instances: Vec<&str> = open_entries(list)
        .into_iter()
        .filter(|e| e.get("toolset").and_then(Value::as_str) == Some(INSTANCED))
        .filter_map(|e| e.get("instance").and_then(Value::as_str))
        .collect();
    for i in &listed_instances {
        for tool in [ECHO, FINISH] {
            ensure!(
                states_visible(h, tool, Some(i)) == Some(true),
                "the full statement {when} leaves out {tool} of the open instance `{i}` (§5.3: it states every visible tool): {}",
                brief(h)
            );
        }
    }
    for entry in tool_entries(h) {
        if entry.get("visible") != Some(&Value::Bool(true)) {
            continue;
        }
        let name = entry.get("name").and_then(Value::as_str).unwrap_or("");
        if let Some(i) = entry.get("instance").and_then(Value::as_str) {
            ensure!(
                listed_instances.contains(&i),
                "the full statement {when} states {name} of instance `{i}` visible, but `{i}` is not open: {}",
                brief(entry)
            );
        }
        for (tool, toolset) in [(FLAT_TOOL, FLAT), (OPENED_TOOL, DEFAULT_OPEN)] {
            ensure!(
                name != tool || lists_open(list, toolset, None),
                "the full statement {when} states {tool} visible, but {toolset} is not open"
            );
        }
    }
    for (tool, toolset) in [(FLAT_TOOL, FLAT), (OPENED_TOOL, DEFAULT_OPEN)] {
        ensure!(
            !lists_open(list, toolset, None) || states_visible(h, tool, None) == Some(true),
            "{toolset} is open, yet the full statement {when} does not state {tool} visible: {}",
            brief(h)
        );
    }
    Ok(())
}
