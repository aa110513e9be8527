//! The four meta-tools (§8.2): their definitions, selector checks (H56), resolution by the
//! two-view rule (H37, H57, H58, H64), the answers' text (H59-H61) and look (H62, H63).

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::Presence;
use serde_json::{Map, Value, json};

use super::check::{ArgCheck, check_args};
use super::render::{self, first_sentence};
use super::window::{AgentId, WindowItem, quote, shown_key};
use super::{META_ACT, META_CLOSE, META_LOOK, META_OPEN, Presenter};
use crate::controller::{CallRequest, CloseRequest, OpenRequest, Outcome, Snapshot};

/// What a model's tool call asks the embedder to do, once selectors and routes are checked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Plan {
    /// Call [`crate::Controller::open`] on `server`.
    Open {
        /// The server.
        server: String,
        /// The request (an instance name is always proposed for instanced toolsets, H59).
        req: OpenRequest,
    },
    /// Open an undeclared group: [`crate::Controller::set_group`] (nothing is sent, §5.4).
    OpenGroup {
        /// The server.
        server: String,
        /// The group.
        group: String,
    },
    /// Call [`crate::Controller::close`] on `server`.
    Close {
        /// The server.
        server: String,
        /// The request.
        req: CloseRequest,
    },
    /// Close an undeclared group on the host side.
    CloseGroup {
        /// The server.
        server: String,
        /// The group.
        group: String,
    },
    /// Call a dynamic tool through act: [`crate::Controller::call`].
    Act {
        /// The server.
        server: String,
        /// The call (with an instance only for instanced toolsets).
        req: CallRequest,
    },
    /// A call to a static tool by its model-facing name, or to a projected tool.
    Call {
        /// The server.
        server: String,
        /// The call.
        req: CallRequest,
    },
    /// Refresh these servers ([`crate::Controller::refresh`]) and then render
    /// [`Presenter::look`].
    Look {
        /// The servers that present toolsets (to re-read, H62).
        servers: Vec<String>,
        /// What to show.
        query: LookQuery,
    },
}

impl Plan {
    /// The server and tool a call resolves to, for prose routing (H67): an act counts as a
    /// call to the tool it resolves to. `None` for opens, closes, groups and look.
    pub fn target(&self) -> Option<(&str, &str)> {
        match self {
            Plan::Act { server, req } | Plan::Call { server, req } => Some((server, &req.tool)),
            _ => None,
        }
    }
}

/// What look was asked about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LookQuery {
    /// Only this server.
    pub server: Option<String>,
    /// Only this toolset.
    pub toolset: Option<String>,
    /// Only this instance.
    pub instance: Option<String>,
    /// One tool.
    pub tool: Option<String>,
}

fn string_prop(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}

/// The four meta-tools, as listed to the model (constant, so the list never changes).
pub(super) fn meta_tools() -> Vec<Tool> {
    let server = string_prop("The server, when a name is on several servers.");
    let make = |name: &str, desc: &str, props: Value, required: Value| {
        let mut t = Tool::new(name);
        t.description = Some(json!(desc));
        t.input_schema = json!({"type": "object", "properties": props, "required": required});
        t
    };
    vec![
        make(
            META_OPEN,
            "Open a toolset (or a new instance of one) so its tools can be used with toolsets_act.",
            json!({"server": server, "toolset": string_prop("The toolset."),
                   "instance": string_prop("A name for the instance (instanced toolsets)."),
                   "options": {"type": "object", "description": "Options for the toolset."}}),
            json!(["toolset"]),
        ),
        make(
            META_LOOK,
            "Show open toolsets and available tools, or one tool's definition.",
            json!({"server": server, "toolset": string_prop("Only this toolset."),
                   "instance": string_prop("Only this instance."), "tool": string_prop("One tool.")}),
            json!([]),
        ),
        make(
            META_ACT,
            "Call a tool of an open toolset.",
            json!({"server": server, "tool": string_prop("The tool."),
                   "instance": string_prop("The instance, when several are open."),
                   "args": {"type": "object", "description": "The tool's arguments."}}),
            json!(["tool"]),
        ),
        make(
            META_CLOSE,
            "Close a toolset or one of its instances.",
            json!({"server": server, "toolset": string_prop("The toolset."),
                   "instance": string_prop("The instance.")}),
            json!(["toolset"]),
        ),
    ]
}

