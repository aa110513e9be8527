//! Rendering changes as notice text for one agent: attributed server text (H54), ended
//! records told once (H48), first sentences owed per agent (H50), bounded length (H73).

use crate::names::{InstanceName, ServerName, ToolsetName};
use std::collections::BTreeSet;

use mcpl_protocol::rfc014::SuggestAction;
use serde_json::{Value, json};

use super::queue::{Agent, Body, MAX_NOTICE, Marks, ShownKey};
use super::render::{self, cut, first_sentence};
use super::state::{Presenter, ServerEntry};
use crate::controller::{Change, ChangeItem, CloseCause};

/// The longest server-written string quoted in a notice, in bytes (§10: hosts may cap it).
const MAX_QUOTE: usize = 500;

pub(super) fn key_text(toolset: &str, instance: Option<&str>) -> String {
    match instance {
        Some(i) => format!("`{toolset}`/`{i}`"),
        None => format!("`{toolset}`"),
    }
}

/// Server-written text, quoted and attributed (H54, §10): one line as a JSON string,
/// several lines as a quoted block (`> ` before each line), so a board or a table stays
/// readable and still cannot pass for the host's own words.
pub(super) fn quote(server: &str, text: &str) -> String {
    quote_within(server, text, MAX_QUOTE)
}

/// [`quote`] for content the agent needs whole (a result's or an event's text), bounded
/// by the JSON bound instead of the short quote's.
pub(super) fn quote_content(server: &str, text: &str) -> String {
    quote_within(server, text, render::MAX_JSON)
}

fn quote_within(server: &str, text: &str, max: usize) -> String {
    let text = cut(text, max).trim_end_matches('\n');
    if text.contains('\n') {
        // One buffer for the whole block: a board of twenty lines is quoted on every answer.
        let mut block = String::with_capacity(server.len() + text.len() + 8 + 3 * 24);
        block.push_str(server);
        block.push_str(" says:");
        for line in text.lines() {
            block.push_str("\n> ");
            block.push_str(line);
        }
        return block;
    }
    let q = serde_json::to_string(text).unwrap_or_default();
    format!("{server} says {q}")
}

/// A server-written title, attributed (H54): `cells calls it "Cells g1"`.
pub(super) fn title(server: &str, title: &str) -> String {
    let q = serde_json::to_string(cut(title, MAX_QUOTE)).unwrap_or_default();
    format!("{server} calls it {q}")
}

/// The identity of a tool's effective definition in one place (H75).
pub(super) fn shown_key(
    server: &ServerName,
    snap: &crate::controller::Snapshot,
    tool: &str,
    instance: Option<&InstanceName>,
) -> Option<ShownKey> {
    let d = snap.definition(tool, instance)?;
    let v = json!({"description": d.description, "inputSchema": d.input_schema, "annotations": d.annotations});
    Some((server.to_owned(), tool.to_owned(), render::identity(&v)))
}

/// A pushed event as the agent reads it: where it happened and the server's own words,
/// attributed (H54); an event without text shows its params as JSON (hints left out).
pub fn event_line(server: &ServerName, params: &Value) -> String {
    let at = params
        .get("toolset")
        .and_then(Value::as_str)
        .map(|t| {
            let inst = params.get("instance").and_then(Value::as_str);
            format!(" in {}", key_text(t, inst))
        })
        .unwrap_or_default();
    let texts: Vec<&str> = params
        .pointer("/payload/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let body = if texts.is_empty() {
        let mut shown = params.clone();
        if let Some(o) = shown.as_object_mut() {
            o.remove("hints");
        }
        render::json(&shown)
    } else {
        quote_content(server, &texts.join("\n"))
    };
    format!("event from {server}{at}: {body}")
}

