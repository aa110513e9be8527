//! News: what the agent is owed between meta-tool results, rendered as concise text.
//!
//! Changes, events, suggestions and link status queue here in read order (H41). Each
//! meta-tool result takes the whole queue: first the changes its own command caused, then
//! everything else that arrived since the last result. Server-written text (titles, reasons,
//! event content) is always prefixed with the server's name in brackets (§10, H54).

use std::collections::{BTreeMap, BTreeSet};

use mcpl_host::controller::{Carrier, Change, ChangeItem, CloseCause, Notice, Pending};
use serde_json::Value;

/// One thing queued for the agent.
#[derive(Debug, Clone)]
pub(crate) enum NewsItem {
    /// A controller change.
    Change {
        /// The server it came from.
        server: String,
        /// What changed.
        change: Change,
    },
    /// A suggestion (§7: it opens nothing by itself).
    Notice {
        /// The server it came from.
        server: String,
        /// The suggestion.
        notice: Notice,
    },
    /// A pushed event.
    Event {
        /// The server it came from.
        server: String,
        /// The `push/event` params.
        params: Value,
    },
    /// The surface's own word about a link (lost, reconnected).
    Status {
        /// The server it is about.
        server: String,
        /// What happened.
        text: String,
    },
}

/// The queue, and the ended ids already told (H48: once per server and id).
#[derive(Debug, Default)]
pub(crate) struct News {
    items: std::collections::VecDeque<NewsItem>,
    told: BTreeMap<String, BTreeSet<String>>,
    dropped: usize,
}

/// The most items kept for an agent that does not call: older ones are dropped, and the
/// next result says how many (H73: output is bounded).
const CAP: usize = 512;

/// Rendered news for one result.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// Changes the result's own command caused.
    pub(crate) caused: Vec<String>,
    /// Everything else since the last result.
    pub(crate) since: Vec<String>,
}

impl Rendered {
    /// The text appended to a result: empty when there is nothing to tell.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        if !self.caused.is_empty() {
            out.push_str("\nChanges:");
            for l in &self.caused {
                out.push_str("\n- ");
                out.push_str(l);
            }
        }
        if !self.since.is_empty() {
            out.push_str("\nNews since your last call:");
            for l in &self.since {
                out.push_str("\n- ");
                out.push_str(l);
            }
        }
        out
    }
}