/// H56: `null` is absent, a string is a value, anything else is refused by name.
fn selector(args: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string (or left out)")),
    }
}

fn object(args: &Value) -> Result<Map<String, Value>, String> {
    match args {
        Value::Null => Ok(Map::new()),
        Value::Object(m) => Ok(m.clone()),
        _ => Err("the arguments must be an object".to_owned()),
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn is_name(s: &str) -> bool {
    mcpl_protocol::rfc014::check_name("instance", s).is_ok()
}

impl Presenter {
    /// Servers that present toolsets: hinted, with a declared toolset or a dynamic tool in
    /// the latest or the published list (the two-view rule, B8).
    fn presenting(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|(id, e)| {
                e.snap.hinted()
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
            .map(|(id, _)| id.clone())
            .collect()
    }

    fn what_it_has(&self, server: &str) -> String {
        let Some(s) = self.snapshot(server) else {
            return String::new();
        };
        let toolsets: Vec<String> = s.toolset_names().into_iter().map(str::to_owned).collect();
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
        what: &str,
        has: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let presenting = self.presenting();
        if presenting.is_empty() {
            return Err("no server presents toolsets".to_owned());
        }
        if let Some(s) = server {
            if !presenting.iter().any(|p| p == s) {
                return Err(format!(
                    "no server `{s}` presents toolsets; servers: {}",
                    list(&presenting)
                ));
            }
            if !has(s) {
                return Err(format!("{what} is not on `{s}`; {}", self.what_it_has(s)));
            }
            return Ok(s.to_owned());
        }
        let found: Vec<String> = presenting.iter().filter(|s| has(s)).cloned().collect();
        match found.len() {
            1 => Ok(found[0].clone()),
            0 => {
                let has: Vec<String> = presenting.iter().map(|s| self.what_it_has(s)).collect();
                Err(format!("no server has {what}; {}", has.join("; ")))
            }
            _ => Err(format!(
                "{what} is on several servers: {}; name one with `server`",
                list(&found)
            )),
        }
    }

    /// Checks and resolves a meta-tool call (or, for any other name, a call by name). A
    /// refusal is the text to answer the model with; nothing was sent.
    pub fn plan(&self, tool: &str, args: &Value) -> Result<Plan, String> {
        let args = object(args)?;
        match tool {
            META_OPEN | META_CLOSE | META_LOOK | META_ACT => {}
            _ => return self.plan_call(tool, args),
        }
        // H56: every selector is checked at entry, before any state is read.
        let server = selector(&args, "server")?;
        let toolset = selector(&args, "toolset")?;
        let instance = selector(&args, "instance")?;
        let tool_sel = selector(&args, "tool")?;
        match tool {
            META_LOOK => {
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
                    },
                })
            }
            META_OPEN | META_CLOSE => {
                let ts = toolset.ok_or("`toolset` is required")?;
                let what = format!("toolset `{ts}`");
                let srv = self.pick(server.as_deref(), &what, |s| {
                    self.snapshot(s)
                        .is_some_and(|n| n.toolset_names().contains(ts.as_str()))
                })?;
                let snap = self.snapshot(&srv).ok_or("server gone")?;
                if tool == META_OPEN {
                    self.plan_open(srv, snap, ts, instance, args.get("options").cloned())
                } else {
                    self.plan_close(srv, snap, ts, instance)
                }
            }
            _ => {
                let name = tool_sel.ok_or("`tool` is required")?;
                let call_args = match args.get("args") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(m)) => m.clone(),
                    Some(_) => return Err("`args` must be an object".to_owned()),
                };
                let planned = self.plan_act(server, name, instance, call_args);
                if planned.is_err() {
                    // H65: traced as a failed tool call; the names are the server's, so
                    // they are left out (H81).
                    tracing::warn!(
                        tool_call = META_ACT,
                        status = "refused",
                        "act refused before sending"
                    );
                }
                planned
            }
        }
    }

    fn plan_open(
        &self,
        server: String,
        snap: &Snapshot,
        ts: String,
        instance: Option<String>,
        options: Option<Value>,
    ) -> Result<Plan, String> {
        if snap.is_undeclared(&ts) {
            return Ok(Plan::OpenGroup { server, group: ts });
        }
        let decl = snap
            .declared()
            .get(&ts)
            .ok_or_else(|| format!("no toolset `{ts}`"))?;
        if options.as_ref().is_some_and(|o| !o.is_object()) {
            return Err("`options` must be an object".to_owned());
        }
        let instance = if decl.instances {
            match instance {
                Some(i) if !is_name(&i) => {
                    return Err(format!(
                        "`{i}` is not a valid instance name ({})",
                        mcpl_protocol::rfc014::NAME_RULE
                    ));
                }
                Some(i) => Some(i),
                // H59: always propose a name, so a retry adopts instead of duplicating.
                None => Some(propose(&ts, &snap.instances(&ts))),
            }
        } else {
            if instance.is_some() {
                return Err(format!(
                    "toolset `{ts}` has no instances; leave `instance` out"
                ));
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
        server: String,
        snap: &Snapshot,
        ts: String,
        instance: Option<String>,
    ) -> Result<Plan, String> {
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

    /// The instance of an instanced toolset a request means (§4.3, H57).
    fn pick_instance(
        &self,
        snap: &Snapshot,
        ts: &str,
        instance: Option<String>,
    ) -> Result<String, String> {
        let open: Vec<String> = snap
            .instances(ts)
            .into_iter()
            .flatten()
            .map(str::to_owned)
            .collect();
        match instance {
            Some(i) if open.contains(&i) => Ok(i),
            Some(i) => Err(format!(
                "`{ts}` has no open instance `{i}`; open instances: {}",
                list(&open)
            )),
            None => match open.len() {
                1 => Ok(open[0].clone()),
                0 => Err(format!(
                    "`{ts}` has no open instance; open one with {META_OPEN}"
                )),
                _ => Err(format!(
                    "`{ts}` has several open instances: {}; name one with `instance`",
                    list(&open)
                )),
            },
        }
    }

    fn plan_act(
        &self,
        server: Option<String>,
        name: String,
        instance: Option<String>,
        args: Map<String, Value>,
    ) -> Result<Plan, String> {
        let presenting = self.presenting();
        let candidates: Vec<String> = presenting
            .iter()
            .filter(|s| server.as_deref().is_none_or(|n| n == s.as_str()))
            .filter(|s| self.actable(s, &name))
            .cloned()
            .collect();
        let srv = match candidates.len() {
            1 => candidates[0].clone(),
            0 => {
                // H64: only the static route applies.
                if let Some(s) = self.servers.keys().find(|s| {
                    server.as_deref().is_none_or(|n| n == s.as_str())
                        && self.callable_by_name(s, &name)
                }) {
                    return Err(format!(
                        "`{name}` is not a dynamic tool; call it by name as `{}`",
                        self.model_name(s, &name)
                    ));
                }
                return self
                    .pick(server.as_deref(), &format!("tool `{name}`"), |_| false)
                    .map(|_| unreachable_plan());
            }
            _ => {
                return Err(format!(
                    "tool `{name}` is on several servers: {}; name one with `server`",
                    list(&candidates)
                ));
            }
        };
        let snap = self.snapshot(&srv).ok_or("server gone")?;
        let listed = snap
            .tool(&name)
            .ok_or_else(|| format!("no tool `{name}`"))?;
        let (inst, place) = match listed.toolset.as_deref() {
            Some(ts) if snap.instanced(ts) => {
                let i = self.pick_instance(snap, ts, instance)?;
                (Some(i.clone()), format!("`{ts}`/`{i}`"))
            }
            Some(ts) => {
                if !snap.is_open(ts) {
                    return Err(format!(
                        "toolset `{ts}` is not open; open it with {META_OPEN}"
                    ));
                }
                (None, format!("`{ts}`"))
            }
            None => (None, format!("`{srv}`")),
        };
        if !snap.visible(&name, inst.as_deref()) {
            return Err(format!("`{name}` is not available now in {place}"));
        }
        if self.cfg.check_args {
            let def = snap
                .definition(&name, inst.as_deref())
                .ok_or("no definition")?;
            if let ArgCheck::Invalid(problems) = check_args(&def.input_schema, &args) {
                return Err(format!(
                    "the arguments do not fit `{name}`:\n{}",
                    problems.join("\n")
                ));
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

    /// A call by model-facing name: a static tool (H37, H38) or a projected one (§8.4).
    fn plan_call(&self, model: &str, args: Map<String, Value>) -> Result<Plan, String> {
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
            let listed = snap.tools().iter().map(|t| t.tool.name.clone());
            let published = self
                .published
                .get(id)
                .map(|p| p.presence.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            for name in listed.chain(published) {
                if self.model_name(id, &name) != model {
                    continue;
                }
                if self.callable_by_name(id, &name) {
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
                return Err(format!(
                    "`{name}` is now reached through {META_ACT} (tool `{name}`, server `{id}`)"
                ));
            }
        }
        Err(format!("no tool `{model}`"))
    }

    /// The text answering the model for a plan's outcome. `sent` is `Err` when the
    /// controller refused to send (it certainly never left the host, H60, H61).
    pub fn answer_text(&self, plan: &Plan, sent: Result<&Outcome, &crate::Error>) -> String {
        let (verb, server) = match plan {
            Plan::Open { server, .. } => ("open", server),
            Plan::Close { server, .. } => ("close", server),
            Plan::Act { server, .. } | Plan::Call { server, .. } => ("call", server),
            Plan::OpenGroup { server, group } => {
                return format!("opened `{group}` on `{server}` (host side)");
            }
            Plan::CloseGroup { server, group } => {
                return format!("closed `{group}` on `{server}` (host side)");
            }
            Plan::Look { .. } => return String::new(),
        };
        let outcome = match sent {
            Err(e) => return format!("not done: the {verb} was never sent ({e})"),
            Ok(o) => o,
        };
        match outcome {
            Outcome::Unconfirmed(_) if verb == "call" => format!(
                "outcome unknown: the call was sent to `{server}` but no answer came; check the state with {META_LOOK}"
            ),
            Outcome::Unconfirmed(_) => format!(
                "unconfirmed: the {verb} was sent to `{server}` but no answer came, so it may or may not have happened; check with {META_LOOK}"
            ),
            Outcome::Error(e) => format!("refused: {}", quote(server, &e.message)),
            Outcome::Result(v) => {
                let content = content_text(server, v);
                match plan {
                    Plan::Open { req, .. } => {
                        let inst = v
                            .get("instance")
                            .and_then(Value::as_str)
                            .or(req.instance.as_deref());
                        let key = match inst {
                            Some(i) => format!("`{}`/`{i}`", req.toolset),
                            None => format!("`{}`", req.toolset),
                        };
                        let mut text = if v.get("adopted") == Some(&Value::Bool(true)) {
                            format!("adopted {key}: it was already open")
                        } else {
                            format!("opened {key}")
                        };
                        if let Some(t) = v.get("title").and_then(Value::as_str) {
                            text.push_str(&format!(", titled by {}", quote(server, t)));
                        }
                        if !content.is_empty() {
                            text.push_str(&format!("\n{content}"));
                        }
                        text
                    }
                    Plan::Close { req, .. } => {
                        let key = match &req.instance {
                            Some(i) => format!("`{}`/`{i}`", req.toolset),
                            None => format!("`{}`", req.toolset),
                        };
                        if content.is_empty() {
                            format!("closed {key}")
                        } else {
                            format!("closed {key}\n{content}")
                        }
                    }
                    _ => result_text(v),
                }
            }
        }
    }

    /// Look (H62, H63): the catalog, one toolset, or one tool, with a line for each server
    /// that could not be re-read. Storing it counts the descriptions it rendered as shown
    /// (H51).
    pub fn look(
        &mut self,
        agent: &AgentId,
        query: &LookQuery,
        unreachable: &[String],
    ) -> WindowItem {
        let mut lines = Vec::new();
        let mut shown = Vec::new();
        for s in unreachable {
            lines.push(format!(
                "(could not ask `{s}`; showing the last state the host knew)"
            ));
        }
        let servers: Vec<String> = match &query.server {
            Some(s) => vec![s.clone()],
            None => self.presenting(),
        };
        if servers.is_empty() {
            lines.push("no server presents toolsets".to_owned());
        }
        for id in &servers {
            let Some(snap) = self.snapshot(id) else {
                lines.push(format!("no server `{id}`"));
                continue;
            };
            if let Some(tool) = &query.tool {
                lines.extend(self.look_tool(id, snap, tool, query.instance.as_deref(), &mut shown));
                continue;
            }
            lines.push(format!("server `{id}`:"));
            for ts in snap.toolset_names() {
                if query.toolset.as_deref().is_some_and(|q| q != ts) {
                    continue;
                }
                let mut line = format!("- toolset `{ts}`");
                if let Some(d) = snap.declared().get(ts) {
                    if let Some(t) = &d.title {
                        line.push_str(&format!(" ({})", quote(id, t)));
                    }
                } else {
                    line.push_str(" (kept by the host)");
                }
                let insts = snap.instances(ts);
                if snap.is_open(ts) {
                    let names: Vec<String> =
                        insts.iter().flatten().map(|i| format!("`{i}`")).collect();
                    line.push_str(
                        if names.is_empty() {
                            ": open".into()
                        } else {
                            format!(": open instances {}", names.join(", "))
                        }
                        .as_str(),
                    );
                } else {
                    line.push_str(": closed");
                }
                lines.push(line);
                for key in insts {
                    for t in snap
                        .tools()
                        .iter()
                        .filter(|t| t.toolset.as_deref() == Some(ts))
                    {
                        if !snap.visible(&t.tool.name, key) {
                            continue;
                        }
                        let def = snap.definition(&t.tool.name, key);
                        let sig = render::signature(
                            &t.tool.name,
                            def.as_ref().map_or(&Value::Null, |d| &d.input_schema),
                        );
                        let mut l = format!("  - {sig}");
                        if let Some(i) = key {
                            l.push_str(&format!(" in `{i}`"));
                        }
                        if let Some(s) = def
                            .as_ref()
                            .and_then(|d| first_sentence(d.description.as_ref()))
                        {
                            l.push_str(&format!(": {}", quote(id, &s)));
                            shown.extend(shown_key(id, snap, &t.tool.name, key));
                        }
                        lines.push(l);
                    }
                }
            }
            if query.toolset.is_none() {
                for t in snap
                    .tools()
                    .iter()
                    .filter(|t| t.presence == Presence::Dynamic && t.toolset.is_none())
                {
                    if snap.visible(&t.tool.name, None) {
                        lines.push(format!(
                            "- {}",
                            render::signature(&t.tool.name, &t.tool.input_schema)
                        ));
                    }
                }
            }
        }
        let mut text = lines.join("\n");
        if text.len() > render::MAX_JSON {
            text = format!(
                "{} {}",
                render::cut(&text, render::MAX_JSON),
                render::TOO_LONG
            );
        }
        let marks = self.look_marks(shown);
        self.hand_out(agent, query.server.as_deref().unwrap_or(""), text, marks)
    }

    fn look_tool(
        &self,
        id: &str,
        snap: &Snapshot,
        tool: &str,
        instance: Option<&str>,
        shown: &mut Vec<(String, String, String)>,
    ) -> Vec<String> {
        let Some(listed) = snap.tool(tool) else {
            return vec![format!(
                "`{id}` has no tool `{tool}`; {}",
                self.what_it_has(id)
            )];
        };
        let mut lines = Vec::new();
        let listed_def = &listed.tool;
        // H40: a tool the latest list has static is "called by name", published or not.
        if listed.presence == Presence::Static {
            lines.push(format!(
                "`{tool}` on `{id}` is called by name as `{}`",
                self.model_name(id, tool)
            ));
        }
        lines.push(format!(
            "signature: {}",
            render::signature(tool, &listed_def.input_schema)
        ));
        // H74: a non-string description or class entry is left out, never printed.
        if let Some(d) = listed_def.description.as_ref().and_then(Value::as_str) {
            lines.push(format!("description: {}", quote(id, d)));
        }
        let class: Vec<&str> = match listed_def.meta.as_ref().and_then(|m| m.get("mcpl/class")) {
            Some(Value::String(c)) => vec![c.as_str()],
            Some(Value::Array(cs)) => cs.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !class.is_empty() {
            lines.push(format!("class: {}", class.join(", ")));
        }
        lines.push(format!(
            "input schema: {}",
            render::json(&listed_def.input_schema)
        ));
        if self.actable(id, tool) {
            // H63: exactly the definition act would check, found by act's own lookup.
            let inst = match listed.toolset.as_deref() {
                Some(ts) if snap.instanced(ts) => self
                    .pick_instance(snap, ts, instance.map(str::to_owned))
                    .ok(),
                _ => None,
            };
            if let Some(def) = snap.definition(tool, inst.as_deref()) {
                let place = inst
                    .as_ref()
                    .map(|i| format!(" (instance `{i}`)"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{META_ACT} checks against{place}: {}",
                    render::json(&def.input_schema)
                ));
                shown.extend(shown_key(id, snap, tool, inst.as_deref()));
            }
        }
        lines
    }
}

fn unreachable_plan() -> Plan {
    Plan::Look {
        servers: Vec::new(),
        query: LookQuery::default(),
    }
}

/// H59: `{toolset}-{k}` with the smallest k not open, cut to the name grammar's length.
fn propose(ts: &str, open: &[Option<&str>]) -> String {
    let head: String = ts.chars().take(24).collect();
    (1..)
        .map(|k| format!("{head}-{k}"))
        .find(|n| !open.contains(&Some(n.as_str())))
        .unwrap_or_else(|| head.clone())
}

/// The text blocks of an open or close result, attributed to the server (H54).
fn content_text(server: &str, v: &Value) -> String {
    v.get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(|t| quote(server, t))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Whether a result can carry a change beside it (H83, H86): it must show something (text
/// blocks, or non-null structured content). One that does not reads as it would without
/// RFC-014, and its change goes out as a notice ([`Presenter::release`]).
pub fn can_carry(v: &Value) -> bool {
    !result_text(v).is_empty()
}

/// A tool result as text: its text blocks, or, for a result of structured content alone,
/// that content as JSON (H85).
pub fn result_text(v: &Value) -> String {
    let blocks: Vec<&str> = v
        .get("content")
        .and_then(Value::as_array)
        .map(|b| {
            b.iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if blocks.is_empty() {
        if let Some(sc) = v.get("structuredContent").filter(|s| !s.is_null()) {
            return render::json(sc);
        }
    }
    blocks.join("\n")
}
