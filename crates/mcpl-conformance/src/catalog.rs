//! What the suite checks: the 38 vectors of RFC-014 §13 and the host requirements that can be
//! seen on the wire, each with its id, a title and the rule it checks.
//!
//! The rule text is our short restatement with its section; RFC-014 §13 and
//! HOST-REQUIREMENTS.md hold the full wording.

/// Which side of a connection a check examines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The server under test; the suite plays the host.
    Server,
    /// The host under test; the suite plays the server (and the agent).
    Host,
}

impl Side {
    /// `"server"` or `"host"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Host => "host",
        }
    }
}

/// One rule the suite can check: an RFC-014 §13 vector (`v01`..`v38`) or a host requirement
/// (`h12`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The check id: `v06`, `h28`.
    pub id: &'static str,
    /// A short title.
    pub title: &'static str,
    /// The rule, restated, with its section.
    pub rfc: &'static str,
}

const fn rule(id: &'static str, title: &'static str, rfc: &'static str) -> Rule {
    Rule { id, title, rfc }
}

/// The 38 vectors of RFC-014 §13, in order.
pub const VECTORS: [Rule; 38] = [
    rule(
        "v01",
        "every tool is listed",
        "§13.1, §4.1: a server with hints lists every tool in tools/list, visible or not, to a host with toolHints.",
    ),
    rule(
        "v02",
        "a call's consequences ride in its result",
        "§13.2, §6.2: a call that makes tools visible carries mcpl/hints in its result, and no push follows for it.",
    ),
    rule(
        "v03",
        "a push explains a change",
        "§13.3, §6.2: a push explaining a visibility change carries it in hints, and the host applies it once.",
    ),
    rule(
        "v04",
        "revs are consecutive; a passed rev is ignored",
        "§13.4, §6.1: revs are consecutive across results, pushes and tools/hints; a change with a passed rev is ignored.",
    ),
    rule(
        "v05",
        "instanced opens name the instance",
        "§13.5, §5.2: toolsets/open on a toolset with instances returns an instance name, and calls carry it.",
    ),
    rule(
        "v06",
        "ambiguous calls fail and name the instances",
        "§13.6, §4.3: a call to an instance-bound tool with two instances open and no mcpl/instance fails and names them.",
    ),
    rule(
        "v07",
        "definitions travel without list_changed",
        "§13.7, §6: a definition change to a dynamic tool reaches the host without tools/list_changed.",
    ),
    rule(
        "v08",
        "no hints to a host without toolHints",
        "§13.8, §6.3: a server whose host did not advertise toolHints sends no tools/hints (nor mcpl/hints, nor push hints).",
    ),
    rule(
        "v09",
        "reconnect adopts, never re-opens",
        "§13.9, §5.2: after a reconnect toolsets/list reports an instance the server kept, and the host adopts it rather than opening a second.",
    ),
    rule(
        "v10",
        "undeclared groups are the host's",
        "§13.10, §5.4: for a tool tagged with an undeclared toolset the host never sends toolsets/open, shows it only while it has the group open, and refuses calls while the group is closed.",
    ),
    rule(
        "v11",
        "a refused push's hints still apply",
        "§13.11, §6.1: a refused push's hints are applied, and the server does not restate them.",
    ),
    rule(
        "v12",
        "a skipped rev triggers recovery",
        "§13.12, §6.1: on an ordered transport a skipped rev makes the host re-read toolsets/list and tools/list.",
    ),
    rule(
        "v13",
        "ended records persist and are told once",
        "§13.13, §5.3: an ended record appears in every toolsets/list until it expires, and the agent is told once per id across reconnects.",
    ),
    rule(
        "v14",
        "changes reach the principal's other connections",
        "§13.14, §5.6: a change made on connection A reaches connection B of the same principal as hint changes on B's own rev counter, not as a suggestion.",
    ),
    rule(
        "v15",
        "a moved tool keeps working",
        "§13.15, §4.2: a tool moved between static and dynamic keeps working until the host applies the move, and tools/list shows the move.",
    ),
    rule(
        "v16",
        "close results carry their hints",
        "§13.16, §5.2: a toolsets/close result carries the hints it caused, under the next rev.",
    ),
    rule(
        "v17",
        "re-opening adopts",
        "§13.17, §5.2: re-opening an open instance by name returns adopted: true and changes nothing; options that differ are reported in content.",
    ),
    rule(
        "v18",
        "proposed names are used as given",
        "§13.18, §5.2: a proposed instance name is used as given or the open is refused; no other name is substituted.",
    ),
    rule(
        "v19",
        "deferred pushes apply on read",
        "§13.19, §6.1: hints on a push that is coalesced or deferred apply when the push is read.",
    ),
    rule(
        "v20",
        "a definition contributes only description, schema, annotations",
        "§13.20, §6: a hint definition with a different mcpl/class or name contributes only its description, schema and annotations.",
    ),
    rule(
        "v21",
        "a toolset tool is never static",
        "§13.21, §4.1: mcpl/toolset together with mcpl/presence static yields a dynamic tool kept out of the header.",
    ),
    rule(
        "v22",
        "default-open toolsets",
        "§13.22, §5.1: a default: open toolset is listed open without any open request, and opening it adopts.",
    ),
    rule(
        "v23",
        "per-instance definitions stay per instance",
        "§13.23, §5.5: a per-instance definition affects only its own instance, and calls are checked against that instance's definition.",
    ),
    rule(
        "v24",
        "undecided pushes apply before the next rev",
        "§13.24, §6.1: the hints of an undecided push apply when read, before a result with the next rev.",
    ),
    rule(
        "v25",
        "recovery converges without a baseline",
        "§13.25, §6.1: recovery reads made while changes are in flight still converge, with no common baseline.",
    ),
    rule(
        "v26",
        "compatibility tools choose the instance",
        "§13.26, §11: a host without toolHints opens two instances through the compatibility tools, chooses one, and its calls go there.",
    ),
    rule(
        "v27",
        "which results take a rev",
        "§13.27, §6.1: toolsets/open, close and list results with hints take the next rev; tools/list takes none, and its mcpl/rev is the last rev taken.",
    ),
    rule(
        "v28",
        "a cancelled call's consequences go as tools/hints",
        "§13.28, §6.1: a cancelled call that gets no result sends its consequences as tools/hints.",
    ),
    rule(
        "v29",
        "hinted pushes are never retried",
        "§13.29, §6.1: a push carrying hints is not retried, and the hints of a duplicate eventId are ignored.",
    ),
    rule(
        "v30",
        "toolsets/list without declared toolsets",
        "§13.30, §5.3: a toolHints server with no declared toolsets answers toolsets/list with an empty open and states its toolset-less dynamic tools.",
    ),
    rule(
        "v31",
        "removing a declaration closes its instances",
        "§13.31, §5.1: removing a toolset from the manifest closes its instances with hints and ended records, and yields the receipt surface-changed/applied.",
    ),
    rule(
        "v32",
        "another host of the principal sees the end",
        "§13.32, §5.3: host B reconnects after a game ended while host A (same principal) was connected, and B's toolsets/list has the ended record.",
    ),
    rule(
        "v33",
        "no pushEvents grant: tools/hints",
        "§13.33, §6.2: without a pushEvents grant, something else's consequences arrive as tools/hints.",
    ),
    rule(
        "v34",
        "bad instance names are refused",
        "§13.34, §5.1: an instance name that breaks the grammar is refused, and nothing opens.",
    ),
    rule(
        "v35",
        "late results still apply",
        "§13.35, §6.1: hints in a result that arrives after the host's timeout are applied.",
    ),
    rule(
        "v36",
        "Streamable HTTP holds an early rev",
        "§13.36, §6.1: on Streamable HTTP rev n+1 arrives before rev n; the host holds it, applies n then n+1, and does not recover.",
    ),
    rule(
        "v37",
        "an empty statement still takes a rev",
        "§13.37, §5.3: with nothing visible, toolsets/list still carries hints with a rev, which clears stale visibility.",
    ),
    rule(
        "v38",
        "hint-less hosts: flat toolsets are implicitly open",
        "§13.38, §6.3: for a host without toolHints, tools of a toolset without instances work without an open, and the tailored list has no hint _meta.",
    ),
];

