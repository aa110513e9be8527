//! Text for the agent: the catalog `look` shows, a tool's current definition, usable tools,
//! and the argument check `act` runs. Server-written text is attributed and bounded.

use mcpl_host::controller::Snapshot;
use serde_json::Value;

use crate::hub::Inner;
use crate::news::place;

/// The longest first sentence shown, in characters.
const SENTENCE: usize = 160;
/// The longest schema printed by `look`, in bytes.
const SCHEMA: usize = 12_000;

/// The first sentence of a string description, bounded (non-strings show nothing).
pub(crate) fn first_sentence(description: Option<&Value>) -> Option<String> {
    let text = description?.as_str()?.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| c == '.' && text[i + 1..].chars().next().is_none_or(char::is_whitespace))
        .map_or(text.len(), |(i, _)| i + 1);
    let s: String = text[..end].chars().take(SENTENCE).collect();
    (!s.is_empty()).then_some(s)
}

/// The text blocks of a `content` array, one line each.
pub(crate) fn content_text(content: Option<&Value>) -> Vec<String> {
    content
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The tools usable now in an open toolset or instance, sorted.
pub(crate) fn visible_tools(snap: &Snapshot, toolset: &str, instance: Option<&str>) -> Vec<String> {
    snap.tools()
        .iter()
        .filter(|t| t.toolset.as_deref() == Some(toolset))
        .filter(|t| snap.visible(&t.tool.name, instance))
        .map(|t| t.tool.name.clone())
        .collect()
}

/// "Usable now: ..." with each tool's first sentence, for an open result.
pub(crate) fn usable_line(snap: &Snapshot, toolset: &str, instance: Option<&str>) -> String {
    let tools = visible_tools(snap, toolset, instance);
    if tools.is_empty() {
        return String::new();
    }
    let described: Vec<String> = tools
        .iter()
        .map(|t| {
            let d = snap
                .definition(t, instance)
                .and_then(|d| first_sentence(d.description.as_ref()));
            match d {
                Some(d) => format!("{t} ({d})"),
                None => t.clone(),
            }
        })
        .collect();
    format!(
        "\nUsable now through toolsets_act{}: {}",
        instance
            .map(|i| format!(" with instance `{i}`"))
            .unwrap_or_default(),
        described.join("; ")
    )
}

/// `look {tool}`: what act would validate against (H63).
pub(crate) fn tool_detail(
    server: &str,
    snap: &Snapshot,
    tool: &str,
    instance: Option<&str>,
) -> String {
    let Some(def) = snap.definition(tool, instance) else {
        return format!("`{tool}` is not listed by {server}");
    };
    let at = snap
        .tool(tool)
        .and_then(|t| t.toolset.clone())
        .map_or_else(|| server.to_owned(), |ts| place(&ts, instance));
    let mut out = format!("`{tool}` in {at} on {server}");
    if let Some(d) = def.description.as_ref().and_then(Value::as_str) {
        out.push_str(&format!("\n[{server}] {d}"));
    }
    let usable = if snap.visible(tool, instance) {
        "yes"
    } else {
        "no"
    };
    out.push_str(&format!("\nUsable now: {usable}"));
    let mut schema = serde_json::to_string(&def.input_schema).unwrap_or_default();
    if schema.len() > SCHEMA {
        let mut cut = SCHEMA;
        while !schema.is_char_boundary(cut) {
            cut -= 1;
        }
        schema.truncate(cut);
        schema.push_str("… (too long to show)");
    }
    out.push_str(&format!("\nArguments (JSON Schema): {schema}"));
    out
}

/// `look`: every server, its toolsets, what is open and usable.
pub(crate) fn catalog(inner: &Inner, server: Option<&str>, toolset: Option<&str>) -> String {
    let mut out = String::new();
    for (name, link) in &inner.links {
        if server.is_some_and(|s| s != name) {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("Server `{name}` ({})", link.status));
        let Some(snap) = link.snapshot() else {
            out.push_str(": not read yet\n");
            continue;
        };
        if link.controller.is_none() {
            out.push_str(" — showing the last state known before the connection was lost");
        }
        out.push('\n');
        for ts in snap.toolset_names() {
            if toolset.is_some_and(|t| t != ts) {
                continue;
            }
            let decl = snap.declared().get(ts);
            let title = decl
                .and_then(|d| d.title.clone())
                .map(|t| format!(" “{t}”"))
                .unwrap_or_default();
            let summary = decl
                .and_then(|d| d.summary.clone())
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            let kind = match decl {
                Some(d) if d.instances => " (instances: open it several times by name)",
                Some(_) => "",
                None => " (a group this host opens)",
            };
            out.push_str(&format!("- toolset `{ts}`{title}{kind}{summary}\n"));
            if let Some(opts) = decl.and_then(|d| d.options.as_ref()) {
                if let Some(props) = opts.get("properties").and_then(Value::as_object) {
                    let names: Vec<String> = props
                        .iter()
                        .map(|(k, v)| match v.get("enum").and_then(Value::as_array) {
                            Some(e) => format!(
                                "{k}: {}",
                                e.iter().map(Value::to_string).collect::<Vec<_>>().join("|")
                            ),
                            None => k.clone(),
                        })
                        .collect();
                    out.push_str(&format!("  options: {}\n", names.join(", ")));
                }
            }
            let open: Vec<Option<&str>> = snap.instances(ts);
            if decl.is_none() {
                let state = if snap.is_open(ts) { "open" } else { "closed" };
                out.push_str(&format!(
                    "  {state}; usable now: {}\n",
                    or_none(visible_tools(snap, ts, None))
                ));
            } else if open.is_empty() {
                out.push_str("  not open\n");
            }
            for inst in open {
                let title = snap
                    .open()
                    .get(&(ts.to_owned(), inst.map(str::to_owned)))
                    .and_then(|i| i.title.clone())
                    .map(|t| format!(" “{t}”"))
                    .unwrap_or_default();
                let at = inst.map_or_else(|| "open".to_owned(), |i| format!("open instance `{i}`"));
                out.push_str(&format!(
                    "  {at}{title}; usable now: {}\n",
                    or_none(visible_tools(snap, ts, inst))
                ));
            }
        }
        if toolset.is_none() {
            let loose: Vec<String> = snap
                .tools()
                .iter()
                .filter(|t| {
                    t.toolset.is_none() && t.presence == mcpl_host::controller::Presence::Dynamic
                })
                .filter(|t| snap.visible(&t.tool.name, None))
                .map(|t| t.tool.name.clone())
                .collect();
            if !loose.is_empty() {
                out.push_str(&format!(
                    "- other dynamic tools usable now: {}\n",
                    loose.join(", ")
                ));
            }
        }
    }
    out.trim_end().to_owned()
}

fn or_none(v: Vec<String>) -> String {
    if v.is_empty() {
        "none".to_owned()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn h71_first_sentence_is_cut_on_a_char_boundary_and_only_from_strings() {
        assert_eq!(
            first_sentence(Some(&json!("Play a move. Only legal ones."))).as_deref(),
            Some("Play a move.")
        );
        assert_eq!(first_sentence(Some(&json!(42))), None);
        let long = "é".repeat(400);
        assert_eq!(
            first_sentence(Some(&json!(long))).unwrap().chars().count(),
            SENTENCE
        );
    }
}
