//! `tools/call`: routing to an instance (§4.3, §11), the visibility gate (§4.1), argument
//! validation, and finishing app work.

use super::catalog::{TOOLSET_CHOOSE, TOOLSET_CLOSE, TOOLSET_OPEN};
use super::data::{PlannedCall, Route};
use super::statement::{own_definition_ref, visible_in};
use super::toolsets::list_or_none;
use super::{Effect, Pending, Session};
use crate::context::{Call, CallKind, Context, Outcome, Reply};
use crate::decl::Home;
use crate::error::{Error, Refusal};
use crate::principal::CallId;
use crate::store::OpenKey;
use crate::update::{PrincipalChange, Touch, Update};
use mcpl_protocol::jsonrpc::RequestId;
use mcpl_protocol::mcp::{CallToolParams, CallToolResult};
use mcpl_protocol::rfc014::{HintChanges, InstanceName, ToolsetName};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

impl Session {
    pub(super) fn tool_error(&mut self, id: RequestId, text: &str) {
        self.respond_tool(id, CallToolResult::error(text));
    }

    pub(super) fn respond_tool(&mut self, id: RequestId, result: CallToolResult) {
        let v = serde_json::to_value(&result).expect("tool result serializes");
        self.respond(id, Ok(v));
    }

    pub(super) fn tools_call(&mut self, now: Instant, id: RequestId, params: Option<Value>) {
        let mut p = match CallToolParams::from_value(params.unwrap_or(Value::Null)) {
            Ok(p) => p,
            Err(e) => {
                let r = Refusal::invalid_params(format!("invalid tools/call params: {e}"));
                return self.respond(id, Err(r));
            }
        };
        let args = p.arguments.take().unwrap_or_default();
        let catalog = self.server.catalog();
        if !self.host.tool_hints
            && catalog.needs_compat_tools()
            && matches!(
                p.name.as_str(),
                TOOLSET_OPEN | TOOLSET_CLOSE | TOOLSET_CHOOSE
            )
        {
            return self.compat_call(id, &p.name, &args);
        }
        // MCP counts an unknown tool name as a protocol error (-32602). §4.1's "ordinary tool
        // error" is for declared tools that cannot be served now: invisible, or in a
        // declared toolset that is not open.
        let Some(entry) = catalog.tool(&p.name) else {
            let r = Refusal::invalid_params(format!("unknown tool `{}`", p.name));
            return self.respond(id, Err(r));
        };
        let route = match &entry.home {
            Home::Toolset(t) => self.route(t, &p),
            // §5.4: the host gates undeclared groups; the server checks only visibility.
            Home::Free | Home::Group(_) => Route::To(None),
        };
        let mut plan = PlannedCall {
            request: id.clone(),
            tool: p.name,
            args,
            key: None,
        };
        match route {
            Route::To(key) => {
                plan.key = key;
                self.start_tool(now, plan)
            }
            Route::Refuse(text) => self.tool_error(id, &text),
            Route::OpenFirst(key) => {
                plan.key = Some(key.clone());
                let plan = Box::new(plan);
                if let Some(why) = self.refuse_opens() {
                    return self.tool_error(id, &why);
                }
                // Mark it opening in this step's write, as `toolsets/open` does.
                let connection = self.connection;
                let already_open = self.state.open.contains_key(&key) || {
                    self.edit(|s| {
                        let mut open = crate::update::new_open(
                            String::new(),
                            Value::Null,
                            crate::store::Opener::Host(connection),
                        );
                        open.phase = crate::store::Phase::Opening;
                        s.open.insert(key.clone(), open);
                    });
                    false
                };
                if !already_open {
                    self.start_open(id, key, Value::Null, true, Some(plan));
                } else {
                    self.start_tool(now, *plan);
                }
            }
        }
    }

