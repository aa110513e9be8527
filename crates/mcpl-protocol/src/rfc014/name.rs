//! The name grammar of toolsets and instances (§5.1, Appendix B.1).
//!
//! Wire types keep names as plain `String`s, so one bad name never makes a whole message
//! undecodable: a server answers a bad name in `toolsets/open` with `-32602` naming the rule,
//! and a host skips one bad hint entry. The checked newtypes here are what code holds once a
//! name has been accepted.

use serde::{Deserialize, Deserializer, Serialize};
use std::borrow::Borrow;
use std::fmt;

/// The grammar every toolset and instance name must match, as written in errors.
pub const NAME_RULE: &str = "^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$";

/// The longest name the grammar allows, in bytes (all of them ASCII).
pub const NAME_MAX_LEN: usize = 32;

/// A name that breaks [`NAME_RULE`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("{kind} name is empty; names must match {NAME_RULE}")]
    Empty {
        /// `"toolset"` or `"instance"`.
        kind: &'static str,
    },
    /// The name is longer than [`NAME_MAX_LEN`].
    #[error("{kind} name `{name}` is {len} characters long; names must match {NAME_RULE}")]
    TooLong {
        /// `"toolset"` or `"instance"`.
        kind: &'static str,
        /// The offending name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The name holds a character the grammar does not allow, or starts with `_` or `-`.
    #[error("{kind} name `{name}` has `{found}` at position {at}; names must match {NAME_RULE}")]
    BadChar {
        /// `"toolset"` or `"instance"`.
        kind: &'static str,
        /// The offending name.
        name: String,
        /// The first character that breaks the rule.
        found: char,
        /// Its position, counted in characters from 0.
        at: usize,
    },
}

/// Checks `name` against [`NAME_RULE`]; `kind` ("toolset" or "instance") goes into the error.
pub fn check_name(kind: &'static str, name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty { kind });
    }
    for (at, c) in name.chars().enumerate() {
        let ok = c.is_ascii_alphanumeric() || (at > 0 && (c == '_' || c == '-'));
        if !ok {
            return Err(NameError::BadChar {
                kind,
                name: name.to_owned(),
                found: c,
                at,
            });
        }
    }
    // Every accepted character is ASCII, so bytes are characters here.
    if name.len() > NAME_MAX_LEN {
        return Err(NameError::TooLong {
            kind,
            name: name.to_owned(),
            len: name.len(),
        });
    }
    Ok(())
}

macro_rules! checked_name {
    ($(#[$doc:meta])* $ty:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $ty(String);

        impl $ty {
            /// Checks `name` against the grammar ([`NAME_RULE`]); the error names the rule.
            pub fn parse(name: &str) -> Result<Self, NameError> {
                check_name($kind, name)?;
                Ok(Self(name.to_owned()))
            }

            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The name as an owned `String`.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl TryFrom<&str> for $ty {
            type Error = NameError;
            fn try_from(name: &str) -> Result<Self, NameError> {
                Self::parse(name)
            }
        }

        impl TryFrom<String> for $ty {
            type Error = NameError;
            fn try_from(name: String) -> Result<Self, NameError> {
                check_name($kind, &name)?;
                Ok(Self(name))
            }
        }

        impl std::str::FromStr for $ty {
            type Err = NameError;
            fn from_str(name: &str) -> Result<Self, NameError> {
                Self::parse(name)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                Self::try_from(name).map_err(serde::de::Error::custom)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::ops::Deref for $ty {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $ty {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<$ty> for String {
            fn from(name: $ty) -> String {
                name.0
            }
        }

        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

checked_name!(
    /// A toolset name that matches [`NAME_RULE`] (case-sensitive, §5.1).
    ToolsetName,
    "toolset"
);

checked_name!(
    /// An instance name that matches [`NAME_RULE`] (case-sensitive, §5.1).
    InstanceName,
    "instance"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_1_names_that_match_the_grammar() {
        for ok in [
            "a",
            "Z",
            "0",
            "vs-bot",
            "vs_ada",
            "game",
            &"x".repeat(32),
            "A-_9",
        ] {
            assert!(ToolsetName::parse(ok).is_ok(), "{ok}");
            assert!(InstanceName::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn s5_1_names_that_break_the_grammar() {
        let long = "x".repeat(33);
        for bad in [
            "",
            "-a",
            "_a",
            "a b",
            "a.b",
            "é",
            "a/b",
            long.as_str(),
            "vs bot",
        ] {
            let err = InstanceName::parse(bad).expect_err(bad);
            assert!(err.to_string().contains(NAME_RULE), "{err}");
        }
    }

    #[test]
    fn s5_1_error_names_the_value_and_position() {
        let err = InstanceName::parse("vs bot").unwrap_err();
        assert_eq!(
            err.to_string(),
            "instance name `vs bot` has ` ` at position 2; names must match \
             ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
        );
        let err = ToolsetName::parse(&"a".repeat(40)).unwrap_err();
        assert!(err.to_string().starts_with("toolset name `aaaa"), "{err}");
        assert!(err.to_string().contains("40 characters"), "{err}");
    }

    #[test]
    fn s5_1_names_are_case_sensitive() {
        let a = InstanceName::parse("Game").unwrap();
        let b = InstanceName::parse("game").unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn deserialization_checks_the_grammar() {
        let ok: ToolsetName = serde_json::from_str("\"game\"").unwrap();
        assert_eq!(ok, "game");
        let err = serde_json::from_str::<ToolsetName>("\"bad name\"").unwrap_err();
        assert!(err.to_string().contains(NAME_RULE), "{err}");
        assert_eq!(serde_json::to_string(&ok).unwrap(), "\"game\"");
    }
}
