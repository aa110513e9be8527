//! The host's typed ids: server names here, toolset and instance names and revs from
//! `mcpl-protocol` (re-exported so an embedder needs one import).
//!
//! A server name is the host's id for a backing server, chosen by the operator. It follows
//! the RFC-014 name grammar (§5.1) so that `SERVER__tool` stays a valid tool name for every
//! model API.

use std::borrow::Borrow;
use std::fmt;

pub use mcpl_protocol::rfc014::{
    InstanceName, NAME_MAX_LEN, NAME_RULE, NameError, Rev, ToolsetName,
};

/// A server name outside the grammar; the `Display` is the text the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a server name is 1 to 32 letters, digits, `_` or `-`, starting with a letter or digit")]
pub struct BadServerName {
    /// The name as given.
    pub name: String,
}

/// The host's id for a backing server: 1 to 32 ASCII letters, digits, `_` or `-`, starting
/// with a letter or digit (the RFC-014 name grammar).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ServerName(String);

impl ServerName {
    /// Checks `name` against the grammar.
    pub fn parse(name: &str) -> Result<ServerName, BadServerName> {
        if mcpl_protocol::rfc014::check_name("server", name).is_ok() {
            Ok(ServerName(name.to_owned()))
        } else {
            Err(BadServerName {
                name: name.to_owned(),
            })
        }
    }

    /// A name made from free text (a program's file name, a URL's host): the characters the
    /// grammar allows are kept, leading `_` and `-` dropped, the rest cut to 32; `server`
    /// when nothing is left. A name that already fits comes back unchanged.
    pub fn sanitized(raw: &str) -> ServerName {
        let kept: String = raw
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .skip_while(|c| !c.is_ascii_alphanumeric())
            .take(NAME_MAX_LEN)
            .collect();
        if kept.is_empty() {
            ServerName("server".to_owned())
        } else {
            ServerName(kept)
        }
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for ServerName {
    type Err = BadServerName;
    fn from_str(name: &str) -> Result<Self, BadServerName> {
        ServerName::parse(name)
    }
}

impl TryFrom<&str> for ServerName {
    type Error = BadServerName;
    fn try_from(name: &str) -> Result<Self, BadServerName> {
        ServerName::parse(name)
    }
}

impl TryFrom<String> for ServerName {
    type Error = BadServerName;
    fn try_from(name: String) -> Result<Self, BadServerName> {
        ServerName::parse(&name)
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for ServerName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ServerName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ServerName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<ServerName> for String {
    fn from(name: ServerName) -> String {
        name.0
    }
}

impl PartialEq<str> for ServerName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ServerName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl<'de> serde::Deserialize<'de> for ServerName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ServerName::parse(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl ServerName {
        /// `sanitized`, checked against the grammar again.
        fn sanitize_check(raw: &str) -> String {
            let n = ServerName::sanitized(raw);
            assert_eq!(ServerName::parse(n.as_str()).as_ref(), Ok(&n));
            n.into()
        }
    }

    #[test]
    fn a_server_name_follows_the_name_grammar() {
        for ok in ["arcade", "s1", "games-example-org", "a_b", &"x".repeat(32)] {
            assert_eq!(ServerName::parse(ok).unwrap(), ok);
        }
        for bad in ["", "-a", "_a", "a b", "a.b", "a:b", &"x".repeat(33)] {
            let err = ServerName::parse(bad).unwrap_err();
            assert_eq!(err.name, bad);
            assert_eq!(
                err.to_string(),
                "a server name is 1 to 32 letters, digits, `_` or `-`, starting with a letter or digit"
            );
        }
    }

    #[test]
    fn free_text_becomes_a_name_that_fits() {
        assert_eq!(ServerName::sanitize_check("python3"), "python3");
        assert_eq!(
            ServerName::sanitize_check("games.example.org"),
            "gamesexampleorg"
        );
        assert_eq!(ServerName::sanitize_check("--x"), "x");
        assert_eq!(ServerName::sanitize_check("..."), "server");
        assert_eq!(ServerName::sanitize_check(&"y".repeat(40)), "y".repeat(32));
    }

    #[test]
    fn a_server_name_reads_from_json_only_when_it_fits() {
        let n: ServerName = serde_json::from_str("\"arcade\"").unwrap();
        assert_eq!(n.as_str(), "arcade");
        assert_eq!(serde_json::to_string(&n).unwrap(), "\"arcade\"");
        let err = serde_json::from_str::<ServerName>("\"a b\"").unwrap_err();
        assert!(err.to_string().contains("a server name is"), "{err}");
    }
}
