//! Event tags (MCPL §16): namespaced labels on `push/event` and `channels/incoming`.
//!
//! A tag is `namespace:value` or, faceted, `namespace:key=value`. Tags are a set. `chat:` is
//! the spec's core vocabulary, `mcpl:` is reserved for future spec use, and RFC-014 reserves
//! `surface:` (no values yet). Tags are untrusted claims, never authority (§16.6): they
//! decide treatment only after the grant has admitted the message.

use std::collections::BTreeSet;

/// The core vocabulary's namespace (§16.2).
pub const CHAT_NAMESPACE: &str = "chat";
/// Reserved for future spec use (§16.1).
pub const MCPL_NAMESPACE: &str = "mcpl";
/// Reserved by RFC-014 (§16.1 as amended; App. B.17: emit none yet).
pub const SURFACE_NAMESPACE: &str = "surface";
/// Every reserved namespace: producers use `chat:` only for core tags and never emit the
/// others.
pub const RESERVED_NAMESPACES: &[&str] = &[CHAT_NAMESPACE, MCPL_NAMESPACE, SURFACE_NAMESPACE];

/// The core `chat:` tags of §16.2.
pub const CORE_CHAT_TAGS: &[&str] = &[
    "chat:addressed",
    "chat:mention",
    "chat:reply",
    "chat:dm",
    "chat:ambient",
    "chat:broadcast",
    "chat:to-self",
    "chat:from-human",
    "chat:from-bot",
    "chat:from-self",
    "chat:from-agent",
    "chat:edited",
    "chat:deleted",
    "chat:reaction",
    "chat:reaction-remove",
    "chat:has-image",
    "chat:has-audio",
    "chat:has-file",
    "chat:has-link",
    "chat:command",
    "chat:private",
    "chat:group",
    "chat:thread",
];

/// A tag that is not well formed, or that a producer may not emit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagError {
    /// No `namespace:` prefix (§16.1: a bare `"mention"` is not a tag).
    #[error("tag `{0}` has no namespace; tags are `namespace:value`")]
    NotNamespaced(String),
    /// The namespace has a character outside `[A-Za-z0-9._-]`.
    #[error("tag `{0}` has a namespace outside [A-Za-z0-9._-]")]
    BadNamespace(String),
    /// The value (or a facet's key or value) is empty or holds whitespace or a control
    /// character.
    #[error("tag `{0}` has an empty value or one with whitespace or control characters")]
    BadValue(String),
    /// A producer used `mcpl:` or `surface:`, which are reserved.
    #[error("tag `{tag}` uses the reserved namespace `{namespace}:`")]
    Reserved {
        /// The tag.
        tag: String,
        /// Its namespace.
        namespace: String,
    },
    /// A producer used a `chat:` tag outside the core vocabulary.
    #[error("tag `{0}` is not in the core `chat:` vocabulary")]
    UnknownCoreTag(String),
    /// A producer listed the same tag twice (§16.1: tags are a set).
    #[error("tag `{0}` is listed twice; tags are a set")]
    Duplicate(String),
}

/// A tag split into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag<'a> {
    /// The namespace, before the first `:`.
    pub namespace: &'a str,
    /// A faceted tag's key, before the first `=` of the rest.
    pub key: Option<&'a str>,
    /// The value.
    pub value: &'a str,
}

impl<'a> Tag<'a> {
    /// Splits and checks `tag` (§16.1). Any namespace is accepted: consumers tolerate
    /// unknown tags.
    pub fn parse(tag: &'a str) -> Result<Tag<'a>, TagError> {
        let (namespace, rest) = tag
            .split_once(':')
            .ok_or_else(|| TagError::NotNamespaced(tag.to_owned()))?;
        let namespace_ok = !namespace.is_empty()
            && namespace
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !namespace_ok {
            return Err(TagError::BadNamespace(tag.to_owned()));
        }
        let part_ok =
            |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control());
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (Some(k), v),
            None => (None, rest),
        };
        if !part_ok(value) || key.is_some_and(|k| !part_ok(k)) {
            return Err(TagError::BadValue(tag.to_owned()));
        }
        Ok(Tag {
            namespace,
            key,
            value,
        })
    }

    /// Whether the tag's namespace is reserved ([`RESERVED_NAMESPACES`]).
    pub fn is_reserved(&self) -> bool {
        RESERVED_NAMESPACES.contains(&self.namespace)
    }
}

