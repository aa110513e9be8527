//! Row 5, peer comparison: `tools/call` round trips per second against an `mcpl-server`
//! stdio server, and against an rmcp server with the same tool doing the same work (`add`
//! two integers). Both are served over stdio framing on an in-memory pipe and driven by the
//! same `mcpl-rpc` client, one call at a time, so the difference is the server stack.
//!
//! - `calls_vs_rmcp`: our calls per second over rmcp's.
//! - `server_time_vs_rmcp`: the time each server spends per call. A null server
//!   ([`crate::relay::null_server`], which answers without work) driven by the same client
//!   over the same framing gives the time of everything but the server, `1 / rate_null`;
//!   each server's time is `1 / rate - 1 / rate_null`. Our server validates the arguments
//!   against the tool's schema on every call, as it ships.
//!
//! The three servers take turns over several passes and each keeps its best pass (the one
//! least disturbed by other processes).
//!
//! Built only with the `rmcp` feature, so the shipped binary does not carry rmcp.

use crate::error::BenchError;
use crate::report::Figure;
use std::time::Duration;

/// Settings for row 5.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Calls per side.
    pub calls: usize,
    /// The most one side may take in one pass; calls not reached are left out.
    pub budget: Duration,
    /// Passes of the three servers in turn; each keeps its best.
    pub passes: usize,
}

/// Whether row 5 is built into this binary.
pub const BUILT: bool = cfg!(feature = "rmcp");

/// Measures row 5.
#[cfg(feature = "rmcp")]
pub async fn measure(settings: Settings) -> Result<Vec<Figure>, BenchError> {
    imp::measure(settings).await
}

/// Row 5 is not in this build: always an error saying how to build it.
#[cfg(not(feature = "rmcp"))]
pub async fn measure(settings: Settings) -> Result<Vec<Figure>, BenchError> {
    let _ = settings;
    Err(BenchError::Invalid(
        "built without the `rmcp` feature (cargo run --release -p mcpl-cli --features bench-rmcp -- bench)"
            .into(),
    ))
}

#[cfg(feature = "rmcp")]
mod imp {
    use super::Settings;
    use crate::error::BenchError;
    use crate::report::{Figure, Unit};
    use crate::stats::rate;
    use mcpl_protocol::mcp::CallToolResult;
    use mcpl_rpc::{Peer, PeerConfig, RequestOptions, Transport};
    use mcpl_server::driver::{App, Handle, Runtime};
    use mcpl_server::{Context, Declarations, Principal, Server, ServerConfig, ToolDef, WallClock};
    use rmcp::ServiceExt;
    use rmcp::model as rm;
    use serde_json::{Map, Value, json};
    use std::sync::Arc;
    use std::time::{Duration, Instant, SystemTime};

    const TIMEOUT: Duration = Duration::from_secs(10);

    fn schema() -> Value {
        json!({"type": "object",
               "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
               "required": ["a", "b"]})
    }

