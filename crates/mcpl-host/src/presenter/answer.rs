//! The text the model reads for a meta-tool's outcome (H59-H61, H85, H86) and for look
//! (H62, H63, H74).

use mcpl_protocol::rfc014::Presence;
use serde_json::Value;

use super::agent::AgentId;
use super::link_state::LinkState;
use super::meta_tools::{META_ACT, META_LOOK};
use super::notice::{quote, quote_content, shown_key, title};
use super::plan::{LookQuery, Plan};
use super::queue::WindowItem;
use super::render::{self, first_sentence};
use super::state::Presenter;
use crate::controller::{Outcome, Snapshot};
use crate::names::ServerName;

impl Presenter {
    /// The text answering the model for a plan's outcome. `sent` is `Err` when the
    /// controller refused to send (it certainly never left the host, H60, H61).
    pub fn answer_text(&self, plan: &Plan, sent: Result<&Outcome, &crate::error::Error>) -> String {
        let (verb, server) = match plan {
            Plan::Open { server, .. } => ("open", server),
            Plan::Close { server, .. } => ("close", server),
            Plan::Act { server, .. }
            | Plan::Call { server, .. }
            | Plan::ActOpening { server, .. } => ("call", server),
            Plan::OpenGroup { server, .. } => ("open", server),
            Plan::CloseGroup { server, .. } => ("close", server),
            Plan::Look { .. } => return String::new(),
        };
        if let (Plan::OpenGroup { group, .. } | Plan::CloseGroup { group, .. }, Err(e)) =
            (plan, sent)
        {
            let done = if verb == "open" { "opened" } else { "closed" };
            return format!("not done: `{group}` on `{server}` was not {done} ({e})");
        }
        let outcome = match sent {
            Err(crate::error::Error::Closed) => {
                let why = match self.link(server) {
                    Some(state) if *state != LinkState::Up => format!("`{server}` is {state}"),
                    _ => format!("the connection to `{server}` is closed"),
                };
                return format!("not done: the {verb} was never sent ({why}); try again shortly");
            }
            Err(e) => return format!("not done: the {verb} was never sent ({e})"),
            Ok(o) => o,
        };
        // A host-side open or close: nothing went to the server, and it was done.
        match plan {
            Plan::OpenGroup { group, .. } => {
                return format!("opened `{group}` on `{server}` (host side)");
            }
            Plan::CloseGroup { group, .. } => {
                return format!("closed `{group}` on `{server}` (host side)");
            }
            _ => {}
        }
        match outcome {
            Outcome::Unconfirmed(_) if verb == "call" => format!(
                "outcome unknown: the call was sent to `{server}` but no answer came; check the state with {META_LOOK}"
            ),
            Outcome::Unconfirmed(_) => format!(
                "unconfirmed: the {verb} was sent to `{server}` but no answer came, so it may or may not have happened; check with {META_LOOK}"
            ),
            Outcome::Error(e) => format!("refused: {}", quote(server, &e.message)),
            Outcome::Result(v) => {
                let content = content_text(server, v);
                match plan {
                    Plan::Open { req, .. } => {
                        let inst = v
                            .get("instance")
                            .and_then(Value::as_str)
                            .or(req.instance.as_deref());
                        let key = match inst {
                            Some(i) => format!("`{}`/`{i}`", req.toolset),
                            None => format!("`{}`", req.toolset),
                        };
                        let mut text = if v.get("adopted") == Some(&Value::Bool(true)) {
                            format!("adopted {key}: it was already open")
                        } else {
                            format!("opened {key}")
                        };
                        if let Some(t) = v.get("title").and_then(Value::as_str) {
                            text.push_str(&format!(" ({})", title(server, t)));
                        }
                        if !content.is_empty() {
                            text.push_str(&format!("\n{content}"));
                        }
                        text
                    }
                    Plan::Close { req, .. } => {
                        let key = match &req.instance {
                            Some(i) => format!("`{}`/`{i}`", req.toolset),
                            None => format!("`{}`", req.toolset),
                        };
                        if content.is_empty() {
                            format!("closed {key}")
                        } else {
                            format!("closed {key}\n{content}")
                        }
                    }
                    _ => result_text(v),
                }
            }
        }
    }

