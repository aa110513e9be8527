//! A small RFC-014 host for the host suite's own tests: it connects to the suite's scripted
//! server over WebSocket and serves the agent the four meta-tools, with switches that break it
//! one rule at a time (the broken hosts).

use mcpl_conformance::{BoxFuture, HostLauncher};
use mcpl_protocol::methods;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, Responder, Transport};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the test host waits for the server before it gives up on a request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

macro_rules! host_faults {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Ways to break the host, one rule each: the broken hosts of the host suite's
        /// mutation test, each behind its flag.
        #[derive(Debug, Clone, Copy, Default)]
        pub struct HostFaults {
            $($(#[doc = $doc])* pub $name: bool,)*
        }

        impl HostFaults {
            /// Every fault's name (its field name), in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The fault called `name` switched on in `self`; `None` for an unknown name.
            pub fn with(mut self, name: &str) -> Option<HostFaults> {
                match name {
                    $(stringify!($name) => self.$name = true,)*
                    _ => return None,
                }
                Some(self)
            }
        }
    };
}

host_faults! {
    /// Re-opens the instances it held after a reconnect (vector 9).
    reopen_after_reconnect,
    /// Applies a change whose rev was already applied, and does not recover (vector 4).
    apply_stale_rev,
    /// Tells ended records again on every connect (vector 13).
    tell_ended_twice,
    /// Never recovers (vectors 12, 29, H18, H25).
    no_recovery,
    /// Sends toolsets/open for undeclared groups and never gates their calls (vector 10, H29).
    open_undeclared,
    /// Never puts mcpl/instance on an act (H64, vector 5).
    no_instance_meta,
    /// Reads only toolsets/list on connect (H28).
    skip_tools_list,
    /// Reads only the first tools/list page (H01).
    first_page_only,
    /// Sends toolsets/list to servers without toolHints (H12).
    ignore_server_hints_flag,
    /// Opens instanced toolsets without proposing a name (H59).
    no_proposed_name,
    /// Takes a hint definition's name (vector 20).
    take_definition_name,
    /// Puts toolset tools that claim presence static in the header (vector 21).
    trust_static_claim,
    /// Ignores the hints of a push it answers (vector 11).
    ignore_push_hints,
    /// Stops after a failed recovery tools/list (H25).
    give_up_recovery,
    /// Ignores toolsets entries that open instances elsewhere (vector 14).
    ignore_foreign_opens,
    /// Ignores mcpl/manifestChanged (vector 31).
    ignore_manifest_changed,
    /// Merges a full statement into its state instead of replacing it (vector 37).
    merge_statement,
    /// Drops answers that arrive after their request timed out (vector 35).
    drop_late_answers,
    /// Forwards every act to the server, gating nothing (vectors 10, 11, 14, 31, 35).
    never_gate,
    /// Lets the agent act in any instance it names, open or not (vectors 14, 35).
    loose_instances,
    /// Never reconnects once the server closes the connection (vectors 9, 13).
    never_reconnect,
    /// Ignores tools/hints notifications (vector 14).
    ignore_tools_hints,
    /// Never tells the agent an ended record (vector 13).
    never_tell_ended,
    /// Recovers on a gap but never reads toolsets/list in a recovery (vector 12).
    recover_tools_only,
    /// Treats an early rev on Streamable HTTP as a gap and recovers (vector 36).
    recover_on_early_rev,
    /// Applies a push's hints only once it has decided on the push, a moment later (vector 24).
    defer_push_hints,
    /// Coalesces a burst of pushes and applies only the last one's hints (vector 19).
    coalesce_hints,
    /// Applies a recovery's full statement only when its rev is the next one (vector 25).
    gate_statement,
}

/// Starts the test host in process.
pub struct TestHost {
    pub faults: HostFaults,
}

impl HostLauncher for TestHost {
    fn launch(
        &self,
        server_url: String,
    ) -> BoxFuture<'_, Result<Transport, mcpl_conformance::Unreachable>> {
        let faults = self.faults;
        Box::pin(async move {
            let (agent_side, ours) = Transport::memory_pair();
            let host = Arc::new(Host {
                faults,
                url: server_url,
                state: Mutex::new(State::default()),
                link: Mutex::new(None),
                agent: Mutex::new(None),
            });
            tokio::spawn(host.clone().run_link());
            tokio::spawn(host.serve_agent(ours));
            Ok(agent_side)
        })
    }

    fn describe(&self) -> String {
        format!("in-memory test host {:?}", self.faults)
    }
}

