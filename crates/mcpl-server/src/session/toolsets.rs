//! `toolsets/open`, `toolsets/close` and `toolsets/list` (§5.2, §5.3), and §11's
//! compatibility tools for hosts without `toolHints`.

use super::data::Begin;
use super::statement;
use super::{Effect, Pending, PlannedCall, Session};
use crate::context::{Call, CallKind, CloseReply, Context, OpenReply};
use crate::error::{Error, Refusal};
use crate::store::{OpenKey, Opener, Phase};
use crate::update::{self, Touch, new_open};
use mcpl_protocol::jsonrpc::RequestId;
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::rfc014::{
    CloseParams, CloseResult, HintsMeta, InstanceName, ListMeta, ListResult, OpenEntry, OpenParams,
    OpenResult, ToolsetName,
};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

impl Session {
    /// Checks an open request: declared toolset, name grammar, instance use and options
    /// (§5.2, Appendix B.12). The error text names what is wrong.
    pub(super) fn check_open(
        &self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<&Value>,
    ) -> Result<(ToolsetName, Option<InstanceName>, Value), String> {
        let name = ToolsetName::parse(toolset).map_err(|e| e.to_string())?;
        let catalog = self.server.catalog();
        let Some(entry) = catalog.entry(name.as_str()) else {
            let known: Vec<String> = catalog.toolset_names().map(|n| n.to_string()).collect();
            return Err(format!(
                "unknown toolset `{toolset}`; declared toolsets: {}",
                list_or_none(&known)
            ));
        };
        let instance = match (entry.instanced(), instance) {
            (true, Some(i)) => Some(InstanceName::parse(i).map_err(|e| e.to_string())?),
            (true, None) => None,
            (false, Some(i)) => {
                return Err(format!(
                    "toolset `{toolset}` has no instances, so `instance` (`{i}`) must be absent"
                ));
            }
            (false, None) => None,
        };
        let options = options.cloned().unwrap_or(Value::Null);
        if !options.is_null() && !options.is_object() {
            return Err("`options` must be an object".to_owned());
        }
        if let Some(schema) = &entry.options {
            let given = if options.is_null() {
                Value::Object(Map::new())
            } else {
                options.clone()
            };
            schema.check("option", &given).map_err(|e| e.to_string())?;
        }
        Ok((name, instance, options))
    }

    /// Adopts, refuses as busy, or marks a new open (stored with this step's write, so two
    /// replicas opening at once cannot both start it).
    pub(super) fn begin_open(
        &mut self,
        toolset: ToolsetName,
        instance: Option<InstanceName>,
        options: &Value,
    ) -> Begin {
        let catalog = self.server.catalog();
        let instanced = catalog
            .entry(toolset.as_str())
            .is_some_and(|e| e.instanced());
        let connection = self.connection;
        let max_open = self.server.config().max_open_instances;
        if let Some(why) = self.refuse_opens() {
            return Begin::Unavailable(why);
        }
        let before = self.state.next_instance;
        let s = Arc::make_mut(&mut self.state);
        let begin = {
            let key = match instance.clone() {
                Some(i) => OpenKey::new(toolset.clone(), Some(i)),
                None if instanced => {
                    // §5.2: the server chooses a name for an unnamed open, never one in use.
                    let stem: String = toolset.as_str().chars().take(24).collect();
                    loop {
                        s.next_instance += 1;
                        let name = format!("{stem}-{}", s.next_instance);
                        let name = InstanceName::parse(&name).expect("stem and digits fit");
                        let key = OpenKey::new(toolset.clone(), Some(name));
                        if !s.open.contains_key(&key) {
                            break key;
                        }
                    }
                }
                None => OpenKey::new(toolset.clone(), None),
            };
            match s.open.get(&key) {
                Some(o) if o.phase == Phase::Opening => Begin::Busy(key),
                Some(o) => Begin::Adopted {
                    title: o.title.clone(),
                    options: o.options.clone(),
                    key,
                },
                None if key.instance.is_some()
                    && s.open.keys().filter(|k| k.instance.is_some()).count() >= max_open =>
                {
                    let open = s.open.keys().filter(|k| k.instance.is_some()).count();
                    Begin::Full { key, open }
                }
                None => {
                    let mut open =
                        new_open(String::new(), options.clone(), Opener::Host(connection));
                    open.phase = Phase::Opening;
                    s.open.insert(key.clone(), open);
                    Begin::Started(key)
                }
            }
        };
        if matches!(begin, Begin::Started(_)) || self.state.next_instance != before {
            self.dirty = true;
        }
        begin
    }

