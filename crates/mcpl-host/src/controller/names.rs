//! The RFC-014 name check for toolset and instance names a peer sends.

/// True when `s` fits `^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$` (§5.1, Appendix B.1).
pub(crate) fn is_name(s: &str) -> bool {
    mcpl_protocol::rfc014::check_name("toolset", s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::is_name;

    #[test]
    fn s5_1_name_grammar() {
        assert!(is_name("vs-bot"));
        assert!(is_name("a"));
        assert!(!is_name(""));
        assert!(!is_name("-a"));
        assert!(!is_name("a b"));
        assert!(!is_name(&"a".repeat(33)));
        assert!(is_name(&"a".repeat(32)));
    }
}
