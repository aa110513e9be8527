//! Interop with the official Rust MCP SDK (rmcp 3) over stdio framing on an in-memory pipe:
//! an rmcp client lists and calls tools on a small MCP server built on our [`Peer`], and our
//! client lists and calls tools on a small rmcp server.

use mcpl_protocol::mcp::{
    CallToolParams, ClientCapabilities, EmptyObject, Implementation, Initialize, InitializeParams,
    InitializeResult, Initialized, ServerCapabilities, ToolsCall, ToolsList, ToolsListParams,
};
use mcpl_rpc::{Event, Events, Peer, PeerConfig, Transport, decode_params};
use rmcp::ServiceExt;
use rmcp::model::{self as rm, CallToolRequestParams};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

/// A pipe: our transport on one end, rmcp's `(AsyncRead, AsyncWrite)` on the other.
fn pipe() -> (
    Transport,
    (
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ),
) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (r, w) = tokio::io::split(ours);
    (Transport::stdio(r, w), tokio::io::split(theirs))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

/// Our MCP server: one tool, `add {a, b}`.
fn serve_adder(mut events: Events) -> tokio::task::JoinHandle<Vec<String>> {
    tokio::spawn(async move {
        let mut notifications = Vec::new();
        while let Some(event) = events.recv().await {
            match event {
                Event::Request {
                    request, responder, ..
                } => {
                    let _ = match request.method.as_str() {
                        "initialize" => match decode_params::<InitializeParams>(&request) {
                            Ok(params) => {
                                let caps = ServerCapabilities {
                                    tools: Some(Default::default()),
                                    ..Default::default()
                                };
                                responder.respond_with(&InitializeResult::answer(
                                    &params,
                                    caps,
                                    Implementation::new("mcpl-rpc-test", "0.1.0"),
                                ))
                            }
                            Err(error) => responder.error(error),
                        },
                        "tools/list" => responder.respond(json!({"tools": [{
                            "name": "add",
                            "description": "Adds two integers",
                            "inputSchema": {"type": "object",
                                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                "required": ["a", "b"]}
                        }]})),
                        "tools/call" => match decode_params::<CallToolParams>(&request) {
                            Ok(call) if call.name == "add" => {
                                let args = call.arguments.unwrap_or_default();
                                let sum = args.get("a").and_then(Value::as_i64).unwrap_or(0)
                                    + args.get("b").and_then(Value::as_i64).unwrap_or(0);
                                responder.respond(
                                    json!({"content": [{"type": "text", "text": sum.to_string()}]}),
                                )
                            }
                            Ok(call) => {
                                responder.invalid_params(format!("unknown tool `{}`", call.name))
                            }
                            Err(error) => responder.error(error),
                        },
                        "ping" => responder.respond(json!({})),
                        _ => responder.method_not_found(),
                    };
                }
                Event::Notification { notification, .. } => notifications.push(notification.method),
                Event::Closed { .. } => break,
                _ => {}
            }
        }
        notifications
    })
}

#[tokio::test]
async fn an_rmcp_client_lists_and_calls_tools_on_our_server() {
    let (ours, theirs) = pipe();
    let (_server, events) = Peer::start(ours, PeerConfig::default());
    let server_task = serve_adder(events);

    let client = ().serve(theirs).await.expect("rmcp client initializes");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("mcpl-rpc-test")
    );

    let tools = client.list_tools(None).await.expect("tools/list");
    assert_eq!(tools.tools.len(), 1);
    assert_eq!(tools.tools[0].name, "add");

    let args = object(json!({"a": 2, "b": 3}));
    let result = client
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .expect("tools/call");
    let text = serde_json::to_value(&result.content).unwrap();
    assert_eq!(text, json!([{"type": "text", "text": "5"}]));

    client.cancel().await.expect("rmcp client closes");
    let notifications = tokio::time::timeout(TIMEOUT, server_task)
        .await
        .unwrap()
        .unwrap();
    assert!(
        notifications
            .iter()
            .any(|m| m == "notifications/initialized"),
        "{notifications:?}"
    );
}

/// An rmcp server with one tool, `greet {name}`.
#[derive(Clone)]
struct Greeter;

impl rmcp::ServerHandler for Greeter {
    fn get_info(&self) -> rm::ServerConfig {
        rm::ServerConfig::new(rm::ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<rm::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rm::ListToolsResult, rmcp::ErrorData> {
        let schema = object(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }));
        Ok(rm::ListToolsResult::with_all_items(vec![rm::Tool::new(
            "greet",
            "Greets someone",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rm::CallToolResponse, rmcp::ErrorData> {
        let name = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| rmcp::ErrorData::invalid_params("missing `name`", None))?;
        Ok(rm::CallToolResponse::Complete(rm::CallToolResult::success(
            vec![rm::ContentBlock::text(format!("hello, {name}"))],
        )))
    }
}

#[tokio::test]
async fn our_client_lists_and_calls_tools_on_an_rmcp_server() {
    let (ours, theirs) = pipe();
    let server = tokio::spawn(async move {
        let running = Greeter.serve(theirs).await.expect("rmcp server starts");
        running.waiting().await.ok();
    });
    let (client, _events) = Peer::start(ours, PeerConfig::default());

    let params = InitializeParams::new(
        ClientCapabilities::default(),
        Implementation::new("mcpl-rpc-test-client", "0.1.0"),
    );
    let init = client.request::<Initialize>(params, TIMEOUT).await.unwrap();
    assert!(init.value.capabilities.tools.is_some());
    client
        .notify::<Initialized>(EmptyObject::default())
        .unwrap();

    let tools = client
        .request::<ToolsList>(ToolsListParams::default(), TIMEOUT)
        .await
        .unwrap();
    assert_eq!(tools.value.tools.len(), 1);
    assert_eq!(tools.value.tools[0].name, "greet");
    assert_eq!(
        tools.value.tools[0].input_schema["required"],
        json!(["name"])
    );

    let call = CallToolParams::new("greet", object(json!({"name": "Go"})));
    let result = client.request::<ToolsCall>(call, TIMEOUT).await.unwrap();
    assert_eq!(result.value.content[0].as_text(), Some("hello, Go"));

    // rmcp answers a tool-level failure with a JSON-RPC error here; ours reads it as one.
    let bad = CallToolParams::new("greet", Map::new());
    let err = client.request::<ToolsCall>(bad, TIMEOUT).await.unwrap_err();
    assert!(err.to_string().contains("-32602"), "{err}");

    client.close().await;
    tokio::time::timeout(TIMEOUT, server)
        .await
        .unwrap()
        .unwrap();
}