    /// §4.3 for hosts with `toolHints`; §11's current instance for hosts without.
    fn route(&mut self, toolset: &ToolsetName, p: &CallToolParams) -> Route {
        let catalog = self.server.catalog();
        let Some(entry) = catalog.entry(toolset.as_str()) else {
            return Route::Refuse(format!("toolset `{toolset}` is not declared"));
        };
        let open = self.open_instances(toolset);
        if !entry.instanced() {
            // §4.3: servers ignore `mcpl/instance` on a toolset without instances.
            let key = OpenKey::new(toolset.clone(), None);
            let is_open = self.state.open.contains_key(&key);
            return match (is_open, self.host.tool_hints) {
                (true, _) => Route::To(Some(key)),
                // §6.3: implicitly open for hosts without `toolHints`, unless it needs options.
                (false, false) if !entry.needs_options => Route::OpenFirst(key),
                (false, false) => Route::Refuse(format!(
                    "toolset `{toolset}` is not open; open it with {TOOLSET_OPEN}"
                )),
                (false, true) => Route::Refuse(format!(
                    "toolset `{toolset}` is not open; open it with toolsets/open"
                )),
            };
        }
        let pick = |name: &str| {
            InstanceName::parse(name)
                .ok()
                .map(|i| OpenKey::new(toolset.clone(), Some(i)))
        };
        if self.host.tool_hints {
            let named = match p.instance() {
                Ok(n) => n,
                Err(e) => return Route::Refuse(e.to_string()),
            };
            return match named {
                Some(n) if open.contains(&n) => Route::To(pick(&n)),
                Some(n) => Route::Refuse(format!(
                    "instance `{n}` of `{toolset}` is not open; open instances: {}",
                    list_or_none(&open)
                )),
                None => match open.len() {
                    0 => Route::Refuse(format!(
                        "toolset `{toolset}` is not open; open an instance with toolsets/open"
                    )),
                    1 => Route::To(pick(&open[0])),
                    n => Route::Refuse(format!(
                        "{n} instances of `{toolset}` are open: {}; name one in \
                         _meta[\"mcpl/instance\"]",
                        open.join(", ")
                    )),
                },
            };
        }
        // §11: the current instance; if it closed and exactly one remains, that one.
        if let Some(cur) = self.current.get(toolset) {
            if open.iter().any(|o| o == cur.as_str()) {
                return Route::To(pick(cur.as_str()));
            }
        }
        match open.len() {
            0 => Route::Refuse(format!(
                "no instance of `{toolset}` is open; open one with {TOOLSET_OPEN}"
            )),
            1 => {
                let key = pick(&open[0]);
                if let Some(k) = &key {
                    self.make_current(k);
                }
                Route::To(key)
            }
            _ => Route::Refuse(format!(
                "instances of `{toolset}` are open: {}; choose one with {TOOLSET_CHOOSE}",
                open.join(", ")
            )),
        }
    }

    /// Gates a routed call on visibility (§4.1) and its arguments on the scope's current
    /// definition (§5.5), then hands it to app code.
    pub(super) fn start_tool(&mut self, _now: Instant, plan: PlannedCall) {
        let catalog = self.server.catalog();
        let key = plan.key.clone();
        let (visible, schema, options) = {
            let s = &self.state;
            let options = key
                .as_ref()
                .and_then(|k| s.open.get(k))
                .map(|o| o.options.clone())
                .unwrap_or(Value::Null);
            // A scope's own definition is compiled once per definition (the cache), the
            // declared one once per catalog.
            let schema = match own_definition_ref(s, key.as_ref(), &plan.tool) {
                Some(def) => self.server.schemas().get(&def.input_schema).map_err(|e| {
                    format!("the current definition of `{}` is invalid: {e}", plan.tool)
                }),
                None => match catalog.tool(&plan.tool) {
                    Some(t) => Ok(t.schema.clone()),
                    None => Err(format!("unknown tool `{}`", plan.tool)),
                },
            };
            (
                visible_in(&catalog, s, key.as_ref(), &plan.tool),
                schema,
                options,
            )
        };
        if !visible {
            let where_ = key
                .as_ref()
                .map(|k| format!(" in {}", k.describe()))
                .unwrap_or_default();
            let text = format!("tool `{}` is not available now{where_}", plan.tool);
            return self.tool_error(plan.request, &text);
        }
        // Checked in place: the arguments are wrapped for the validator and taken back.
        let args = Value::Object(plan.args);
        if let Err(text) =
            schema.and_then(|s| s.check("argument", &args).map_err(|e| e.to_string()))
        {
            return self.tool_error(plan.request, &text);
        }
        let Value::Object(args) = args else {
            unreachable!("wrapped as an object above")
        };
        let context = self.context(key.as_ref(), options);
        let id = self.new_call(
            Pending::Tool {
                request: plan.request,
            },
            &context,
        );
        self.effects.push_back(Effect::Call(Box::new(Call {
            id,
            kind: CallKind::Tool {
                tool: plan.tool,
                args,
            },
            context,
        })));
    }