#[derive(Default)]
struct State {
    manifest: Value,
    tools: Vec<Value>,
    applied: u64,
    visible: HashSet<(String, Option<String>)>,
    instances: BTreeSet<(String, String)>,
    flat_open: HashSet<String>,
    groups_open: HashSet<String>,
    told: HashSet<String>,
    events: HashSet<String>,
    renamed: Option<(String, String)>,
    notices: Vec<String>,
    next: u64,
    recovering: bool,
    /// Early revs held on Streamable HTTP until the ones before them arrive.
    held: std::collections::BTreeMap<u64, Value>,
    /// A burst of pushes being coalesced (the broken host): its number and latest hints.
    burst: (u64, Option<(Value, Option<String>)>),
}

impl State {
    fn hinted(&self) -> bool {
        self.manifest.get("toolHints") == Some(&json!(true))
    }
    fn declared(&self, toolset: &str) -> Option<&Value> {
        self.manifest.get("toolsets")?.get(toolset)
    }
    fn tool(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find(|t| t["name"] == json!(name))
    }
    fn toolset_of(&self, name: &str) -> Option<String> {
        self.tool(name)?
            .pointer("/_meta/mcpl~1toolset")?
            .as_str()
            .map(str::to_owned)
    }
    fn is_dynamic(&self, tool: &Value, faults: &HostFaults) -> bool {
        let claims_static = tool.pointer("/_meta/mcpl~1presence") == Some(&json!("static"));
        if tool.pointer("/_meta/mcpl~1toolset").is_some() {
            return !(faults.trust_static_claim && claims_static);
        }
        tool.pointer("/_meta/mcpl~1presence") == Some(&json!("dynamic"))
    }
}

struct Host {
    faults: HostFaults,
    url: String,
    state: Mutex<State>,
    link: Mutex<Option<Peer>>,
    agent: Mutex<Option<Peer>>,
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

impl Host {
    fn peer(&self) -> Option<Peer> {
        self.link.lock().unwrap().clone()
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let peer = self.peer().ok_or("not connected")?;
        peer.request_value(
            method,
            Some(params),
            RequestOptions::timeout(REQUEST_TIMEOUT),
        )
        .await
        .map(|a| a.value)
        .map_err(|e| e.to_string())
    }

