//! §8.4 projection names: `SERVER__TOOLSET__INSTANCE__TOOL`, within 64 characters of
//! `[A-Za-z0-9_-]`, shortened with a hash when longer (Appendix B.1). A leaf.

use super::render;
use crate::names::ServerName;

/// The longest tool name every model API accepts.
pub const MAX_NAME: usize = 64;

/// Makes `name` fit `^[a-zA-Z0-9_-]{1,64}$`: other characters become `_`, and a name too long
/// keeps its head and ends with a hash of the whole, so distinct names stay distinct.
pub fn fit(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= MAX_NAME && clean == name {
        return clean;
    }
    let hash = render::identity(&serde_json::Value::String(name.to_owned()));
    let head = render::cut(&clean, MAX_NAME - 11);
    format!("{head}_{}", &hash[..10])
}

/// Whether `model` is `fit("{server}__{tool}")`, the name a static tool is shown under when
/// several servers share the list. A call by name asks this of every listed tool, so the
/// common case (a joined name that already fits) is answered without building the name.
pub fn is_joined_fit(server: &str, tool: &str, model: &str) -> bool {
    let in_class = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let joined = server.len() + 2 + tool.len();
    if joined <= MAX_NAME && in_class(server) && in_class(tool) {
        return model.len() == joined
            && model.starts_with(server)
            && model[server.len()..].starts_with("__")
            && model.ends_with(tool);
    }
    fit(&format!("{server}__{tool}")) == model
}

/// The host-namespaced name a projected dynamic tool is shown under.
pub fn projected_name(
    server: &ServerName,
    toolset: Option<&str>,
    instance: Option<&str>,
    tool: &str,
) -> String {
    let mut parts = vec![server.as_str()];
    parts.extend(toolset);
    parts.extend(instance);
    parts.push(tool);
    fit(&parts.join("__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ServerName {
        ServerName::parse(s).unwrap()
    }

    #[test]
    fn s8_4_names_fit_64_and_stay_distinct() {
        assert_eq!(
            projected_name(&name("arcade"), Some("game"), Some("vs-ada"), "play"),
            "arcade__game__vs-ada__play"
        );
        let a = "a".repeat(32);
        let long1 = projected_name(&name("server"), Some(&a), Some(&a), "play");
        let long2 = projected_name(&name("server"), Some(&a), Some(&a), "pass");
        assert!(long1.len() <= MAX_NAME && long2.len() <= MAX_NAME);
        assert_ne!(long1, long2);
    }

    /// The check without building agrees with building the name and comparing, for names
    /// that fit as they are, names too long, names with characters outside the class, and
    /// models that differ from the joined name in every way a shortcut could miss.
    #[test]
    fn s8_4_a_joined_name_is_recognised_without_building_it() {
        let long = "t".repeat(70);
        let tools = [
            "read",
            "read_file",
            "a__b",
            "play.now",
            "é",
            long.as_str(),
            "",
        ];
        let servers = ["fs", "box", "a", "s-1"];
        for server in servers {
            for tool in tools {
                let shown = fit(&format!("{server}__{tool}"));
                assert!(is_joined_fit(server, tool, &shown), "{server} {tool}");
                let mut others = vec![
                    tool.to_owned(),
                    format!("{server}_{tool}"),
                    format!("{server}__{tool}x"),
                    format!("x{server}__{tool}"),
                    format!("{server}___{tool}"),
                ];
                others.extend(servers.iter().map(|s| fit(&format!("{s}__{tool}x"))));
                for other in others.iter().filter(|o| **o != shown) {
                    assert!(
                        !is_joined_fit(server, tool, other),
                        "{server} {tool} {other}"
                    );
                }
            }
        }
    }

    #[test]
    fn s8_4_characters_outside_the_name_class_become_underscores() {
        assert_eq!(
            fit("a-b_c9"),
            "a-b_c9",
            "a name already in the class is kept"
        );
        let dotted = projected_name(&name("arcade"), Some("game"), None, "play.now");
        assert!(
            dotted.len() <= MAX_NAME
                && dotted
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{dotted}"
        );
        assert!(dotted.starts_with("arcade__game__play_now_"), "{dotted}");
        // A replaced character changes the name, so it cannot meet the name it now resembles.
        assert_ne!(
            dotted,
            projected_name(&name("arcade"), Some("game"), None, "play_now")
        );
    }
}
