//! §8.4 projection names: `SERVER__TOOLSET__INSTANCE__TOOL`, within 64 characters of
//! `[A-Za-z0-9_-]`, shortened with a hash when longer (Appendix B.1).

use super::render;
use crate::names::{InstanceName, ServerName};

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

impl super::Presenter {
    /// Every projected tool: each visible dynamic tool in each place it is usable, named by
    /// [`projected_name`], with its effective definition.
    pub(super) fn projected(&self) -> Vec<mcpl_protocol::mcp::Tool> {
        self.projection_routes()
            .into_iter()
            .map(|(name, server, tool, instance)| {
                let snap = &self.servers[&server].snap;
                let mut t = mcpl_protocol::mcp::Tool::new(name);
                if let Some(d) = snap.definition(&tool, instance.as_deref()) {
                    t.description = d.description;
                    t.input_schema = d.input_schema;
                    t.annotations = d.annotations;
                }
                t
            })
            .collect()
    }

    /// `(projected name, server, tool, instance)` for every projected tool; the instance is
    /// set exactly when the toolset is instanced (§8.4).
    fn projection_routes(&self) -> Vec<(String, ServerName, String, Option<InstanceName>)> {
        use mcpl_protocol::rfc014::Presence;
        let mut routes = Vec::new();
        for (id, e) in &self.servers {
            let snap = &e.snap;
            for t in snap
                .tools()
                .iter()
                .filter(|t| t.presence == Presence::Dynamic)
            {
                let name = &t.tool.name;
                let places: Vec<Option<&str>> = match t.toolset.as_deref() {
                    Some(ts) if snap.instanced(ts) => snap.instances(ts),
                    _ => vec![None],
                };
                for inst in places {
                    // The snapshot keeps only instance names that fit the grammar (H07).
                    let Ok(instance) = inst.map(InstanceName::parse).transpose() else {
                        continue;
                    };
                    if snap.visible(name, inst) {
                        let pname = projected_name(id, t.toolset.as_deref(), inst, name);
                        routes.push((pname, id.clone(), name.clone(), instance));
                    }
                }
            }
        }
        routes
    }

    /// Routes a projected name to its server, tool and instance.
    pub(super) fn route_projected(
        &self,
        model: &str,
    ) -> Option<(ServerName, String, Option<InstanceName>)> {
        self.projection_routes()
            .into_iter()
            .find(|(n, ..)| n == model)
            .map(|(_, s, t, i)| (s, t, i))
    }
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