    /// The server link: connect, read, follow events, reconnect.
    async fn run_link(self: Arc<Self>) {
        let mut first = true;
        loop {
            let connected = if self.url.starts_with("http") {
                mcpl_rpc::transport::http::connect(&self.url, &[], Limits::default())
            } else {
                mcpl_rpc::transport::ws::connect(&self.url, &[], Limits::default()).await
            };
            let Ok(transport) = connected else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let (peer, mut events) = Peer::start(transport, PeerConfig::default());
            *self.link.lock().unwrap() = Some(peer.clone());
            let me = self.clone();
            let reads = tokio::spawn(async move { me.connect_reads(first).await });
            first = false;
            while let Some(event) = events.recv().await {
                match event {
                    Event::Notification { notification, .. }
                        if notification.method == methods::TOOLS_HINTS
                            && !self.faults.ignore_tools_hints =>
                    {
                        let h = notification.params.unwrap_or_default();
                        self.clone().on_hints(&h, None);
                    }
                    Event::Request {
                        request, responder, ..
                    } if request.method == methods::PUSH_EVENT => {
                        let p = request.params.unwrap_or_default();
                        let _ = responder.respond(json!({"accepted": true}));
                        if let Some(h) = p.get("hints") {
                            let id = p.get("eventId").and_then(Value::as_str).map(str::to_owned);
                            if self.faults.defer_push_hints {
                                let (me, h) = (self.clone(), h.clone());
                                tokio::spawn(async move {
                                    tokio::time::sleep(Duration::from_millis(1000)).await;
                                    me.on_hints(&h, id);
                                });
                            } else if self.faults.coalesce_hints {
                                let seq = {
                                    let mut s = self.state.lock().unwrap();
                                    s.burst.0 += 1;
                                    s.burst.1 = Some((h.clone(), id));
                                    s.burst.0
                                };
                                let me = self.clone();
                                tokio::spawn(async move {
                                    tokio::time::sleep(Duration::from_millis(300)).await;
                                    let last = {
                                        let mut s = me.state.lock().unwrap();
                                        if s.burst.0 == seq {
                                            s.burst.1.take()
                                        } else {
                                            None
                                        }
                                    };
                                    if let Some((h, id)) = last {
                                        me.on_hints(&h, id);
                                    }
                                });
                            } else if !self.faults.ignore_push_hints {
                                self.clone().on_hints(h, id);
                            }
                        }
                    }
                    Event::Request { responder, .. } => {
                        let _ = responder.method_not_found();
                    }
                    Event::Notification { notification, .. }
                        if notification.method == methods::MANIFEST_CHANGED
                            && !self.faults.ignore_manifest_changed =>
                    {
                        let me = self.clone();
                        tokio::spawn(async move {
                            if let Ok(m) = me.request(methods::MANIFEST, json!({})).await {
                                let mut s = me.state.lock().unwrap();
                                s.manifest = m;
                                let declared: Vec<String> = s
                                    .flat_open
                                    .iter()
                                    .filter(|t| s.declared(t).is_none())
                                    .cloned()
                                    .collect();
                                for t in declared {
                                    s.flat_open.remove(&t);
                                }
                            }
                        });
                    }
                    // §6.1, H14: a result read after its timeout still applies its hints.
                    Event::LateResponse {
                        outcome: Ok(result),
                        ..
                    } if !self.faults.drop_late_answers => {
                        if let Some(h) = result.pointer("/_meta/mcpl~1hints") {
                            self.clone().on_hints(h, None);
                        }
                    }
                    Event::Closed { .. } => break,
                    _ => {}
                }
            }
            reads.abort();
            *self.link.lock().unwrap() = None;
            if self.faults.never_reconnect {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn connect_reads(self: Arc<Self>, first: bool) {
        let init = self
            .request(methods::INITIALIZE, json!({"protocolVersion": "2025-06-18",
                "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true, "pushEvents": true}}},
                "clientInfo": {"name": "test-host", "version": "0"}}))
            .await;
        let Ok(init) = init else { return };
        {
            let mut s = self.state.lock().unwrap();
            s.manifest = init
                .pointer("/capabilities/experimental/mcpl")
                .cloned()
                .unwrap_or_default();
            s.applied = 0;
        }
        if let Some(p) = self.peer() {
            let _ = p.notify_value(methods::INITIALIZED, Some(json!({})));
        }
        let _ = self
            .request(
                methods::FEATURE_SETS_UPDATE,
                json!({"effectiveCapabilities": ["pushEvents"]}),
            )
            .await;
        let held: Vec<(String, String)> = self
            .state
            .lock()
            .unwrap()
            .instances
            .iter()
            .cloned()
            .collect();
        self.clone().recover().await;
        if !first && self.faults.reopen_after_reconnect {
            for (toolset, instance) in held {
                let _ = self
                    .request(
                        methods::TOOLSETS_OPEN,
                        json!({"toolset": toolset, "instance": instance}),
                    )
                    .await;
            }
        }
    }

    /// Reads tools/list (whole) then toolsets/list; retries a failed list. Boxed, because a
    /// failed recovery schedules itself again.
    fn recover(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.recover_once())
    }

    async fn recover_once(self: Arc<Self>) {
        {
            let mut s = self.state.lock().unwrap();
            if s.recovering {
                return;
            }
            s.recovering = true;
        }
        let mut list_ok = true;
        if !self.faults.skip_tools_list {
            match self.read_tools().await {
                Ok(tools) => self.state.lock().unwrap().tools = tools,
                Err(_) => list_ok = false,
            }
        }
        let hinted = self.state.lock().unwrap().hinted() && !self.faults.recover_tools_only;
        if hinted || self.faults.ignore_server_hints_flag {
            if let Ok(list) = self.request(methods::TOOLSETS_LIST, json!({})).await {
                self.apply_list(&list);
            }
        }
        self.state.lock().unwrap().recovering = false;
        if !list_ok && !self.faults.give_up_recovery {
            let me = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                me.recover().await;
            });
        }
    }

