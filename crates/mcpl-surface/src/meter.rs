//! The cache meter: what two other kinds of host would have re-sent to the model in the same
//! session, measured from the same states the surface saw.
//!
//! - **Plain MCP host.** Its server lists whatever is usable now and sends
//!   `tools/list_changed` on every change; the host re-lists and rebuilds the model's tool
//!   list each time. Its list is every static tool plus every visible dynamic tool, one per
//!   open instance, with that instance's current definition.
//! - **Dynamic-toolsets host** (as GitHub's MCP server did): enabling a group adds all its
//!   tools, as declared, to the list, and nothing is ever removed. Its list grows once per
//!   toolset first opened.
//!
//! Each baseline counts how often its list changed after the first publication and the bytes
//! of the full list re-sent each time (the prompt-cache rebuild cost). The surface host's own
//! list is counted by the front.

use std::collections::{BTreeMap, BTreeSet};

use mcpl_host::Presenter;
use mcpl_host::controller::{Presence, Snapshot};
use mcpl_host::{ServerName, ToolsetName};
use serde_json::{Value, json};

/// One baseline's tally.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineTally {
    /// The size of its list when first published, in bytes.
    pub first_bytes: u64,
    /// Times its model-facing list changed after that.
    pub changes: u64,
    /// Bytes of tool list re-sent for those changes (the whole list each time).
    pub resent_bytes: u64,
    last: Option<String>,
}

impl BaselineTally {
    fn observe(&mut self, list: &Value) {
        let text = list.to_string();
        match &self.last {
            None => self.first_bytes = text.len() as u64,
            Some(last) if *last == text => return,
            Some(_) => {
                self.changes += 1;
                self.resent_bytes += text.len() as u64;
            }
        }
        self.last = Some(text);
    }
}

/// Both baselines, sampled after every change the surface applies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Meter {
    started: bool,
    pub(crate) plain: BaselineTally,
    pub(crate) groups: BaselineTally,
    enabled: BTreeSet<(ServerName, ToolsetName)>,
}

impl Meter {
    /// Starts counting from the states at the surface's first publication.
    pub(crate) fn start(&mut self, snaps: &BTreeMap<&ServerName, &Snapshot>) {
        if !self.started {
            self.started = true;
            self.sample(snaps);
        }
    }

    /// Samples both baselines' lists; a list that differs from the last counts as a change.
    pub(crate) fn sample(&mut self, snaps: &BTreeMap<&ServerName, &Snapshot>) {
        if !self.started {
            return;
        }
        let multi = snaps.len() > 1;
        let prefix = |server: &str, rest: &str| {
            if multi {
                format!("{server}__{rest}")
            } else {
                rest.to_owned()
            }
        };
        let mut plain = Vec::new();
        let mut groups = Vec::new();
        for (server, snap) in snaps {
            for t in snap.tools() {
                if t.presence == Presence::Static {
                    let tool = json!({"name": prefix(server, &t.tool.name),
                        "description": t.tool.description, "inputSchema": t.tool.input_schema});
                    plain.push(tool.clone());
                    groups.push(tool);
                }
            }
            for ((toolset, instance), open) in snap.open() {
                self.enabled.insert(((*server).clone(), toolset.clone()));
                for name in open.tools.keys() {
                    if !snap.visible(name, instance.as_ref()) {
                        continue;
                    }
                    let Some(def) = snap.definition(name, instance.as_ref()) else {
                        continue;
                    };
                    let scoped = match instance {
                        Some(i) => format!("{toolset}__{i}__{name}"),
                        None => format!("{toolset}__{name}"),
                    };
                    plain.push(json!({"name": prefix(server, &scoped),
                        "description": def.description, "inputSchema": def.input_schema}));
                }
            }
            for group in snap.groups_open() {
                self.enabled.insert(((*server).clone(), group.clone()));
            }
            for t in snap.tools() {
                let Some(ts) = &t.toolset else { continue };
                if self.enabled.contains(&((*server).clone(), ts.clone())) {
                    groups.push(
                        json!({"name": prefix(server, &format!("{ts}__{}", t.tool.name)),
                        "description": t.tool.description, "inputSchema": t.tool.input_schema}),
                    );
                }
            }
        }
        self.plain.observe(&Value::Array(plain));
        self.groups.observe(&Value::Array(groups));
    }
}

/// Every server's latest snapshot the presenter holds.
pub(crate) fn snapshots(p: &Presenter) -> BTreeMap<&ServerName, &Snapshot> {
    p.servers()
        .into_iter()
        .filter_map(|s| p.snapshot(s).map(|snap| (s, snap)))
        .collect()
}

/// What the front has published: the cache report's first column. Whether the list changed
/// is the presenter's count ([`Presenter::list_changes`]), the one source: a list published
/// after that count grew is a change, and the whole list is re-sent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    pub(crate) first_bytes: u64,
    pub(crate) lists: u64,
    pub(crate) changes: u64,
    pub(crate) resent_bytes: u64,
}

impl Published {
    /// Counts one published list of `bytes` bytes, given the presenter's count of list
    /// changes when it was read; true when it is the first.
    pub(crate) fn observe(&mut self, bytes: u64, list_changes: u64) -> bool {
        self.lists += 1;
        if self.lists == 1 {
            self.first_bytes = bytes;
            self.changes = list_changes;
            return true;
        }
        if list_changes > self.changes {
            self.changes = list_changes;
            self.resent_bytes += bytes;
        }
        false
    }
}