    /// Look (H62, H63): the catalog, one toolset, or one tool, with a line for each server
    /// that could not be re-read. Storing it counts the descriptions it rendered as shown
    /// (H51).
    pub fn look(
        &mut self,
        agent: &AgentId,
        query: &LookQuery,
        unreachable: &[ServerName],
    ) -> WindowItem {
        let mut lines = Vec::new();
        let mut shown = Vec::new();
        for s in unreachable {
            lines.push(format!(
                "(could not ask `{s}`; showing the last state the host knew)"
            ));
        }
        let servers: Vec<ServerName> = match &query.server {
            Some(s) => vec![s.clone()],
            None => self.presenting(),
        };
        // Servers that are not connected and present nothing yet are named with their state,
        // so a dead one is never silently missing (its error names the cause).
        if query.server.is_none() && query.tool.is_none() {
            for (id, state) in &self.links {
                if *state != LinkState::Up && !servers.contains(id) {
                    lines.push(format!("server \"{id}\": {state}"));
                }
            }
        }
        // Events that cannot reach the agent, and why; saying it here counts as telling it.
        if query.tool.is_none() && query.toolset.is_none() && query.query.is_none() {
            lines.extend(self.look_withheld(agent, query.server.as_deref()));
        }
        if let Some(q) = &query.query {
            lines.extend(self.search(q));
        } else if servers.is_empty() && lines.is_empty() {
            lines.push("no server presents toolsets".to_owned());
        }
        let servers = if query.query.is_some() {
            Vec::new()
        } else {
            servers
        };
        for id in &servers {
            let state = self.link(id).filter(|s| **s != LinkState::Up);
            let Some(snap) = self.snapshot(id) else {
                lines.push(match state {
                    Some(state) => format!("server `{id}`: {state}; not read yet"),
                    None => format!("no server `{id}`"),
                });
                continue;
            };
            if let Some(tool) = &query.tool {
                lines.extend(self.look_tool(id, snap, tool, query.instance.as_deref(), &mut shown));
                continue;
            }
            match state {
                Some(state) => lines.push(format!(
                    "server `{id}` ({state}; showing the last state known):"
                )),
                None => lines.push(format!("server `{id}`:")),
            }
            for ts in snap.toolset_names() {
                if query.toolset.as_ref().is_some_and(|q| q != ts) {
                    continue;
                }
                let mut line = format!("- toolset `{ts}`");
                if let Some(d) = snap.declared().get(ts) {
                    if let Some(t) = &d.title {
                        line.push_str(&format!(" ({})", title(id, t)));
                    }
                } else {
                    line.push_str(" (kept by the host)");
                }
                let summary = snap.host_grouped().then(|| {
                    crate::grouping::summary(
                        snap.tools()
                            .iter()
                            .filter(|t| t.toolset.as_ref() == Some(ts))
                            .map(|t| &t.tool),
                    )
                });
                let insts = snap.instances(ts);
                if snap.is_open(ts) {
                    let names: Vec<String> =
                        insts.iter().flatten().map(|i| format!("`{i}`")).collect();
                    line.push_str(
                        if names.is_empty() {
                            ": open".into()
                        } else {
                            format!(": open instances {}", names.join(", "))
                        }
                        .as_str(),
                    );
                } else {
                    line.push_str(": closed");
                }
                if let Some(s) = summary {
                    line.push_str(&format!(" — {}", quote(id, &s)));
                }
                lines.push(line);
                for key in insts {
                    for t in snap
                        .tools()
                        .iter()
                        .filter(|t| t.toolset.as_ref() == Some(ts))
                    {
                        if !snap.visible(&t.tool.name, key) {
                            continue;
                        }
                        let def = snap.definition(&t.tool.name, key);
                        let sig = render::signature(
                            &t.tool.name,
                            def.as_ref().map_or(&Value::Null, |d| &d.input_schema),
                        );
                        let mut l = format!("  - {sig}");
                        if let Some(i) = key {
                            l.push_str(&format!(" in `{i}`"));
                        }
                        if let Some(s) = def
                            .as_ref()
                            .and_then(|d| first_sentence(d.description.as_ref()))
                        {
                            l.push_str(&format!(": {}", quote(id, &s)));
                            shown.extend(shown_key(id, snap, &t.tool.name, key));
                        }
                        lines.push(l);
                    }
                }
            }
            if query.toolset.is_none() {
                for t in snap
                    .tools()
                    .iter()
                    .filter(|t| t.presence == Presence::Dynamic && t.toolset.is_none())
                {
                    if snap.visible(&t.tool.name, None) {
                        lines.push(format!(
                            "- {}",
                            render::signature(&t.tool.name, &t.tool.input_schema)
                        ));
                    }
                }
            }
        }
        let mut text = lines.join("\n");
        if text.len() > render::MAX_JSON {
            text = format!(
                "{} {}",
                render::cut(&text, render::MAX_JSON),
                render::TOO_LONG
            );
        }
        let marks = self.look_marks(shown);
        self.hand_out(agent, query.server.as_ref(), text, marks)
    }