    /// A context for app code running in `key`.
    pub(super) fn context(&self, key: Option<&OpenKey>, options: Value) -> Context {
        let mut ctx = Context::new(self.principal.clone(), self.connection);
        ctx.toolset = key.map(|k| k.toolset.clone());
        ctx.instance = key.and_then(|k| k.instance.clone());
        ctx.options = options;
        ctx
    }

    /// Starts the app's open handler for `key`.
    pub(super) fn start_open(
        &mut self,
        request: RequestId,
        key: OpenKey,
        options: Value,
        compat: bool,
        then: Option<Box<PlannedCall>>,
    ) {
        let context = self.context(Some(&key), options);
        let id = self.new_call(
            Pending::Open {
                request,
                key,
                compat,
                then,
            },
            &context,
        );
        self.effects.push_back(Effect::Call(Box::new(Call {
            id,
            kind: CallKind::Open,
            context,
        })));
    }

    pub(super) fn toolsets_open(&mut self, _now: Instant, id: RequestId, params: Option<Value>) {
        let p: OpenParams = match serde_json::from_value(params.unwrap_or(Value::Null)) {
            Ok(p) => p,
            Err(e) => {
                let r = Refusal::invalid_params(format!("invalid toolsets/open params: {e}"));
                return self.respond(id, Err(r));
            }
        };
        let (toolset, instance, options) =
            match self.check_open(&p.toolset, p.instance.as_deref(), p.options.as_ref()) {
                Ok(v) => v,
                Err(e) => return self.respond(id, Err(Refusal::invalid_params(e))),
            };
        match self.begin_open(toolset, instance, &options) {
            Begin::Adopted {
                key,
                title,
                options: in_force,
            } => {
                self.make_current(&key);
                let result = OpenResult {
                    instance: key.instance.as_ref().map(|i| i.to_string()),
                    adopted: Some(true),
                    title: Some(title),
                    content: Some(vec![ContentBlock::text(adoption_text(
                        &key, &options, &in_force,
                    ))]),
                    ..OpenResult::default()
                };
                let v = serde_json::to_value(&result).expect("open result serializes");
                self.respond(id, Ok(v));
            }
            Begin::Busy(key) => {
                let r = Refusal::invalid_params(format!(
                    "{} is still being opened; retry in a moment",
                    key.describe()
                ));
                self.respond(id, Err(r));
            }
            Begin::Started(key) => self.start_open(id, key, options, false, None),
            Begin::Full { key, open } => {
                let r = Refusal::invalid_params(Begin::full_text(&key, open));
                self.respond(id, Err(r));
            }
            Begin::Unavailable(why) => self.respond(id, Err(Refusal::internal(why))),
        }
    }

