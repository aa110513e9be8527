//! The four meta-tools (§8.2): their definitions, selector checks (H56), resolution by the
//! two-view rule (H37, H57, H58, H64), the answers' text (H59-H61) and look (H62, H63).

use mcpl_protocol::rfc014::Presence;
use serde_json::{Map, Value};

use super::check::{ArgCheck, check_args};
use super::meta_tools::{META_ACT, META_CLOSE, META_LOOK, META_OPEN};
use super::plan::{LookQuery, Plan};
use super::refusal::{Refusal, Wanted, list};
use super::state::Presenter;
use super::trace::RefusedCall;
use crate::controller::{CallRequest, CloseRequest, OpenRequest, Snapshot};
use crate::names::{InstanceName, ServerName, ToolsetName};

/// H56: `null` is absent, a string is a value, anything else is refused by name.
fn selector<'a>(
    args: &'a Map<String, Value>,
    key: &'static str,
) -> Result<Option<&'a str>, Refusal> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Refusal::NotAString { key }),
    }
}

fn object(args: Value) -> Result<Map<String, Value>, Refusal> {
    match args {
        Value::Null => Ok(Map::new()),
        Value::Object(m) => Ok(m),
        _ => Err(Refusal::NotAnObject),
    }
}

/// The toolset a model named, parsed at the edge: the controller's catalog keeps only
/// names that fit the grammar, so a name outside it is on no server.
fn toolset_name(raw: &str) -> Result<ToolsetName, Refusal> {
    ToolsetName::parse(raw).map_err(|_| Refusal::BadToolsetName {
        name: raw.to_owned(),
    })
}

/// A model-sent instance name, or the refusal that names the grammar.
fn instance_name(raw: &str) -> Result<InstanceName, Refusal> {
    InstanceName::parse(raw).map_err(|_| Refusal::BadInstanceName {
        name: raw.to_owned(),
    })
}

impl Presenter {
    /// The server a model named, when the presenter has its snapshot or its link state.
    fn known_server(&self, name: &str) -> Option<ServerName> {
        self.servers
            .get_key_value(name)
            .map(|(k, _)| k)
            .or_else(|| self.links.get_key_value(name).map(|(k, _)| k))
            .cloned()
    }

    /// Servers that present toolsets: hinted, with a declared toolset or a dynamic tool in
    /// the latest or the published list (the two-view rule, B8).
    pub(super) fn presenting(&self) -> Vec<ServerName> {
        self.presenting_ids().cloned().collect()
    }

    /// [`presenting`](Self::presenting), borrowed.
    fn presenting_ids(&self) -> impl Iterator<Item = &ServerName> {
        self.servers
            .iter()
            .filter(|(id, e)| {
                (e.snap.hinted() || e.snap.host_grouped())
                    && (!e.snap.declared().is_empty()
                        || e.snap
                            .tools()
                            .iter()
                            .any(|t| t.presence == Presence::Dynamic)
                        || self
                            .published
                            .get(*id)
                            .is_some_and(|p| p.presence.values().any(|v| *v == Presence::Dynamic)))
            })
            .map(|(id, _)| id)
    }

    pub(super) fn what_it_has(&self, server: &ServerName) -> String {
        let Some(s) = self.snapshot(server) else {
            return String::new();
        };
        let toolsets: Vec<String> = s
            .toolset_names()
            .into_iter()
            .map(|n| n.to_string())
            .collect();
        let tools: Vec<String> = s
            .tools()
            .iter()
            .filter(|t| self.actable(server, &t.tool.name))
            .map(|t| t.tool.name.clone())
            .collect();
        format!(
            "`{server}` has toolsets {} and dynamic tools {}",
            list(&toolsets),
            list(&tools)
        )
    }