/// Renders one entry for an agent: its lines and what storing them commits.
pub(super) fn render_body(
    p: &Presenter,
    agent: &Agent,
    server: &ServerName,
    body: &Body,
    marks: &mut Marks,
    full: bool,
) -> Vec<String> {
    let entry: Option<&ServerEntry> = p.servers.get(server);
    let mut lines = Vec::new();
    match body {
        Body::Change(c) => lines.extend(render_change(p, agent, entry, server, c, marks, full)),
        Body::Event { ev, change } => {
            lines.push(format!("- {}", event_line(server, &ev.params)));
            if let Some(c) = change {
                lines.extend(render_change(p, agent, entry, server, c, marks, full));
            }
        }
        Body::Suggestion(s) => {
            let action = match s.action {
                SuggestAction::Open => "opening",
                SuggestAction::Close => "closing",
            };
            let mut line = format!(
                "- {server} suggests {action} {} (a suggestion only: nothing was done)",
                key_text(&s.toolset, s.instance.as_deref())
            );
            if let Some(r) = &s.reason {
                line.push_str(&format!("; reason: {}", quote(server, r)));
            }
            lines.push(line);
        }
        Body::Link(text) => lines.push(format!("- {text}")),
        Body::Move { tool, now_static } => lines.push(if *now_static {
            format!(
                "- `{tool}` moved: call it by name as `{}`",
                p.model_name(server, tool)
            )
        } else {
            format!(
                "- `{tool}` moved: reach it through {}",
                super::meta_tools::META_ACT
            )
        }),
    }
    lines
}

fn render_change(
    p: &Presenter,
    agent: &Agent,
    entry: Option<&ServerEntry>,
    server: &ServerName,
    c: &Change,
    marks: &mut Marks,
    full: bool,
) -> Vec<String> {
    let principal = entry
        .map(|e| e.snap.principal().to_owned())
        .unwrap_or_default();
    let told = |id: &str, marks: &Marks| {
        let k = (server.to_owned(), principal.clone(), id.to_owned());
        agent.told_ended.contains(&k) || marks.ended.contains(&k)
    };
    let mut lines = Vec::new();
    // Ends named by an Ended item are told by it, with their reason (not twice).
    let ended_keys: BTreeSet<(ToolsetName, Option<InstanceName>)> = c
        .items
        .iter()
        .filter_map(|i| match i {
            ChangeItem::Ended {
                toolset, instance, ..
            } => Some((toolset.clone(), instance.clone())),
            _ => None,
        })
        .collect();
    for item in &c.items {
        match item {
            ChangeItem::Opened {
                toolset,
                instance,
                title,
            } => {
                let mut line = format!("- {} is open", key_text(toolset, instance.as_deref()));
                if let Some(t) = title {
                    line.push_str(&format!(" ({})", self::title(server, t)));
                }
                lines.push(line);
                marks
                    .announced
                    .push((server.to_owned(), toolset.clone(), instance.clone()));
            }
            ChangeItem::Closed {
                toolset,
                instance,
                cause,
                reason,
                ended_id,
            } => {
                if ended_keys.contains(&(toolset.clone(), instance.clone()))
                    && *cause == CloseCause::Server
                {
                    continue;
                }
                if let Some(id) = ended_id {
                    if told(id, marks) {
                        continue;
                    }
                    marks
                        .ended
                        .push((server.to_owned(), principal.clone(), id.clone()));
                }
                let key = key_text(toolset, instance.as_deref());
                let mut line = match cause {
                    CloseCause::EndedWhileAway => {
                        format!("- {key} ended while the connection was down (reason unknown)")
                    }
                    CloseCause::DeclarationRemoved => {
                        format!("- {key} closed: {server} no longer declares it")
                    }
                    CloseCause::Host => format!("- {key} closed by the host"),
                    _ => format!("- {key} closed"),
                };
                if let Some(r) = reason {
                    line.push_str(&format!("; reason: {}", quote(server, r)));
                }
                lines.push(line);
            }
            ChangeItem::Ended {
                id,
                toolset,
                instance,
                reason,
            } => {
                if told(id, marks) {
                    continue;
                }
                marks
                    .ended
                    .push((server.to_owned(), principal.clone(), id.clone()));
                let mut line = format!("- {} ended", key_text(toolset, instance.as_deref()));
                if let Some(r) = reason {
                    line.push_str(&format!("; reason: {}", quote(server, r)));
                }
                lines.push(line);
            }
            ChangeItem::Retitled {
                toolset,
                instance,
                title,
            } => lines.push(format!(
                "- {} is renamed ({})",
                key_text(toolset, instance.as_deref()),
                self::title(server, title)
            )),
            ChangeItem::Visibility {
                tool,
                toolset,
                instance,
                visible,
            } => {
                let place = match toolset {
                    Some(ts) => format!(" in {}", key_text(ts, instance.as_deref())),
                    None => String::new(),
                };
                if *visible {
                    let desc = describe(agent, entry, server, tool, instance.as_ref(), marks, full);
                    lines.push(format!("- `{tool}`{place} is available{desc}"));
                } else {
                    lines.push(format!("- `{tool}`{place} is no longer available"));
                }
            }
            ChangeItem::Redefined { tool, instance } => {
                let place = instance
                    .as_ref()
                    .map(|i| format!(" in `{i}`"))
                    .unwrap_or_default();
                let desc = describe(agent, entry, server, tool, instance.as_ref(), marks, full);
                lines.push(format!("- `{tool}`{place} changed{desc}"));
            }
            _ => {}
        }
    }
    let _ = p;
    lines
}