    fn sum(args: Option<&Map<String, Value>>) -> i64 {
        let get = |k: &str| {
            args.and_then(|a| a.get(k))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        get("a") + get("b")
    }

    /// Our side: the SDK with one static tool.
    struct Adder;

    impl App for Adder {
        async fn call_tool(
            &self,
            _ctx: &mut Context,
            _tool: &str,
            args: Map<String, Value>,
        ) -> CallToolResult {
            CallToolResult::text(sum(Some(&args)).to_string())
        }
    }

    /// rmcp's side: the same tool.
    #[derive(Clone)]
    struct RmcpAdder;

    impl rmcp::ServerHandler for RmcpAdder {
        fn get_info(&self) -> rm::ServerConfig {
            rm::ServerConfig::new(rm::ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<rm::PaginatedRequestParams>,
            _context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rm::ListToolsResult, rmcp::ErrorData> {
            let Value::Object(schema) = schema() else {
                unreachable!("the schema is an object literal")
            };
            Ok(rm::ListToolsResult::with_all_items(vec![rm::Tool::new(
                "add",
                "Adds two integers.",
                Arc::new(schema),
            )]))
        }

        async fn call_tool(
            &self,
            request: rm::CallToolRequestParams,
            _context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rm::CallToolResponse, rmcp::ErrorData> {
            Ok(rm::CallToolResponse::Complete(rm::CallToolResult::success(
                vec![rm::ContentBlock::text(
                    sum(request.arguments.as_ref()).to_string(),
                )],
            )))
        }
    }

    fn pipe() -> (Transport, tokio::io::DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(ours);
        (Transport::stdio(r, w), theirs)
    }

    /// Initializes, then calls `add` until `settings` run out; calls per second. With
    /// `check`, every answer must be the sum (the null server's are not).
    async fn drive(client: Transport, settings: Settings, check: bool) -> Result<f64, BenchError> {
        let (peer, _events) = Peer::start(client, PeerConfig::default());
        let options = RequestOptions::timeout(TIMEOUT);
        peer.request_value(
            "initialize",
            Some(
                json!({"protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "mcpl-bench", "version": "0"}}),
            ),
            options.clone(),
        )
        .await
        .map_err(|e| BenchError::transport("`initialize`", e))?;
        peer.notify_value("notifications/initialized", None)
            .map_err(|e| BenchError::transport("notifications/initialized", e))?;
        let start = Instant::now();
        let mut done = 0;
        for i in 0..settings.calls {
            let params = json!({"name": "add", "arguments": {"a": i, "b": 1}});
            let answer = peer
                .request_value("tools/call", Some(params), options.clone())
                .await
                .map_err(|e| BenchError::transport("`tools/call`", e))?;
            if check && answer.value["content"][0]["text"] != json!((i + 1).to_string()) {
                return Err(BenchError::Invalid(format!(
                    "`add` answered {} for {i} + 1",
                    answer.value
                )));
            }
            done += 1;
            if start.elapsed() > settings.budget {
                break;
            }
        }
        let took = start.elapsed();
        peer.close().await;
        Ok(rate(done, took))
    }

    pub(super) async fn measure(settings: Settings) -> Result<Vec<Figure>, BenchError> {
        let decls = Declarations::new("bench-adder", "0.1.0")
            .tool(ToolDef::new("add", "Adds two integers.").input_schema(schema()))
            .build()
            .map_err(|e| BenchError::setup("the adder's declarations", e))?;
        let clock = WallClock::new(Instant::now(), SystemTime::now());
        let handle = Handle::new(Server::new(decls, ServerConfig::new(clock)));
        let runtime = Runtime::new(handle, Adder);

        let (mut ours, mut theirs, mut null) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..settings.passes.max(1) {
            let (client, server_end) = pipe();
            let connection = runtime.handle().next_connection();
            let (r, w) = tokio::io::split(server_end);
            let serving = runtime.clone();
            let ours_task = tokio::spawn(async move {
                let _ = serving
                    .serve(
                        Transport::stdio(r, w),
                        Principal::authenticated("bench"),
                        connection,
                    )
                    .await;
            });
            ours = ours.max(drive(client, settings, true).await?);
            ours_task.abort();

            let (client, server_end) = pipe();
            let theirs_task = tokio::spawn(async move {
                if let Ok(running) = RmcpAdder.serve(tokio::io::split(server_end)).await {
                    let _ = running.waiting().await;
                }
            });
            theirs = theirs.max(drive(client, settings, true).await?);
            theirs_task.abort();

            let (client, server_end) = pipe();
            let null_task = tokio::spawn(crate::relay::null_server(
                server_end,
                json!({"content": [{"type": "text", "text": "0"}]}),
            ));
            null = null.max(drive(client, settings, false).await?);
            null_task.abort();
        }
        let per_call = |rate: f64| 1e6 / rate - 1e6 / null;
        Ok(vec![
            Figure {
                id: Some("calls_vs_rmcp"),
                measure: "tools/call round trips, one at a time (stdio framing, in-memory pipe)"
                    .into(),
                ours,
                baseline_name: "rmcp 3 server, same tool".into(),
                baseline: theirs,
                unit: Unit::PerSecond,
                ..Default::default()
            },
            Figure {
                id: Some("server_time_vs_rmcp"),
                measure: format!(
                    "server time per call: 1/rate − 1/rate of a null server (at {}), \
                     schema validation on",
                    Unit::PerSecond.show(null)
                ),
                ours: per_call(ours),
                baseline_name: "the same for the rmcp 3 server".into(),
                baseline: per_call(theirs),
                unit: Unit::Micros,
                ..Default::default()
            },
        ])
    }
}