    /// Resolves the server for a name (H57, H58).
    fn pick(
        &self,
        server: Option<&str>,
        wanted: Wanted,
        has: impl Fn(&ServerName) -> bool,
    ) -> Result<ServerName, Refusal> {
        let presenting = self.presenting();
        if presenting.is_empty() {
            return Err(Refusal::NoPresentingServer);
        }
        if let Some(s) = server {
            let Some(named) = presenting.iter().find(|p| p.as_str() == s).cloned() else {
                return Err(Refusal::NotPresenting {
                    server: s.to_owned(),
                    presenting,
                });
            };
            if !has(&named) {
                return Err(Refusal::NotOnServer {
                    wanted,
                    has: self.what_it_has(&named),
                    server: named,
                });
            }
            return Ok(named);
        }
        let found: Vec<ServerName> = presenting.iter().filter(|s| has(s)).cloned().collect();
        match found.len() {
            1 => Ok(found[0].clone()),
            0 => {
                let has: Vec<String> = presenting.iter().map(|s| self.what_it_has(s)).collect();
                Err(Refusal::NoServerHas { wanted, has })
            }
            _ => Err(Refusal::Ambiguous {
                wanted,
                servers: found,
            }),
        }
    }

    /// Checks and resolves a meta-tool call (or, for any other name, a call by name). A
    /// refusal is the text to answer the model with; nothing was sent. The arguments move
    /// into the plan (a call's own arguments are sent on as they came, not copied).
    pub fn plan(&self, tool: &str, args: Value) -> Result<Plan, Refusal> {
        let planned = self.plan_checked(tool, args);
        if let (META_ACT, Err(refusal)) = (tool, &planned) {
            // H65: traced as a failed tool call, whether act found its target or not; the
            // names are the server's, so only the refusal's kind is given (H81).
            self.trace.0.refused(&RefusedCall {
                tool: META_ACT,
                refusal: refusal.kind(),
            });
        }
        planned
    }

