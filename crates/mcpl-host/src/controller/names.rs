//! Reading the toolset and instance names a server sends.
//!
//! The rule: a name off the wire that breaks the RFC-014 grammar (§5.1, Appendix B.1) is not a
//! name. The entry that carries it is skipped whole, as any other malformed entry is, and the
//! rest of the message still applies; a bad instance name reads as no instance, so an entry
//! for an instanced toolset that names one is skipped by the instance rule (§5.5). Nothing the
//! controller keeps is a raw string: the snapshot and its changes hold [`ToolsetName`] and
//! [`InstanceName`] only.

use crate::names::{InstanceName, ToolsetName};

/// A server-sent toolset name, or `None` when it breaks the grammar.
pub(crate) fn toolset(s: &str) -> Option<ToolsetName> {
    ToolsetName::parse(s).ok()
}

/// A server-sent instance name, or `None` when there is none or it breaks the grammar.
pub(crate) fn instance(s: Option<&str>) -> Option<InstanceName> {
    s.and_then(|n| InstanceName::parse(n).ok())
}

#[cfg(test)]
mod tests {
    use super::{instance, toolset};

    #[test]
    fn s5_1_name_grammar() {
        assert!(toolset("vs-bot").is_some());
        assert!(toolset("a").is_some());
        assert!(toolset("").is_none());
        assert!(toolset("-a").is_none());
        assert!(toolset("a b").is_none());
        assert!(toolset(&"a".repeat(33)).is_none());
        assert!(toolset(&"a".repeat(32)).is_some());
        assert_eq!(instance(Some("g1")).unwrap(), "g1");
        assert_eq!(instance(Some("g 1")), None);
        assert_eq!(instance(None), None);
    }
}