/// The surface's list and both baselines, under one lock.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) published: Published,
    pub(crate) meter: Meter,
}

impl Counters {
    pub(crate) fn report(&self) -> CacheReport {
        CacheReport {
            surface_bytes: self.published.first_bytes,
            surface_changes: self.published.changes,
            surface_resent_bytes: self.published.resent_bytes,
            surface_lists: self.published.lists,
            plain: self.meter.plain.clone(),
            groups: self.meter.groups.clone(),
        }
    }
}

/// The cache report: the surface's own tool-list changes against both baselines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheReport {
    /// Bytes of the surface's tool list as first published.
    pub surface_bytes: u64,
    /// Times the surface's model-facing list changed (the contract: 0).
    pub surface_changes: u64,
    /// Bytes of tool list the surface re-sent.
    pub surface_resent_bytes: u64,
    /// Times the client asked for the tool list.
    pub surface_lists: u64,
    /// A plain MCP host that re-lists on every `tools/list_changed`.
    pub plain: BaselineTally,
    /// A dynamic-toolsets host that adds a group's tools when it is enabled.
    pub groups: BaselineTally,
}

impl CacheReport {
    /// Renders the report as a small table with ratios.
    pub fn render(&self) -> String {
        let ratio = |resent: u64| {
            if self.surface_resent_bytes == 0 {
                if resent == 0 {
                    "same".to_owned()
                } else {
                    "∞ (the surface re-sent nothing)".to_owned()
                }
            } else {
                format!("{:.1}x", resent as f64 / self.surface_resent_bytes as f64)
            }
        };
        let rebuilds = |t: &BaselineTally| {
            if self.surface_bytes == 0 {
                String::new()
            } else {
                format!(
                    " (= {:.1}x the surface's whole list)",
                    t.resent_bytes as f64 / self.surface_bytes as f64
                )
            }
        };
        let mut out = String::new();
        out.push_str("Cache report (model-facing tool list)\n");
        out.push_str(&format!(
            "  surface host (ours)     : {:>4} changes, {:>8} bytes re-sent (its list: {} bytes, read {} times)\n",
            self.surface_changes, self.surface_resent_bytes, self.surface_bytes, self.surface_lists
        ));
        out.push_str(&format!(
            "  plain MCP host          : {:>4} changes, {:>8} bytes re-sent{}  vs ours: {}\n",
            self.plain.changes,
            self.plain.resent_bytes,
            rebuilds(&self.plain),
            ratio(self.plain.resent_bytes)
        ));
        out.push_str(&format!(
            "  dynamic-toolsets host   : {:>4} changes, {:>8} bytes re-sent{}  vs ours: {}\n",
            self.groups.changes,
            self.groups.resent_bytes,
            rebuilds(&self.groups),
            ratio(self.groups.resent_bytes)
        ));
        if self.groups.resent_bytes > 0 {
            out.push_str(&format!(
                "  plain / dynamic-toolsets: {:.1}x the bytes\n",
                self.plain.resent_bytes as f64 / self.groups.resent_bytes as f64
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{in_play, listed};

    #[test]
    fn the_plain_baseline_lists_an_open_instances_visible_tools_only() {
        let c = in_play("arcade");
        let snap = c.snapshot();
        let mut m = Meter::default();
        m.start(&BTreeMap::from([(snap.server(), snap)]));
        let text = m.plain.last.clone().expect("a list");
        assert!(text.contains(r#""name":"game__g1__play""#), "{text}");
        assert!(
            !text.contains("pass"),
            "an invisible tool was listed: {text}"
        );
    }

    #[test]
    fn baseline_names_carry_the_server_prefix_only_when_there_are_several_servers() {
        let (a, b) = (listed("a", false), listed("b", false));
        let (a, b) = (a.snapshot(), b.snapshot());
        let mut one = Meter::default();
        one.start(&BTreeMap::from([(a.server(), a)]));
        let text = one.plain.last.clone().expect("a list");
        assert!(text.contains(r#""name":"t""#), "{text}");
        let mut two = Meter::default();
        two.start(&BTreeMap::from([(a.server(), a), (b.server(), b)]));
        let text = two.plain.last.clone().expect("a list");
        assert!(
            text.contains(r#""name":"a__t""#) && text.contains(r#""name":"b__t""#),
            "{text}"
        );
        assert!(!text.contains(r#""name":"t""#), "{text}");
    }

    #[test]
    fn the_published_count_follows_the_presenters_and_resends_the_whole_list() {
        let mut p = Published::default();
        assert!(p.observe(100, 0), "the first list");
        assert!(!p.observe(100, 0));
        assert_eq!(
            (p.lists, p.changes, p.resent_bytes, p.first_bytes),
            (2, 0, 0, 100)
        );
        assert!(!p.observe(120, 1), "the presenter counted a change");
        assert!(!p.observe(120, 1), "and it is counted once");
        assert_eq!((p.lists, p.changes, p.resent_bytes), (4, 1, 120));
    }

    #[test]
    fn a_tally_counts_changes_after_the_first_list_only() {
        let mut t = BaselineTally::default();
        t.observe(&json!([1]));
        t.observe(&json!([1]));
        assert_eq!((t.changes, t.resent_bytes, t.first_bytes), (0, 0, 3));
        t.observe(&json!([1, 2]));
        assert_eq!((t.changes, t.resent_bytes), (1, 5));
    }
}