    fn plan_checked(&self, tool: &str, args: Value) -> Result<Plan, Refusal> {
        let mut args = object(args)?;
        match tool {
            META_OPEN | META_CLOSE | META_LOOK | META_ACT => {}
            _ => return self.plan_call(tool, args),
        }
        // H56: every selector is checked at entry, before any state is read.
        let server = selector(&args, "server")?.map(str::to_owned);
        let toolset = selector(&args, "toolset")?.map(str::to_owned);
        let instance = selector(&args, "instance")?.map(str::to_owned);
        let tool_sel = selector(&args, "tool")?.map(str::to_owned);
        let query = selector(&args, "query")?.map(str::to_owned);
        match tool {
            META_LOOK => {
                // Names are checked before any state is read (H56).
                let toolset = toolset.as_deref().map(toolset_name).transpose()?;
                let instance = instance.as_deref().map(instance_name).transpose()?;
                let server = match server {
                    Some(s) => Some(self.known_server(&s).ok_or_else(|| {
                        let mut known: Vec<ServerName> =
                            self.servers().into_iter().cloned().collect();
                        known.extend(self.linked().into_iter().cloned());
                        known.sort();
                        known.dedup();
                        Refusal::UnknownServer {
                            server: s,
                            servers: known,
                        }
                    })?),
                    None => None,
                };
                let servers = match &server {
                    Some(s) => vec![s.clone()],
                    None => self.presenting(),
                };
                Ok(Plan::Look {
                    servers,
                    query: LookQuery {
                        server,
                        toolset,
                        instance,
                        tool: tool_sel,
                        query,
                    },
                })
            }
            META_OPEN | META_CLOSE => {
                let ts = toolset.ok_or(Refusal::Missing { key: "toolset" })?;
                let ts = toolset_name(&ts)?;
                let wanted = Wanted::Toolset(ts.clone());
                let srv = self.pick(server.as_deref(), wanted, |s| {
                    self.snapshot(s)
                        .is_some_and(|n| n.toolset_names().contains(&ts))
                })?;
                let snap = self.snapshot(&srv).ok_or(Refusal::ServerGone)?;
                if tool == META_OPEN {
                    self.plan_open(srv, snap, ts, instance, args.shift_remove("options"))
                } else {
                    self.plan_close(srv, snap, ts, instance)
                }
            }
            _ => {
                let name = tool_sel.ok_or(Refusal::Missing { key: "tool" })?;
                let call_args = match args.shift_remove("args") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(m)) => m,
                    Some(_) => return Err(Refusal::MustBeObject { key: "args" }),
                };
                self.plan_act(server, name, instance, call_args)
            }
        }
    }

    fn plan_open(
        &self,
        server: ServerName,
        snap: &Snapshot,
        ts: ToolsetName,
        instance: Option<String>,
        options: Option<Value>,
    ) -> Result<Plan, Refusal> {
        if snap.is_undeclared(&ts) {
            return Ok(Plan::OpenGroup { server, group: ts });
        }
        let decl = snap
            .declared()
            .get(ts.as_str())
            .ok_or_else(|| Refusal::NoToolset {
                toolset: ts.clone(),
            })?;
        if options.as_ref().is_some_and(|o| !o.is_object()) {
            return Err(Refusal::MustBeObject { key: "options" });
        }
        let instance = if decl.instances {
            match instance {
                Some(i) => Some(instance_name(&i)?),
                // H59: always propose a name, so a retry adopts instead of duplicating.
                None => Some(propose(&ts, &snap.instances(&ts))),
            }
        } else {
            if instance.is_some() {
                return Err(Refusal::NoInstances { toolset: ts });
            }
            None
        };
        Ok(Plan::Open {
            server,
            req: OpenRequest {
                toolset: ts,
                instance,
                options,
            },
        })
    }

    fn plan_close(
        &self,
        server: ServerName,
        snap: &Snapshot,
        ts: ToolsetName,
        instance: Option<String>,
    ) -> Result<Plan, Refusal> {
        if snap.is_undeclared(&ts) {
            return Ok(Plan::CloseGroup { server, group: ts });
        }
        let instanced = snap.instanced(&ts);
        let instance = if instanced {
            Some(self.pick_instance(snap, &ts, instance)?)
        } else {
            None
        };
        Ok(Plan::Close {
            server,
            req: CloseRequest {
                toolset: ts,
                instance,
            },
        })
    }

    /// The instance of an instanced toolset a request means (§4.3, H57). Only a refusal lists
    /// the open instances; a pick reads the toolset's own part of the picture.
    pub(super) fn pick_instance(
        &self,
        snap: &Snapshot,
        ts: &ToolsetName,
        instance: Option<String>,
    ) -> Result<InstanceName, Refusal> {
        let mut open = snap.open_instances(ts).flatten();
        let every = || snap.open_instances(ts).flatten().cloned().collect();
        match instance {
            Some(i) => match open.find(|o| o.as_str() == i) {
                Some(found) => Ok(found.clone()),
                None => Err(Refusal::NoSuchInstance {
                    toolset: ts.clone(),
                    instance: i,
                    open: every(),
                }),
            },
            None => match (open.next(), open.next()) {
                (Some(only), None) => Ok(only.clone()),
                (None, _) => Err(Refusal::NoneOpen {
                    toolset: ts.clone(),
                }),
                (Some(_), Some(_)) => Err(Refusal::SeveralOpen {
                    toolset: ts.clone(),
                    open: every(),
                }),
            },
        }
    }

    fn plan_act(
        &self,
        server: Option<String>,
        name: String,
        instance: Option<String>,
        args: Map<String, Value>,
    ) -> Result<Plan, Refusal> {
        let fits = |s: &&ServerName| {
            server.as_deref().is_none_or(|n| n == s.as_str()) && self.actable(s, &name)
        };
        let mut candidates = self.presenting_ids().filter(fits);
        let srv = match (candidates.next(), candidates.next()) {
            (Some(only), None) => only.clone(),
            (None, _) => {
                // H64: only the static route applies.
                if let Some(s) = self.servers.keys().find(|s| {
                    server.as_deref().is_none_or(|n| n == s.as_str())
                        && self.callable_by_name(s, &name)
                }) {
                    return Err(Refusal::NotDynamic {
                        model: self.model_name(s, &name),
                        tool: name,
                    });
                }
                return self
                    .pick(server.as_deref(), Wanted::Tool(name), |_| false)
                    .map(|_| unreachable_plan());
            }
            (Some(_), Some(_)) => {
                let servers = self.presenting_ids().filter(fits).cloned().collect();
                return Err(Refusal::Ambiguous {
                    wanted: Wanted::Tool(name),
                    servers,
                });
            }
        };
        let snap = self.snapshot(&srv).ok_or(Refusal::ServerGone)?;
        let listed = snap
            .tool(&name)
            .ok_or_else(|| Refusal::NoTool { tool: name.clone() })?;
        let inst = match listed.toolset.as_ref() {
            Some(ts) if snap.instanced(ts) => Some(self.pick_instance(snap, ts, instance)?),
            Some(ts) => {
                if !snap.is_open(ts) {
                    if snap.auto_open() {
                        return self.plan_opening(srv.clone(), snap, ts, name, args);
                    }
                    return Err(Refusal::ToolsetNotOpen {
                        server: srv.clone(),
                        toolset: ts.clone(),
                    });
                }
                None
            }
            None => None,
        };
        if !snap.visible(&name, inst.as_ref()) {
            let place = match (&listed.toolset, &inst) {
                (Some(ts), Some(i)) => format!("`{ts}`/`{i}`"),
                (Some(ts), None) => format!("`{ts}`"),
                (None, _) => format!("`{srv}`"),
            };
            return Err(Refusal::NotAvailable { tool: name, place });
        }
        if self.cfg.check_args {
            let schema = snap
                .input_schema(&name, inst.as_ref())
                .ok_or(Refusal::NoDefinition)?;
            if let ArgCheck::Invalid(problems) = check_args(schema, &args) {
                return Err(Refusal::BadArguments {
                    tool: name,
                    problems,
                });
            }
        }
        Ok(Plan::Act {
            server: srv,
            req: CallRequest {
                tool: name,
                instance: inst,
                args,
            },
        })
    }

    /// `autoOpen`: a closed host-side toolset's tool is called after opening the toolset.
    fn plan_opening(
        &self,
        server: ServerName,
        snap: &Snapshot,
        ts: &ToolsetName,
        name: String,
        args: Map<String, Value>,
    ) -> Result<Plan, Refusal> {
        if self.cfg.check_args {
            let schema = snap
                .input_schema(&name, None)
                .ok_or(Refusal::NoDefinition)?;
            if let ArgCheck::Invalid(problems) = check_args(schema, &args) {
                return Err(Refusal::BadArguments {
                    tool: name,
                    problems,
                });
            }
        }
        Ok(Plan::ActOpening {
            server,
            group: ts.clone(),
            req: CallRequest {
                tool: name,
                instance: None,
                args,
            },
        })
    }

    /// A call by model-facing name: a static tool (H37, H38) or a projected one (§8.4).
    fn plan_call(&self, model: &str, args: Map<String, Value>) -> Result<Plan, Refusal> {
        if self.cfg.projection {
            if let Some((server, tool, instance)) = self.route_projected(model) {
                return Ok(Plan::Call {
                    server,
                    req: CallRequest {
                        tool,
                        instance,
                        args,
                    },
                });
            }
        }
        for id in self.servers.keys() {
            let Some(snap) = self.snapshot(id) else {
                continue;
            };
            // Every name the server has, listed or published, compared in place: a call by
            // name copies nothing for the tools it is not.
            let listed = snap.tools().iter().map(|t| t.tool.name.as_str());
            let published = self
                .published
                .get(id)
                .into_iter()
                .flat_map(|p| p.presence.keys().map(String::as_str));
            if let Some(name) = listed
                .chain(published)
                .find(|name| self.is_model_name(id, name, model))
            {
                let name = name.to_owned();
                if self.callable_by_name(id, &name) {
                    // No call goes out for a tool the picture holds invisible (a static tool
                    // with `visible: false` stays in the header, §4.1; a hint may have hidden a
                    // tool whose move is not yet listed, §4.2).
                    if !snap.visible(&name, None) {
                        return Err(Refusal::NotAvailable {
                            tool: name,
                            place: format!("`{id}`"),
                        });
                    }
                    return Ok(Plan::Call {
                        server: id.clone(),
                        req: CallRequest {
                            tool: name,
                            instance: None,
                            args,
                        },
                    });
                }
                // H38: refused with a pointer to act, by the listed name.
                return Err(Refusal::ReachedThroughAct {
                    tool: name,
                    server: id.clone(),
                });
            }
        }
        Err(Refusal::NoTool {
            tool: model.to_owned(),
        })
    }
}

