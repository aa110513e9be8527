//! The suite as the agent: an MCP client of the host under test, calling its four meta-tools
//! and keeping every text the host shows it (results and `notifications/message`).

use crate::target::{HostTarget, Options, Unreachable};
use crate::transcript::{Direction, Transcript};
use crate::verdict::{Step, Verdict, fail};
use mcpl_protocol::jsonrpc::{Message, Request, Response};
use mcpl_protocol::methods;
use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, RpcError, Transport};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The meta-tool that opens a toolset or instance (§8.2; DESIGN's host-named constants).
pub(crate) const META_OPEN: &str = "toolsets_open";
/// The meta-tool that calls a dynamic tool.
pub(crate) const META_ACT: &str = "toolsets_act";
/// The meta-tool that closes a toolset or instance.
pub(crate) const META_CLOSE: &str = "toolsets_close";

/// How long the agent waits for a meta-tool the server sits on (v35): longer than any host's
/// own request timeout should be.
pub(crate) const PATIENCE: Duration = Duration::from_secs(45);

/// The agent's connection to the host under test.
pub(crate) struct Agent {
    peer: Peer,
    transcript: Transcript,
    texts: Arc<Mutex<Vec<String>>>,
    timeout: Duration,
    /// The tools the host offers the agent (its header).
    pub header: Vec<Value>,
}

impl Agent {
    /// Starts the host pointed at `url` and initializes it as a plain MCP client.
    pub async fn start(
        target: &HostTarget,
        url: &str,
        options: &Options,
        transcript: &Transcript,
    ) -> Step<Agent> {
        let transport = launch(target, url)
            .await
            .map_err(|e| Verdict::Fail(e.reason))?;
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        let texts = Arc::new(Mutex::new(Vec::new()));
        let (t, x) = (transcript.clone(), texts.clone());
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Notification { notification, .. } => {
                        let value = serde_json::from_str(
                            &Message::Notification(notification.clone()).to_json(),
                        )
                        .unwrap_or(Value::Null);
                        t.record("agent", Direction::Peer, value);
                        if let Ok(mut x) = x.lock() {
                            x.push(
                                notification
                                    .params
                                    .map(|p| p.to_string())
                                    .unwrap_or_default(),
                            );
                        }
                    }
                    Event::Request {
                        request, responder, ..
                    } => {
                        let value =
                            serde_json::from_str(&Message::Request(request.clone()).to_json())
                                .unwrap_or(Value::Null);
                        t.record("agent", Direction::Peer, value);
                        if let Ok(mut x) = x.lock() {
                            x.push(request.params.map(|p| p.to_string()).unwrap_or_default());
                        }
                        if request.method == methods::PUSH_EVENT {
                            let _ = responder.respond(json!({"accepted": true}));
                        } else {
                            let _ = responder.method_not_found();
                        }
                    }
                    Event::Closed { .. } => break,
                    _ => {}
                }
            }
        });
        let mut agent = Agent {
            peer,
            transcript: transcript.clone(),
            texts,
            timeout: options.timeout,
            header: Vec::new(),
        };
        agent
            .request(
                methods::INITIALIZE,
                json!({"protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                       "capabilities": {},
                       "clientInfo": {"name": "mcpl-conformance-agent", "version": env!("CARGO_PKG_VERSION")}}),
            )
            .await?;
        let _ = agent
            .peer
            .notify_value(methods::INITIALIZED, Some(json!({})));
        let tools = agent.request(methods::TOOLS_LIST, json!({})).await?;
        agent.header = tools
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(agent)
    }

    /// Whether the host offers the meta-tool `name`.
    pub fn offers(&self, name: &str) -> bool {
        self.header
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }

    /// Re-reads the host's tool list.
    pub async fn refresh_header(&mut self) -> Step {
        let tools = self.request(methods::TOOLS_LIST, json!({})).await?;
        self.header = tools
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(())
    }

    /// Calls a tool the host offers; the result (tool error or not) is returned.
    pub async fn call(&mut self, name: &str, args: Value) -> Step<Value> {
        let result = self
            .request(
                methods::TOOLS_CALL,
                json!({"name": name, "arguments": args}),
            )
            .await?;
        if let Ok(mut x) = self.texts.lock() {
            x.push(crate::wire::text_of(&result));
        }
        Ok(result)
    }

    /// Calls a tool the host offers, waiting up to [`PATIENCE`] for its answer.
    pub async fn call_patiently(&mut self, name: &str, args: Value) -> Step<Value> {
        let before = self.timeout;
        self.timeout = PATIENCE.max(before);
        let result = self.call(name, args).await;
        self.timeout = before;
        result
    }

    /// Starts a call of a tool the host offers without waiting for it, for a check that acts
    /// on the server while the host's answer is pending; await the handle for the result.
    pub fn spawn_call(
        &self,
        name: &str,
        args: Value,
    ) -> Step<tokio::task::JoinHandle<Result<Value, String>>> {
        let method = methods::TOOLS_CALL;
        let params = json!({"name": name, "arguments": args});
        let pending = self
            .peer
            .start_request(
                method,
                Some(params.clone()),
                RequestOptions::timeout(PATIENCE),
            )
            .map_err(|e| Verdict::Fail(format!("cannot send `{method}` to the host: {e}")))?;
        let id = pending.id().clone();
        self.record(
            Direction::Suite,
            Message::Request(Request::new(id.clone(), method, Some(params))),
        );
        let transcript = self.transcript.clone();
        Ok(tokio::spawn(async move {
            let answer = pending.wait().await;
            let (message, out) = match answer {
                Ok(a) => (Response::ok(id, a.value.clone()), Ok(a.value)),
                Err(RpcError::Remote { error, .. }) => {
                    let why = format!("error {}: {}", error.code, error.message);
                    (Response::error(Some(id), *error), Err(why))
                }
                Err(e) => return Err(format!("no answer: {e}")),
            };
            let value =
                serde_json::from_str(&Message::Response(message).to_json()).unwrap_or(Value::Null);
            transcript.record("agent", Direction::Peer, value);
            out
        }))
    }

    /// Every text the host showed the agent so far.
    pub fn texts(&self) -> Vec<String> {
        self.texts.lock().map(|x| x.clone()).unwrap_or_default()
    }

    async fn request(&mut self, method: &str, params: Value) -> Step<Value> {
        let pending = self
            .peer
            .start_request(
                method,
                Some(params.clone()),
                RequestOptions::timeout(self.timeout),
            )
            .map_err(|e| Verdict::Fail(format!("cannot send `{method}` to the host: {e}")))?;
        let id = pending.id().clone();
        self.record(
            Direction::Suite,
            Message::Request(Request::new(id.clone(), method, Some(params))),
        );
        match pending.wait().await {
            Ok(a) => {
                self.record(
                    Direction::Peer,
                    Message::Response(Response::ok(id, a.value.clone())),
                );
                Ok(a.value)
            }
            Err(RpcError::Remote { error, .. }) => {
                self.record(
                    Direction::Peer,
                    Message::Response(Response::error(Some(id), (*error).clone())),
                );
                fail!(
                    "the host answered the agent's `{method}` with error {}: {}",
                    error.code,
                    error.message
                )
            }
            Err(e) => fail!("the host did not answer the agent's `{method}`: {e}"),
        }
    }

    fn record(&self, from: Direction, message: Message) {
        let value = serde_json::from_str(&message.to_json()).unwrap_or(Value::Null);
        self.transcript.record("agent", from, value);
    }

    /// Stops the host.
    pub async fn stop(self) {
        self.peer.close().await;
    }
}

/// Starts the host under test pointed at `url`.
async fn launch(target: &HostTarget, url: &str) -> Result<Transport, Unreachable> {
    match target {
        HostTarget::Command(cmd) => {
            let Some((program, args)) = cmd.split_first() else {
                return Err(Unreachable::new("empty host command"));
            };
            let mut args: Vec<String> = args.iter().map(|a| a.replace("{url}", url)).collect();
            if !cmd.iter().any(|a| a.contains("{url}")) {
                args.push(url.to_owned());
            }
            let mut command = tokio::process::Command::new(program);
            command.args(&args).env("MCPL_CONFORMANCE_URL", url);
            Transport::child(command, StderrMode::Discard, Limits::default())
                .map_err(Unreachable::new)
        }
        HostTarget::Launcher(l) => l.launch(url.to_owned()).await,
    }
}