    fn look_tool(
        &self,
        id: &ServerName,
        snap: &Snapshot,
        tool: &str,
        instance: Option<&str>,
        shown: &mut Vec<(ServerName, String, String)>,
    ) -> Vec<String> {
        let Some(listed) = snap.tool(tool) else {
            return vec![format!(
                "`{id}` has no tool `{tool}`; {}",
                self.what_it_has(id)
            )];
        };
        let mut lines = Vec::new();
        let listed_def = &listed.tool;
        // H40: a tool the latest list has static is "called by name", published or not.
        if listed.presence == Presence::Static {
            lines.push(format!(
                "`{tool}` on `{id}` is called by name as `{}`",
                self.model_name(id, tool)
            ));
        }
        lines.push(format!(
            "signature: {}",
            render::signature(tool, &listed_def.input_schema)
        ));
        // H74: a non-string description or class entry is left out, never printed.
        if let Some(d) = listed_def.description.as_ref().and_then(Value::as_str) {
            lines.push(format!("description: {}", quote(id, d)));
        }
        let class: Vec<&str> = match listed_def.meta.as_ref().and_then(|m| m.get("mcpl/class")) {
            Some(Value::String(c)) => vec![c.as_str()],
            Some(Value::Array(cs)) => cs.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !class.is_empty() {
            lines.push(format!("class: {}", class.join(", ")));
        }
        lines.push(format!(
            "input schema: {}",
            render::json(&listed_def.input_schema)
        ));
        if self.actable(id, tool) {
            // H63: exactly the definition act would check, found by act's own lookup.
            let inst = match &listed.toolset {
                Some(ts) if snap.instanced(ts) => self
                    .pick_instance(snap, ts, instance.map(str::to_owned))
                    .ok(),
                _ => None,
            };
            if let Some(def) = snap.definition(tool, inst.as_ref()) {
                let place = inst
                    .as_ref()
                    .map(|i| format!(" (instance `{i}`)"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{META_ACT} checks against{place}: {}",
                    render::json(&def.input_schema)
                ));
                shown.extend(shown_key(id, snap, tool, inst.as_ref()));
            }
        }
        lines
    }
}

/// The text blocks of an open or close result, attributed to the server (H54).
fn content_text(server: &str, v: &Value) -> String {
    v.get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(|t| quote_content(server, t))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Whether a result can carry a change beside it (H83, H86): it must show something (text
/// blocks, or non-null structured content). One that does not reads as it would without
/// RFC-014, and its change goes out as a notice ([`Presenter::release`]).
pub fn can_carry(v: &Value) -> bool {
    // `result_text(v)` is not empty, without building it: two text blocks or more join to
    // at least a newline; one must have text; none falls back to the structured content.
    let mut texts = v
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str));
    match (texts.next(), texts.next()) {
        (Some(_), Some(_)) => true,
        (Some(only), None) => !only.is_empty(),
        (None, _) => !result_text(v).is_empty(),
    }
}

/// A tool result as text: its text blocks, or, for a result of structured content alone,
/// that content as JSON (H85).
pub fn result_text(v: &Value) -> String {
    let blocks: Vec<&str> = v
        .get("content")
        .and_then(Value::as_array)
        .map(|b| {
            b.iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if blocks.is_empty() {
        if let Some(sc) = v.get("structuredContent").filter(|s| !s.is_null()) {
            return render::json(sc);
        }
    }
    blocks.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn block() -> impl Strategy<Value = Value> {
        prop_oneof![
            prop_oneof![Just(""), Just("x"), Just("\n")]
                .prop_map(|t| json!({"type": "text", "text": t})),
            Just(json!({"type": "image", "data": "", "mimeType": "image/png"})),
            Just(json!({"type": "text"})),
        ]
    }

    fn structured() -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            Just(Some(json!({}))),
            Just(Some(json!("")))
        ]
    }

    proptest! {
        /// H83, H86: whether a result can carry a change is exactly whether its text is not
        /// empty, decided without building the text.
        #[test]
        fn h86_can_carry_is_whether_the_result_text_is_empty(
            blocks in prop::collection::vec(block(), 0..4),
            sc in structured(),
        ) {
            let mut v = json!({"content": blocks});
            if let Some(sc) = sc {
                v["structuredContent"] = sc;
            }
            prop_assert_eq!(can_carry(&v), !result_text(&v).is_empty());
        }
    }
}