/// The host requirements (HOST-REQUIREMENTS.md) the host suite checks on the wire, beyond the
/// vectors.
pub const HOST_RULES: [Rule; 8] = [
    rule(
        "h01",
        "tools/list pages are followed",
        "H01: the host follows nextCursor until a page has none.",
    ),
    rule(
        "h12",
        "no toolsets/* to a hint-less server",
        "H12, §6.3: a host sends no toolsets/* request to a server that did not advertise toolHints.",
    ),
    rule(
        "h18",
        "an unknown tool in hints triggers recovery",
        "H18, App. B.20: a hint entry naming a tool the latest list lacks makes the host re-read tools/list, then toolsets/list.",
    ),
    rule(
        "h25",
        "a failed recovery list still reads toolsets/list",
        "H25: when a recovery's tools/list fails, the host still reads toolsets/list and later retries.",
    ),
    rule(
        "h28",
        "connect reads tools/list then toolsets/list",
        "H28, §5.3: on every connect the host reads tools/list and then toolsets/list, and re-opens nothing itself.",
    ),
    rule(
        "h29",
        "no toolsets/open for an undeclared group",
        "H29, §5.4: the host never sends toolsets/open or close for an undeclared toolset.",
    ),
    rule(
        "h59",
        "opens propose an instance name",
        "H59, §5.2: for an instanced toolset the host's open proposes a grammatical instance name, so a retry adopts.",
    ),
    rule(
        "h64",
        "mcpl/instance exactly for instanced toolsets",
        "H64, §4.3, §8.4: act sets mcpl/instance for instanced toolsets and never for others.",
    ),
];

/// Looks a rule up by id (`"v06"`, `"h28"`).
pub fn find(id: &str) -> Option<&'static Rule> {
    VECTORS.iter().chain(HOST_RULES.iter()).find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s13_vectors_are_numbered_one_to_thirty_eight() {
        for (i, v) in VECTORS.iter().enumerate() {
            assert_eq!(v.id, format!("v{:02}", i + 1));
            assert!(v.rfc.starts_with(&format!("§13.{}", i + 1)), "{}", v.id);
        }
    }

    #[test]
    fn ids_are_unique_and_findable() {
        let mut ids: Vec<_> = VECTORS.iter().chain(&HOST_RULES).map(|r| r.id).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert_eq!(find("h28").map(|r| r.id), Some("h28"));
        assert!(find("v39").is_none());
    }
}