/// Checks a tag a producer is about to emit: well formed, not in `mcpl:` or `surface:`, and,
/// in `chat:`, one of the core tags.
pub fn check_emitted_tag(tag: &str) -> Result<(), TagError> {
    let parsed = Tag::parse(tag)?;
    match parsed.namespace {
        CHAT_NAMESPACE if !CORE_CHAT_TAGS.contains(&tag) => {
            Err(TagError::UnknownCoreTag(tag.to_owned()))
        }
        MCPL_NAMESPACE | SURFACE_NAMESPACE => Err(TagError::Reserved {
            tag: tag.to_owned(),
            namespace: parsed.namespace.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The tag set a consumer treats (§16.3): deduplicated, the core closure applied
/// (`mention` and `reply` imply `addressed`; `dm` implies `addressed` and `private`), and
/// `chat:ambient` dropped when `chat:addressed` results. No producer ontology is consulted.
pub fn close_tags<I, S>(tags: I) -> BTreeSet<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut set: BTreeSet<String> = tags.into_iter().map(Into::into).collect();
    let implied: &[(&str, &[&str])] = &[
        ("chat:mention", &["chat:addressed"]),
        ("chat:reply", &["chat:addressed"]),
        ("chat:dm", &["chat:addressed", "chat:private"]),
    ];
    for (from, to) in implied {
        if set.contains(*from) {
            set.extend(to.iter().map(|t| (*t).to_owned()));
        }
    }
    if set.contains("chat:addressed") {
        set.remove("chat:ambient");
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s16_1_tags_are_namespaced() {
        assert_eq!(
            Tag::parse("chat:mention").unwrap(),
            Tag {
                namespace: "chat",
                key: None,
                value: "mention"
            }
        );
        assert_eq!(
            Tag::parse("demo:urgency=high").unwrap(),
            Tag {
                namespace: "demo",
                key: Some("urgency"),
                value: "high"
            }
        );
        assert_eq!(
            Tag::parse("mention"),
            Err(TagError::NotNamespaced("mention".into()))
        );
        assert!(matches!(Tag::parse(":x"), Err(TagError::BadNamespace(_))));
        assert!(matches!(
            Tag::parse("a b:x"),
            Err(TagError::BadNamespace(_))
        ));
        assert!(matches!(Tag::parse("demo:"), Err(TagError::BadValue(_))));
        assert!(matches!(Tag::parse("demo:=x"), Err(TagError::BadValue(_))));
        assert!(matches!(Tag::parse("demo:a b"), Err(TagError::BadValue(_))));
    }

    #[test]
    fn s16_1_reserved_namespaces_and_rfc014_surface() {
        assert!(Tag::parse("surface:anything").unwrap().is_reserved());
        assert!(Tag::parse("mcpl:x").unwrap().is_reserved());
        assert!(!Tag::parse("arcade:move").unwrap().is_reserved());
        assert!(check_emitted_tag("chat:dm").is_ok());
        assert!(check_emitted_tag("arcade:move").is_ok());
        assert!(matches!(
            check_emitted_tag("chat:whisper"),
            Err(TagError::UnknownCoreTag(_))
        ));
        assert!(matches!(
            check_emitted_tag("mcpl:x"),
            Err(TagError::Reserved { .. })
        ));
        let err = check_emitted_tag("surface:x").unwrap_err();
        assert!(err.to_string().contains("surface:"));
    }

    #[test]
    fn s16_3_core_closure_and_ambient_drop() {
        let closed = close_tags(["chat:dm", "chat:ambient", "arcade:move", "chat:dm"]);
        let want: BTreeSet<String> = ["arcade:move", "chat:addressed", "chat:dm", "chat:private"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(closed, want);
        let ambient = close_tags(["chat:ambient", "chat:from-bot"]);
        assert!(ambient.contains("chat:ambient"));
        assert!(close_tags(["chat:reply"]).contains("chat:addressed"));
    }
}