fn unreachable_plan() -> Plan {
    Plan::Look {
        servers: Vec::new(),
        query: LookQuery::default(),
    }
}

/// H59: `{toolset}-{k}` with the smallest k not open, cut to the name grammar's length.
fn propose(ts: &ToolsetName, open: &[Option<&InstanceName>]) -> InstanceName {
    let head: String = ts.chars().take(24).collect();
    let name = (1..)
        .map(|k| format!("{head}-{k}"))
        .find(|n| !open.iter().flatten().any(|o| o.as_str() == n))
        .unwrap_or_else(|| head.clone());
    // A toolset name of at most 24 characters, `-` and a number stays in the grammar.
    InstanceName::try_from(name)
        .unwrap_or_else(|_| InstanceName::parse(ts).expect("a toolset name is an instance name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presenter::state::PresenterConfig;

    #[test]
    fn a_toolset_the_model_names_is_parsed_at_the_edge() {
        assert_eq!(toolset_name("game").unwrap(), "game");
        // A name outside the grammar is on no server, and the refusal says why.
        let refusal = toolset_name("a b").unwrap_err();
        assert!(matches!(&refusal, Refusal::BadToolsetName { name } if name == "a b"));
        assert_eq!(
            refusal.to_string(),
            format!(
                "no toolset `a b`: it is not a valid toolset name ({})",
                mcpl_protocol::rfc014::NAME_RULE
            )
        );
    }

    /// H56 with the name rule: look takes typed names, so a toolset or instance outside the
    /// grammar is refused by name before any state is read (an empty presenter proves it:
    /// nothing is looked up), and a good one reaches the query typed.
    #[test]
    fn h56_look_refuses_a_toolset_or_instance_outside_the_grammar() {
        let p = Presenter::new(PresenterConfig::default());
        let refusal = p
            .plan(META_LOOK, serde_json::json!({"toolset": "a b"}))
            .unwrap_err();
        assert!(matches!(&refusal, Refusal::BadToolsetName { name } if name == "a b"));
        let refusal = p
            .plan(
                META_LOOK,
                serde_json::json!({"tool": "play", "instance": "-g1", "server": "nowhere"}),
            )
            .unwrap_err();
        assert!(matches!(&refusal, Refusal::BadInstanceName { name } if name == "-g1"));
        let plan = p
            .plan(
                META_LOOK,
                serde_json::json!({"toolset": "go", "instance": "g1"}),
            )
            .unwrap();
        let Plan::Look { query, .. } = plan else {
            panic!("look plans a look: {plan:?}");
        };
        assert_eq!(query.toolset, Some(ToolsetName::parse("go").unwrap()));
        assert_eq!(query.instance, Some(InstanceName::parse("g1").unwrap()));
    }

    #[test]
    fn h59_a_proposed_instance_name_fits_the_grammar() {
        let ts = ToolsetName::parse(&"t".repeat(32)).unwrap();
        let first = InstanceName::parse(&format!("{}-1", "t".repeat(24))).unwrap();
        let name = propose(&ts, &[Some(&first)]);
        assert_eq!(name.as_str(), format!("{}-2", "t".repeat(24)));
        assert!(InstanceName::parse(name.as_str()).is_ok());
    }
}