impl News {
    /// Queues an item.
    pub(crate) fn push(&mut self, item: NewsItem) {
        if self.items.len() >= CAP {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(item);
    }

    /// Takes the whole queue; changes carried by the result of `own` are listed first.
    pub(crate) fn take(&mut self, own: Option<(&str, Pending)>) -> Rendered {
        let mut out = Rendered::default();
        if self.dropped > 0 {
            let n = std::mem::take(&mut self.dropped);
            out.since.push(format!(
                "({n} older news items were dropped; toolsets_look shows the present)"
            ));
        }
        for item in std::mem::take(&mut self.items) {
            match item {
                NewsItem::Change { server, change } => {
                    let mine = matches!(
                        (own, &change.carrier),
                        (Some((s, p)), Carrier::Result { pending, .. }) if s == server && *pending == p
                    );
                    let lines = self.change_lines(&server, &change);
                    if mine {
                        out.caused.extend(lines);
                    } else {
                        out.since.extend(lines);
                    }
                }
                NewsItem::Notice { server, notice } => {
                    if let Notice::Suggestion { entry, .. } = notice {
                        let action = serde_json::to_value(entry.action)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_else(|| "open".to_owned());
                        let place = place(&entry.toolset, entry.instance.as_deref());
                        let why = entry.reason.map(|r| format!(": {r}")).unwrap_or_default();
                        out.since.push(format!(
                            "[{server}] suggests you {action} {place}{why} (nothing was done; use toolsets_{action} to agree)"
                        ));
                    }
                }
                NewsItem::Event { server, params } => out.since.push(event_text(&server, &params)),
                NewsItem::Status { server, text } => out.since.push(format!("{server}: {text}")),
            }
        }
        out
    }

    fn tell_ended(&mut self, server: &str, id: &str) -> bool {
        self.told
            .entry(server.to_owned())
            .or_default()
            .insert(id.to_owned())
    }

    fn change_lines(&mut self, server: &str, change: &Change) -> Vec<String> {
        #[derive(Default)]
        struct Group {
            shown: Vec<String>,
            hidden: Vec<String>,
            updated: Vec<String>,
        }
        let mut lines = Vec::new();
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for item in &change.items {
            match item {
                ChangeItem::Opened {
                    toolset,
                    instance,
                    title,
                } => {
                    let t = title
                        .as_ref()
                        .map(|t| format!(" “{t}”"))
                        .unwrap_or_default();
                    lines.push(format!(
                        "[{server}] {} is open{t}",
                        place(toolset, instance.as_deref())
                    ));
                }
                ChangeItem::Closed {
                    toolset,
                    instance,
                    cause,
                    reason,
                    ended_id,
                } => {
                    if let Some(id) = ended_id {
                        if !self.tell_ended(server, id) {
                            continue;
                        }
                    }
                    let at = place(toolset, instance.as_deref());
                    let why = reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default();
                    lines.push(match cause {
                        CloseCause::EndedWhileAway => format!(
                            "[{server}] {at} ended while the connection was down (reason unknown)"
                        ),
                        CloseCause::DeclarationRemoved => {
                            format!("[{server}] {at} closed: the server no longer declares it")
                        }
                        _ => format!("[{server}] {at} closed{why}"),
                    });
                }
                ChangeItem::Ended {
                    id,
                    toolset,
                    instance,
                    reason,
                } if self.tell_ended(server, id) => {
                    let why = reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default();
                    let at = place(toolset, instance.as_deref());
                    lines.push(format!("[{server}] {at} ended{why}"));
                }
                ChangeItem::Retitled {
                    toolset,
                    instance,
                    title,
                } => {
                    let at = place(toolset, instance.as_deref());
                    lines.push(format!("[{server}] {at} is now titled “{title}”"));
                }
                ChangeItem::Visibility {
                    tool,
                    toolset,
                    instance,
                    visible,
                } => {
                    let key = toolset
                        .as_deref()
                        .map_or_else(|| "tools".to_owned(), |t| place(t, instance.as_deref()));
                    let g = groups.entry(key).or_default();
                    if *visible {
                        &mut g.shown
                    } else {
                        &mut g.hidden
                    }
                    .push(tool.clone());
                }
                ChangeItem::Redefined { tool, instance } => {
                    let key = instance
                        .as_deref()
                        .map_or_else(|| "tools".to_owned(), |i| format!("…/{i}"));
                    groups.entry(key).or_default().updated.push(tool.clone());
                }
                ChangeItem::PresenceListed { tool, now_static } => {
                    let to = if *now_static { "static" } else { "dynamic" };
                    lines.push(format!(
                        "[{server}] `{tool}` is now {to}; it stays where it is in your tool list until the next session"
                    ));
                }
                _ => {}
            }
        }
        // A redefinition is keyed by instance only; fold it into that instance's group.
        let keys: Vec<String> = groups.keys().cloned().collect();
        for k in keys {
            if let Some(inst) = k.strip_prefix("…/") {
                let suffix = format!("/{inst}");
                if let Some(target) = groups.keys().find(|g| g.ends_with(&suffix)).cloned() {
                    if let Some(g) = groups.remove(&k) {
                        groups.entry(target).or_default().updated.extend(g.updated);
                    }
                }
            }
        }
        for (at, g) in groups {
            let mut parts = Vec::new();
            if !g.shown.is_empty() {
                parts.push(format!("usable now: {}", g.shown.join(", ")));
            }
            if !g.hidden.is_empty() {
                parts.push(format!("not usable now: {}", g.hidden.join(", ")));
            }
            if !g.updated.is_empty() {
                parts.push(format!("new arguments: {}", g.updated.join(", ")));
            }
            match at.strip_prefix("…/") {
                // A redefinition alone: the change names the instance, not its toolset.
                Some(inst) => lines.push(format!(
                    "[{server}] new arguments for {} in instance `{inst}`",
                    g.updated.join(", ")
                )),
                None => lines.push(format!("[{server}] {at}: {}", parts.join("; "))),
            }
        }
        lines
    }
}

/// `toolset` or `toolset/instance`.
pub(crate) fn place(toolset: &str, instance: Option<&str>) -> String {
    match instance {
        Some(i) => format!("{toolset}/{i}"),
        None => toolset.to_owned(),
    }
}

/// A push as one line: `[server · toolset/instance] text`.
pub(crate) fn event_text(server: &str, params: &Value) -> String {
    let text: Vec<&str> = params
        .pointer("/payload/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let at = params
        .get("toolset")
        .and_then(Value::as_str)
        .map(|t| place(t, params.get("instance").and_then(Value::as_str)));
    let body = if text.is_empty() {
        "(an event without text)".to_owned()
    } else {
        text.join(" ")
    };
    match at {
        Some(at) => format!("[{server} · {at}] {body}"),
        None => format!("[{server}] {body}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn change(items: Vec<ChangeItem>) -> Change {
        Change {
            seq: 1,
            carrier: Carrier::Hints,
            items,
        }
    }

    #[test]
    fn h48_an_ended_record_is_told_once_per_id() {
        let mut news = News::default();
        let ended = ChangeItem::Ended {
            id: "e-1".into(),
            toolset: "go".into(),
            instance: Some("g1".into()),
            reason: Some("White wins".into()),
        };
        news.push(NewsItem::Change {
            server: "arcade".into(),
            change: change(vec![ended.clone()]),
        });
        news.push(NewsItem::Change {
            server: "arcade".into(),
            change: change(vec![ended]),
        });
        let r = news.take(None);
        assert_eq!(r.since, vec!["[arcade] go/g1 ended: White wins".to_owned()]);
    }

    #[test]
    fn h73_news_is_bounded_and_says_what_it_dropped() {
        let mut news = News::default();
        for i in 0..CAP + 3 {
            let text = format!("n{i}");
            news.push(NewsItem::Status {
                server: "s".into(),
                text,
            });
        }
        let r = news.take(None);
        assert_eq!(r.since.len(), CAP + 1);
        assert!(
            r.since[0].starts_with("(3 older news items were dropped"),
            "{}",
            r.since[0]
        );
        assert_eq!(r.since[1], "s: n3");
    }

    #[test]
    fn visibility_changes_group_by_instance() {
        let mut news = News::default();
        let vis = |tool: &str, visible| ChangeItem::Visibility {
            tool: tool.into(),
            toolset: Some("go".into()),
            instance: Some("g1".into()),
            visible,
        };
        let items = vec![
            vis("play", true),
            vis("pass", true),
            vis("board", false),
            ChangeItem::Redefined {
                tool: "play".into(),
                instance: Some("g1".into()),
            },
        ];
        news.push(NewsItem::Change {
            server: "arcade".into(),
            change: change(items),
        });
        let r = news.take(None);
        assert_eq!(
            r.since,
            vec!["[arcade] go/g1: usable now: play, pass; not usable now: board; new arguments: play".to_owned()]
        );
    }

    #[test]
    fn s10_event_text_is_attributed_to_its_server() {
        let params = json!({"toolset": "go", "instance": "g1",
            "payload": {"content": [{"type": "text", "text": "White played E5."}]}});
        assert_eq!(
            event_text("arcade", &params),
            "[arcade · go/g1] White played E5."
        );
    }
}