    async fn read_tools(&self) -> Result<Vec<Value>, String> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor
                .as_ref()
                .map(|c| json!({"cursor": c}))
                .unwrap_or(json!({}));
            let page = self.request(methods::TOOLS_LIST, params).await?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !self.faults.first_page_only => cursor = Some(c.to_owned()),
                _ => return Ok(tools),
            }
        }
    }

    fn apply_list(&self, list: &Value) {
        let mut s = self.state.lock().unwrap();
        let rev = list
            .pointer("/_meta/mcpl~1hints/rev")
            .and_then(Value::as_u64);
        if self.faults.gate_statement && rev != Some(s.applied + 1) {
            return;
        }
        s.instances.clear();
        s.flat_open.clear();
        for e in list["open"].as_array().cloned().unwrap_or_default() {
            let toolset = e["toolset"].as_str().unwrap_or("").to_owned();
            match e.get("instance").and_then(Value::as_str) {
                Some(i) => {
                    s.instances.insert((toolset, i.to_owned()));
                }
                None => {
                    s.flat_open.insert(toolset);
                }
            }
        }
        let h = list
            .pointer("/_meta/mcpl~1hints")
            .cloned()
            .unwrap_or_default();
        if !self.faults.merge_statement {
            s.visible.clear();
        }
        s.held.retain(|r, _| *r > h["rev"].as_u64().unwrap_or(0));
        for e in h["tools"].as_array().cloned().unwrap_or_default() {
            if e["visible"] == json!(true) {
                let name = e["name"].as_str().unwrap_or("").to_owned();
                s.visible
                    .insert((name, e["instance"].as_str().map(str::to_owned)));
            }
        }
        s.applied = h["rev"].as_u64().unwrap_or(s.applied);
        let ids: Vec<Value> = list["ended"].as_array().cloned().unwrap_or_default();
        for rec in ids {
            let id = rec["id"].as_str().unwrap_or("").to_owned();
            if !self.faults.never_tell_ended && (self.faults.tell_ended_twice || s.told.insert(id))
            {
                let reason = rec["reason"].as_str().unwrap_or("").to_owned();
                s.notices.push(format!("ended: {reason}"));
            }
        }
    }

    /// Applies one batch in rev order; a gap, a reversal or an unknown tool recovers.
    fn on_hints(self: Arc<Self>, h: &Value, event: Option<String>) {
        let rev = h["rev"].as_u64().unwrap_or(0);
        let recover = {
            let mut s = self.state.lock().unwrap();
            if let Some(id) = event
                && !s.events.insert(id)
            {
                // H17: a duplicate's hints are ignored; its rev counts as passed.
                let above = rev > s.applied;
                s.applied = s.applied.max(rev);
                above
            } else if rev == s.applied + 1 || (self.faults.apply_stale_rev && rev <= s.applied) {
                s.applied = s.applied.max(rev);
                let mut unknown = apply_batch(&mut s, h, &self.faults);
                // §6.1: held early revs apply once the ones before them have.
                loop {
                    let due = s.applied + 1;
                    let Some(next) = s.held.remove(&due) else {
                        break;
                    };
                    s.applied += 1;
                    unknown |= apply_batch(&mut s, &next, &self.faults);
                }
                unknown
            } else if rev > s.applied + 1
                && self.url.starts_with("http")
                && !self.faults.recover_on_early_rev
            {
                // Streamable HTTP orders nothing across streams: hold it (§6.1, vector 36).
                s.held.insert(rev, h.clone());
                false
            } else {
                true
            }
        };
        if recover && !self.faults.no_recovery {
            tokio::spawn(self.recover());
        }
    }

    async fn serve_agent(self: Arc<Self>, transport: Transport) {
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        *self.agent.lock().unwrap() = Some(peer);
        while let Some(event) = events.recv().await {
            if let Event::Request {
                request, responder, ..
            } = event
            {
                let me = self.clone();
                tokio::spawn(async move {
                    let params = request.params.unwrap_or_default();
                    me.agent_request(&request.method, params, responder).await;
                });
            }
        }
    }

    async fn agent_request(self: Arc<Self>, method: &str, p: Value, responder: Responder) {
        let result = match method {
            methods::INITIALIZE => {
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "test-host", "version": "0"}})
            }
            methods::TOOLS_LIST => {
                let s = self.state.lock().unwrap();
                let mut tools: Vec<Value> = s
                    .tools
                    .iter()
                    .filter(|t| !s.is_dynamic(t, &self.faults))
                    .map(|t| json!({"name": t["name"], "inputSchema": {"type": "object"}}))
                    .collect();
                for m in [
                    "toolsets_open",
                    "toolsets_look",
                    "toolsets_act",
                    "toolsets_close",
                ] {
                    tools.push(json!({"name": m, "inputSchema": {"type": "object"}}));
                }
                json!({"tools": tools})
            }
            methods::TOOLS_CALL => {
                let name = p["name"].as_str().unwrap_or("").to_owned();
                let args = p.get("arguments").cloned().unwrap_or_default();
                let mut r = self.clone().meta(&name, &args).await;
                let notices: Vec<String> = std::mem::take(&mut self.state.lock().unwrap().notices);
                if let Some(c) = r["content"].as_array_mut() {
                    for n in notices {
                        c.push(json!({"type": "text", "text": n}));
                    }
                }
                r
            }
            _ => {
                let _ = responder.method_not_found();
                return;
            }
        };
        let _ = responder.respond(result);
    }

    async fn meta(self: Arc<Self>, name: &str, a: &Value) -> Value {
        let toolset = a["toolset"].as_str().unwrap_or("").to_owned();
        let instance = a["instance"].as_str().map(str::to_owned);
        match name {
            "toolsets_open" | "toolsets_close" => {
                let opening = name == "toolsets_open";
                let (declared, instanced) = {
                    let s = self.state.lock().unwrap();
                    let d = s.declared(&toolset).cloned();
                    (
                        d.is_some(),
                        d.is_some_and(|d| d["instances"] == json!(true)),
                    )
                };
                if !declared && !self.faults.open_undeclared {
                    let mut s = self.state.lock().unwrap();
                    if opening {
                        s.groups_open.insert(toolset)
                    } else {
                        s.groups_open.remove(&toolset)
                    };
                    return text("done (host-side group)");
                }
                let mut params = json!({"toolset": toolset});
                let proposed = match (&instance, instanced, opening) {
                    (Some(i), _, _) => Some(i.clone()),
                    (None, true, true) if !self.faults.no_proposed_name => {
                        let mut s = self.state.lock().unwrap();
                        s.next += 1;
                        Some(format!("h-{}", s.next))
                    }
                    _ => None,
                };
                if let Some(i) = proposed {
                    params["instance"] = json!(i);
                }
                let method = if opening {
                    methods::TOOLSETS_OPEN
                } else {
                    methods::TOOLSETS_CLOSE
                };
                match self.request(method, params).await {
                    Ok(r) => {
                        if let Some(h) = r.pointer("/_meta/mcpl~1hints") {
                            self.clone().on_hints(h, None);
                        }
                        if !declared {
                            self.state.lock().unwrap().groups_open.insert(toolset);
                        }
                        text("done")
                    }
                    Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
                }
            }
            "toolsets_look" => text("catalog"),
            "toolsets_act" => {
                let tool = a["tool"].as_str().unwrap_or("").to_owned();
                let call = {
                    let s = self.state.lock().unwrap();
                    // The broken host calls the tool by the name a hint gave it.
                    let asked = tool.clone();
                    let tool = match &s.renamed {
                        Some((from, to)) if *from == tool => to.clone(),
                        _ => tool,
                    };
                    let Some(def) = s.tool(&tool) else {
                        return json!({"content": [{"type": "text", "text": "unknown tool"}], "isError": true});
                    };
                    let ts = s.toolset_of(&tool);
                    let instanced = ts
                        .as_deref()
                        .and_then(|t| s.declared(t))
                        .is_some_and(|d| d["instances"] == json!(true));
                    let group_closed = ts
                        .as_ref()
                        .is_some_and(|t| s.declared(t).is_none() && !s.groups_open.contains(t));
                    let gate = !self.faults.never_gate;
                    if gate && group_closed && !self.faults.open_undeclared {
                        return json!({"content": [{"type": "text", "text": "group closed"}], "isError": true});
                    }
                    let inst = if instanced { instance.clone() } else { None };
                    if let (Some(t), Some(i)) = (&ts, &inst)
                        && gate
                        && !self.faults.loose_instances
                        && !s.instances.contains(&(t.clone(), i.clone()))
                    {
                        return json!({"content": [{"type": "text", "text": "instance not open"}], "isError": true});
                    }
                    if let Some(t) = &ts
                        && gate
                        && !instanced
                        && s.declared(t).is_some()
                        && !s.flat_open.contains(t)
                    {
                        return json!({"content": [{"type": "text", "text": "toolset not open"}], "isError": true});
                    }
                    let visible = !gate
                        || (self.faults.loose_instances && instanced)
                        || s.visible.contains(&(tool.clone(), inst.clone()))
                        || def.pointer("/_meta/mcpl~1visible") == Some(&json!(true)) && !instanced;
                    if !visible {
                        return json!({"content": [{"type": "text", "text": "not visible"}], "isError": true});
                    }
                    let wire_name = if s.renamed.is_some() {
                        json!(asked)
                    } else {
                        def["name"].clone()
                    };
                    let mut params = json!({"name": wire_name, "arguments": a.get("args").cloned().unwrap_or_default()});
                    let send_inst = if self.faults.no_instance_meta {
                        None
                    } else {
                        inst
                    };
                    if let Some(i) = send_inst {
                        params["_meta"] = json!({"mcpl/instance": i});
                    }
                    params
                };
                match self.request(methods::TOOLS_CALL, call).await {
                    Ok(r) => r,
                    Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
                }
            }
            other => match self
                .request(methods::TOOLS_CALL, json!({"name": other, "arguments": a}))
                .await
            {
                Ok(r) => r,
                Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
            },
        }
    }
}