    /// Resolves which open thing a close names (Appendix B.10: an instanced toolset needs
    /// `instance`; with `current`, §11's current instance stands in for it).
    pub(super) fn check_close(
        &self,
        toolset: &str,
        instance: Option<&str>,
        use_current: bool,
    ) -> Result<OpenKey, String> {
        let name = ToolsetName::parse(toolset).map_err(|e| e.to_string())?;
        let catalog = self.server.catalog();
        let Some(entry) = catalog.entry(name.as_str()) else {
            return Err(format!("unknown toolset `{toolset}`"));
        };
        match (entry.instanced(), instance) {
            (true, Some(i)) => {
                let i = InstanceName::parse(i).map_err(|e| e.to_string())?;
                Ok(OpenKey::new(name, Some(i)))
            }
            (true, None) => match self.current.get(&name) {
                Some(i) if use_current => Ok(OpenKey::new(name.clone(), Some(i.clone()))),
                _ => Err(format!(
                    "toolset `{toolset}` has instances; name the one to close (open: {})",
                    list_or_none(&self.open_instances(&name))
                )),
            },
            (false, Some(i)) => Err(format!(
                "toolset `{toolset}` has no instances, so `instance` (`{i}`) must be absent"
            )),
            (false, None) => Ok(OpenKey::new(name, None)),
        }
    }

    /// Marks `key` closing if it is open; `Err(())` when it is not open.
    pub(super) fn begin_close(&mut self, key: &OpenKey) -> Result<Value, ()> {
        match self.state.open.get(key) {
            Some(o) if o.phase == Phase::Open => {}
            _ => return Err(()),
        }
        self.edit(|s| {
            let o = s.open.get_mut(key).expect("checked above");
            o.phase = Phase::Closing;
            Ok(o.options.clone())
        })
    }

    pub(super) fn start_close(
        &mut self,
        request: RequestId,
        key: OpenKey,
        options: Value,
        compat: bool,
    ) {
        let context = self.context(Some(&key), options);
        let id = self.new_call(
            Pending::Close {
                request,
                key,
                compat,
            },
            &context,
        );
        self.effects.push_back(Effect::Call(Box::new(Call {
            id,
            kind: CallKind::Close { disconnect: false },
            context,
        })));
    }

    pub(super) fn toolsets_close(&mut self, _now: Instant, id: RequestId, params: Option<Value>) {
        let p: CloseParams = match serde_json::from_value(params.unwrap_or(Value::Null)) {
            Ok(p) => p,
            Err(e) => {
                let r = Refusal::invalid_params(format!("invalid toolsets/close params: {e}"));
                return self.respond(id, Err(r));
            }
        };
        let key = match self.check_close(&p.toolset, p.instance.as_deref(), false) {
            Ok(k) => k,
            Err(e) => return self.respond(id, Err(Refusal::invalid_params(e))),
        };
        match self.begin_close(&key) {
            Ok(options) => self.start_close(id, key, options, false),
            Err(()) => {
                // Appendix B.11: success, says so, no hints and no rev.
                let result = CloseResult {
                    content: Some(vec![ContentBlock::text(format!(
                        "{} is not open; nothing was closed",
                        key.describe()
                    ))]),
                    ..CloseResult::default()
                };
                let v = serde_json::to_value(&result).expect("close result serializes");
                self.respond(id, Ok(v));
            }
        }
    }

    pub(super) fn toolsets_list(&mut self, now: Instant, id: RequestId) {
        let catalog = self.server.catalog();
        self.expire(now);
        let (open, ended, full) = {
            let s = &self.state;
            let open: Vec<OpenEntry> = s
                .open
                .iter()
                .filter(|(_, o)| o.is_listed())
                .map(|(k, o)| OpenEntry {
                    toolset: k.toolset.to_string(),
                    instance: k.instance.as_ref().map(|i| i.to_string()),
                    title: Some(o.title.clone()),
                    options: (!o.options.is_null()).then(|| o.options.clone()),
                    extra: Map::new(),
                })
                .collect();
            let ended: Vec<_> = s.ended.iter().map(|e| e.record.clone()).collect();
            (open, ended, statement::full(&catalog, s))
        };
        // §5.3: the full statement is always present and always takes a rev.
        let hints = self.stamp_full(full);
        let result = ListResult {
            open,
            ended: (!ended.is_empty()).then_some(ended),
            meta: ListMeta {
                hints,
                extra: Map::new(),
            },
            extra: Map::new(),
        };
        let v = serde_json::to_value(&result).expect("list result serializes");
        self.respond(id, Ok(v));
    }

