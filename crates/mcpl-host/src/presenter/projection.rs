//! The presenter's projected tools (§8.4): each visible dynamic tool in each place it is
//! usable, under the name `naming` gives it.

use super::naming::projected_name;
use crate::names::{InstanceName, ServerName};
use std::borrow::Cow;

impl super::state::Presenter {
    /// Every projected tool: each visible dynamic tool in each place it is usable, named by
    /// [`projected_name`], with its effective definition.
    pub(super) fn projected(&self) -> Vec<mcpl_protocol::mcp::Tool> {
        self.projection_routes()
            .into_iter()
            .map(|(name, server, tool, instance)| {
                let snap = &self.servers[&server].snap;
                let mut t = mcpl_protocol::mcp::Tool::new(name);
                if let Some(d) = snap
                    .definition(&tool, instance.as_ref())
                    .map(Cow::into_owned)
                {
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
                let places: Vec<Option<&InstanceName>> = match &t.toolset {
                    Some(ts) if snap.instanced(ts) => snap.instances(ts),
                    _ => vec![None],
                };
                for inst in places {
                    if snap.visible(name, inst) {
                        let pname = projected_name(
                            id,
                            t.toolset.as_deref(),
                            inst.map(|i| i.as_str()),
                            name,
                        );
                        routes.push((pname, id.clone(), name.clone(), inst.cloned()));
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