/// The first sentence owed for a tool (H50), or its whole description when the text may never
/// reach an agent (H52, `full`; nothing is marked then).
fn describe(
    agent: &Agent,
    entry: Option<&ServerEntry>,
    server: &ServerName,
    tool: &str,
    instance: Option<&InstanceName>,
    marks: &mut Marks,
    full: bool,
) -> String {
    let Some(e) = entry else { return String::new() };
    let Some(def) = e.snap.definition(tool, instance) else {
        return String::new();
    };
    if full {
        let desc = def
            .description
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or("");
        let sig = render::signature(tool, &def.input_schema);
        return format!(": {sig}; {}", quote(server, desc));
    }
    let Some(key) = shown_key(server, &e.snap, tool, instance) else {
        return String::new();
    };
    if agent.is_shown(&key) || marks.shown.contains(&key) {
        return String::new();
    }
    let Some(sentence) = first_sentence(def.description.as_ref()) else {
        return String::new();
    };
    marks.shown.push(key);
    format!(": {}", quote(server, &sentence))
}

pub(super) fn finish(server: &str, lines: Vec<String>) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut text = format!("Toolset update from {server}:\n{}", lines.join("\n"));
    if text.len() > MAX_NOTICE {
        text = format!("{}\n{}", cut(&text, MAX_NOTICE), render::TOO_LONG);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H54: several lines are quoted as a block under the server's name, each line behind
    /// `> `, trailing newlines dropped; one line is a JSON string.
    #[test]
    fn h54_server_text_is_quoted_as_a_block_or_a_string() {
        assert_eq!(
            quote("arcade", "  A B\n1 . .\n2 . X\n\n"),
            "arcade says:\n>   A B\n> 1 . .\n> 2 . X"
        );
        assert_eq!(
            quote("arcade", "a \"word\""),
            "arcade says \"a \\\"word\\\"\""
        );
        assert_eq!(quote("arcade", "x\n\ny"), "arcade says:\n> x\n> \n> y");
    }

    /// §10: a quoted block is cut at the bound before it is quoted, on a char boundary.
    #[test]
    fn s10_a_long_quote_is_cut_before_quoting() {
        let long = "é\n".repeat(MAX_QUOTE);
        let quoted = quote("s", &long);
        let lines = quoted.lines().skip(1).count();
        assert_eq!(lines, MAX_QUOTE / 3 + 1, "{quoted}");
        assert!(quoted.lines().skip(1).all(|l| l == "> é" || l == "> "));
    }
}