    /// The open instances of `toolset` for this principal, by name.
    pub(super) fn open_instances(&self, toolset: &ToolsetName) -> Vec<String> {
        self.state
            .instances_of(toolset.as_str())
            .into_iter()
            .map(|i| i.to_string())
            .collect()
    }

    /// Finishes an open: refused (nothing opens, `-32602` or a tool error) or opened (hints
    /// stating the new toolset or instance and all its tools, under the next rev).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_open(
        &mut self,
        now: Instant,
        request: RequestId,
        key: OpenKey,
        compat: bool,
        then: Option<Box<PlannedCall>>,
        cancelled: bool,
        context: Context,
        reply: OpenReply,
    ) -> Result<(), Error> {
        let catalog = self.server.catalog();
        if let Some(why) = reply.refusal {
            if self
                .state
                .open
                .get(&key)
                .is_some_and(|o| o.phase == Phase::Opening)
            {
                self.edit(|s| s.open.remove(&key));
            }
            let text = format!("the server refused to open {}: {why}", key.describe());
            if !cancelled {
                match compat {
                    true => self.tool_error(request, &text),
                    false => self.respond(request, Err(Refusal::invalid_params(text))),
                }
            }
            return Ok(());
        }
        let env = self.server.env(&catalog, now);
        let entry = catalog.entry(key.toolset.as_str());
        let Context {
            own,
            others,
            options,
            ..
        } = context;
        self.dirty = true;
        let (touches, bad) = {
            let s = Arc::make_mut(&mut self.state);
            if let Some(o) = s.open.get_mut(&key) {
                o.phase = Phase::Open;
                o.title = match (&reply.title, entry) {
                    (Some(t), _) => t.clone(),
                    (None, Some(e)) => update::default_title(e, &key),
                    (None, None) => key.toolset.to_string(),
                };
            }
            let mut touches = vec![Touch::State {
                key: key.clone(),
                tools: true,
                ended: None,
                reason: None,
            }];
            match update::commit(&env, s, &own) {
                Ok(t) => {
                    touches.extend(t);
                    (touches, None)
                }
                Err(e) => (touches, Some(e)),
            }
        };
        let title = self.state.open.get(&key).map(|o| o.title.clone());
        if title.is_none() && self.disconnected && self.principal.ends_at_disconnect() {
            // §5.6: the connection went while the open handler ran, and its toolsets ended
            // without this one. The app opened it, so it gets the same cleanup call.
            let context = self.context(Some(&key), options);
            let id = self.new_call(Pending::Disconnect, &context);
            self.effects.push_back(Effect::Call(Box::new(Call {
                id,
                kind: CallKind::Close { disconnect: true },
                context,
            })));
            return self.publish_all(now, touches, own, others, bad);
        }
        if title.is_none() && !cancelled {
            // The server ended it while its open handler ran (a timer, the other player).
            let text = format!("{} ended while it was being opened", key.describe());
            match compat {
                true => self.tool_error(request, &text),
                false => self.respond(request, Err(Refusal::invalid_params(text))),
            }
            return self.publish_all(now, touches, own, others, bad);
        }
        self.make_current(&key);
        let st = self.statement_for(&touches);
        let suggest = own.suggest.clone();
        if cancelled {
            self.send_tools_hints(st, suggest);
        } else if compat {
            if then.is_none() {
                let mut result = CallToolResult {
                    content: reply.content.clone(),
                    ..CallToolResult::default()
                };
                result.content.push(ContentBlock::text(format!(
                    "{} is open and current",
                    key.describe()
                )));
                self.respond_tool(request.clone(), result);
            }
        } else {
            let hints = self.stamp(st, suggest);
            let result = OpenResult {
                instance: key.instance.as_ref().map(|i| i.to_string()),
                title,
                content: (!reply.content.is_empty()).then_some(reply.content),
                meta: hints.map(|h| HintsMeta {
                    hints: Some(h),
                    extra: Map::new(),
                }),
                ..OpenResult::default()
            };
            let v = serde_json::to_value(&result).expect("open result serializes");
            self.respond(request.clone(), Ok(v));
        }
        self.publish_all(now, touches, own, others, bad)?;
        if let Some(plan) = then {
            if !cancelled {
                self.start_tool(now, *plan);
            }
        }
        Ok(())
    }

    /// Finishes a close: the end is recorded (every end gets a record, Appendix B.8) and the
    /// result carries the closing entry with the record's id and the tools made invisible.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_close(
        &mut self,
        now: Instant,
        request: RequestId,
        key: OpenKey,
        compat: bool,
        cancelled: bool,
        context: Context,
        reply: CloseReply,
    ) -> Result<(), Error> {
        let catalog = self.server.catalog();
        let env = self.server.env(&catalog, now);
        let Context { own, others, .. } = context;
        let reason = reply
            .reason
            .clone()
            .or_else(|| Some(format!("{} was closed by a host", key.describe())));
        self.dirty = true;
        let (touches, bad) = {
            let s = Arc::make_mut(&mut self.state);
            let mut touches = Vec::new();
            if let Some(id) = update::end(&env, s, &key, reason.clone()) {
                touches.push(Touch::State {
                    key: key.clone(),
                    tools: true,
                    ended: Some(id),
                    reason: reason.clone(),
                });
            }
            match update::commit(&env, s, &own) {
                Ok(t) => {
                    touches.extend(t);
                    (touches, None)
                }
                Err(e) => (touches, Some(e)),
            }
        };
        if key.instance.is_some() && self.current.get(&key.toolset) == key.instance.as_ref() {
            self.current.remove(&key.toolset);
        }
        let st = self.statement_for(&touches);
        let suggest = own.suggest.clone();
        if cancelled {
            self.send_tools_hints(st, suggest);
        } else if compat {
            let mut result = CallToolResult {
                content: reply.content.clone(),
                ..CallToolResult::default()
            };
            if result.content.is_empty() {
                result
                    .content
                    .push(ContentBlock::text(format!("{} is closed", key.describe())));
            }
            self.respond_tool(request, result);
        } else {
            let hints = self.stamp(st, suggest);
            let result = CloseResult {
                content: (!reply.content.is_empty()).then_some(reply.content),
                meta: hints.map(|h| HintsMeta {
                    hints: Some(h),
                    extra: Map::new(),
                }),
                extra: Map::new(),
            };
            let v = serde_json::to_value(&result).expect("close result serializes");
            self.respond(request, Ok(v));
        }
        self.publish_all(now, touches, own, others, bad)
    }

    /// §5.6: a per-connection principal's toolsets end with its connection.
    pub(super) fn end_at_disconnect(&mut self, _now: Instant) {
        let keys: Vec<(OpenKey, Value)> = self
            .state
            .open
            .iter()
            .filter(|(_, o)| o.is_listed())
            .map(|(k, o)| (k.clone(), o.options.clone()))
            .collect();
        self.forget_state();
        for (key, options) in keys {
            let context = self.context(Some(&key), options);
            let id = self.new_call(Pending::Disconnect, &context);
            self.effects.push_back(Effect::Call(Box::new(Call {
                id,
                kind: CallKind::Close { disconnect: true },
                context,
            })));
        }
    }
}

/// What an adopting open says (§5.2: options not applied are reported in `content`).
pub(super) fn adoption_text(key: &OpenKey, given: &Value, in_force: &Value) -> String {
    let mut text = format!("{} was already open; adopted it unchanged", key.describe());
    if !given.is_null() && given != in_force {
        text.push_str(&format!(
            ". Options not applied: {given}; options in force: {}",
            if in_force.is_null() {
                "none".to_owned()
            } else {
                in_force.to_string()
            }
        ));
    }
    text
}

/// "a, b" or "none".
pub(super) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