    pub(super) fn finish(
        &mut self,
        now: Instant,
        call: CallId,
        pending: Pending,
        cancelled: bool,
        outcome: Outcome,
    ) -> Result<(), Error> {
        let Outcome { context, reply } = outcome;
        match (pending, reply) {
            (Pending::Tool { request }, Reply::Tool(result)) => {
                self.finish_tool(now, request, cancelled, context, result)
            }
            (
                Pending::Open {
                    request,
                    key,
                    compat,
                    then,
                },
                Reply::Open(r),
            ) => self.finish_open(now, request, key, compat, then, cancelled, context, r),
            (
                Pending::Close {
                    request,
                    key,
                    compat,
                },
                Reply::Close(r),
            ) => self.finish_close(now, request, key, compat, cancelled, context, r),
            (Pending::Disconnect, _) => {
                let Context { others, .. } = context;
                self.publish_all(now, Vec::new(), Update::new(), others, None)
            }
            (pending, _) => {
                let (request, expected) = match pending {
                    Pending::Tool { request } => (request, "tool"),
                    Pending::Open { request, key, .. } => {
                        if self.state.open.get(&key).is_some_and(|o| !o.is_listed()) {
                            self.edit(|s| s.open.remove(&key));
                        }
                        (request, "open")
                    }
                    Pending::Close { request, key, .. } => {
                        if self.state.open.contains_key(&key) {
                            self.edit(|s| {
                                if let Some(o) = s.open.get_mut(&key) {
                                    o.phase = crate::store::Phase::Open;
                                }
                            });
                        }
                        (request, "close")
                    }
                    Pending::Disconnect => unreachable!("matched above"),
                };
                if !cancelled {
                    let text = format!("the server's app answered a {expected} call wrongly");
                    self.respond(request, Err(Refusal::internal(text)));
                }
                Err(Error::WrongReply { call, expected })
            }
        }
    }

    fn finish_tool(
        &mut self,
        now: Instant,
        request: RequestId,
        cancelled: bool,
        context: Context,
        mut result: CallToolResult,
    ) -> Result<(), Error> {
        let Context { own, others, .. } = context;
        let catalog = self.server.catalog();
        let env = self.server.env(&catalog, now);
        // An update that records nothing changes no state, and needs no write.
        self.dirty |= !own.ops.is_empty();
        // Without ops the state is not touched (nor copied); the event and suggestions, if
        // any, are still published below.
        let committed = if own.ops.is_empty() {
            Ok(Vec::new())
        } else {
            crate::update::commit(&env, Arc::make_mut(&mut self.state), &own)
        };
        let (touches, bad) = match committed {
            Ok(t) => (t, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let st = self.statement_for(&touches);
        let suggest = own.suggest.clone();
        if cancelled {
            // §6.1, vector 28: no result will carry them, so they go alone.
            self.send_tools_hints(st, suggest);
        } else {
            // §6.2, vector 2: the call's own consequences ride in its result, and only there.
            let hints = self.stamp(st, suggest);
            HintChanges::set_on_result(&mut result, hints.as_ref())
                .expect("hint changes serialize");
            self.respond_tool(request, result);
        }
        self.publish_all(now, touches, own, others, bad)
    }

    /// Publishes the caller's own committed change (its other connections skip nothing: only
    /// this one already reported it) and commits and publishes changes for other principals.
    pub(super) fn publish_all(
        &mut self,
        now: Instant,
        touches: Vec<Touch>,
        own: Update,
        others: Vec<(crate::principal::Principal, Update)>,
        bad: Option<Error>,
    ) -> Result<(), Error> {
        let _ = now;
        self.publish(PrincipalChange {
            principal: self.principal.clone(),
            origin: Some(self.connection),
            touches,
            event: own.event,
            suggest: own.suggest,
            state: None,
            restated: false,
        });
        let mut first_err = bad;
        let catalog = self.server.catalog();
        for (principal, update) in others {
            // What the declarations alone refuse is refused here; the rest is checked
            // against the principal's state when the driver applies it.
            match crate::update::check(&catalog, &update) {
                Ok(()) => self.effects.push_back(Effect::Apply(principal, update)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