/// Applies a batch's entries; returns whether one named a tool the list lacks (H18).
fn apply_batch(s: &mut State, h: &Value, faults: &HostFaults) -> bool {
    let mut unknown = false;
    for e in h["toolsets"].as_array().cloned().unwrap_or_default() {
        let toolset = e["toolset"].as_str().unwrap_or("").to_owned();
        let open = e["state"] == json!("open");
        match e.get("instance").and_then(Value::as_str) {
            Some(_) if open && faults.ignore_foreign_opens => {}
            Some(i) if open => {
                s.instances.insert((toolset, i.to_owned()));
            }
            Some(i) => {
                s.instances.remove(&(toolset, i.to_owned()));
            }
            None if open => {
                s.flat_open.insert(toolset);
            }
            None => {
                s.flat_open.remove(&toolset);
            }
        }
    }
    for e in h["tools"].as_array().cloned().unwrap_or_default() {
        let name = e["name"].as_str().unwrap_or("").to_owned();
        if s.tool(&name).is_none() {
            unknown = true;
            continue;
        }
        if faults.take_definition_name
            && let Some(n) = e.pointer("/definition/name").and_then(Value::as_str)
        {
            s.renamed = Some((n.to_owned(), name.clone()));
        }
        let key = (name, e["instance"].as_str().map(str::to_owned));
        match e["visible"].as_bool() {
            Some(true) => {
                s.visible.insert(key);
            }
            Some(false) => {
                s.visible.remove(&key);
            }
            None => {}
        }
    }
    unknown
}
