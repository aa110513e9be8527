//! The fixture contract written on the project's server SDK (`mcpl-server`), run through the
//! server suite: every server vector passes. This doubles as the template for adding the
//! contract to an SDK-based server such as the arcade.

use mcpl_conformance::fixture::*;
use mcpl_conformance::{BoxFuture, Connector, Options, Outcome, ServerTarget, run_server_suite};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_protocol::rfc014::Presence;
use mcpl_rpc::Transport;
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{
    Catalog, Context, Declarations, Event, OpenReply, Principal, Server, ServerConfig, ToolDef,
    ToolsetDef, Update, WallClock,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn catalog(with_flat: bool) -> Catalog {
    let visible = object(json!({"visible": {"type": "boolean"}, "delayMs": {"type": "integer"}}));
    let mut d = Declarations::new("cf-sdk", "0")
        .event_feature_set("cf")
        .tool(ToolDef::new(REVEAL, "Set cf_revealed's visibility.").input_schema(visible.clone()))
        .tool(ToolDef::new(LATER, "Set it later, as something else.").input_schema(visible))
        .tool(
            ToolDef::new(MOVE, "Move cf_mover.")
                .input_schema(object(json!({"presence": {"enum": ["static", "dynamic"]}}))),
        )
        .tool(ToolDef::new(MOVER, "A tool that moves."))
        .tool(
            ToolDef::new(UNDECLARE, "Remove cf-flat.")
                .input_schema(object(json!({"restore": {"type": "boolean"}}))),
        )
        .tool(
            ToolDef::new(REVEALED, "Revealed by cf_reveal.")
                .dynamic()
                .hidden(),
        )
        .tool(ToolDef::new(GROUPED, "In an undeclared group.").group(GROUP))
        .toolset(
            ToolsetDef::new(INSTANCED, "Game")
                .instances()
                .options_schema(json!({"type": "object", "additionalProperties": false,
                    "properties": {"level": {"type": "integer", "minimum": 1, "maximum": 3}}}))
                .tool(
                    ToolDef::new(ECHO, "Echo a value.").input_schema(json!({"type": "object",
                    "required": ["value"], "properties": {"value": {"type": "string"}}})),
                )
                .tool(ToolDef::new(FINISH, "Finish the game.")),
        )
        .toolset(
            ToolsetDef::new(DEFAULT_OPEN, "Open")
                .default_open()
                .tool(ToolDef::new(OPENED_TOOL, "Open tool.")),
        );
    if with_flat {
        d = d.toolset(ToolsetDef::new(FLAT, "Flat").tool(ToolDef::new(FLAT_TOOL, "Flat tool.")));
    }
    d.build().expect("the fixture declarations are valid")
}

struct Cf {
    handle: Handle,
}

impl App for Cf {
    async fn open(&self, ctx: &mut Context) -> OpenReply {
        if let Some(instance) = ctx.instance().map(|i| i.to_string()) {
            let mut def = Tool::new(ECHO);
            def.description = Some(json!("Echo a value this instance accepts."));
            def.input_schema = json!({"type": "object", "required": ["value"],
                "properties": {"value": {"enum": [instance]}}});
            ctx.here().define(def);
        }
        OpenReply::text("opened")
    }

    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        let visible = args.get("visible").and_then(Value::as_bool).unwrap_or(true);
        let delay = Duration::from_millis(args.get("delayMs").and_then(Value::as_u64).unwrap_or(0));
        match tool {
            ECHO => {
                let instance = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
                let value = args.get("value").and_then(Value::as_str).unwrap_or("");
                CallToolResult::text(format!("{instance}:{value}"))
            }
            FINISH => {
                ctx.here().end("the game finished");
                CallToolResult::text("finished")
            }
            REVEAL => {
                tokio::time::sleep(delay).await;
                ctx.update().tools().set_visible(REVEALED, visible);
                CallToolResult::text("revealed")
            }
            LATER => {
                let (handle, who) = (self.handle.clone(), ctx.principal().clone());
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let mut update = Update::new();
                    update.tools().set_visible(REVEALED, visible);
                    update.event(Event::text("the world moved"));
                    let _ = handle.apply(&who, update);
                });
                CallToolResult::text("later")
            }
            MOVE => {
                let to = if args.get("presence") == Some(&json!("dynamic")) {
                    Presence::Dynamic
                } else {
                    Presence::Static
                };
                ctx.update().move_tool(MOVER, to);
                CallToolResult::text("moved")
            }
            UNDECLARE => {
                let restore = args.get("restore") == Some(&json!(true));
                self.handle.replace_catalog(catalog(restore));
                CallToolResult::text("done")
            }
            _ => CallToolResult::text("ok"),
        }
    }
}

/// Connections to one in-process SDK server; `shared` makes them one principal.
struct SdkFixture {
    runtime: Runtime<Cf>,
    shared: bool,
}

impl SdkFixture {
    fn new(shared: bool) -> Arc<SdkFixture> {
        let clock = WallClock::new(Instant::now(), SystemTime::now());
        let handle = Handle::new(Server::new(catalog(true), ServerConfig::new(clock)));
        let runtime = Runtime::new(handle.clone(), Cf { handle });
        Arc::new(SdkFixture { runtime, shared })
    }
}

impl Connector for SdkFixture {
    fn connect(&self) -> BoxFuture<'_, Result<Transport, String>> {
        Box::pin(async move {
            let (ours, theirs) = Transport::memory_pair();
            let connection = self.runtime.next_connection();
            let principal = if self.shared {
                Principal::authenticated("cf")
            } else {
                Principal::of_connection(connection)
            };
            let runtime = self.runtime.clone();
            tokio::spawn(async move {
                let _ = runtime.serve(ours, principal, connection).await;
            });
            Ok(theirs)
        })
    }

    fn shares_principal(&self) -> bool {
        self.shared
    }

    fn describe(&self) -> String {
        format!("mcpl-server fixture (shared principal: {})", self.shared)
    }
}

const HOST_ONLY: [&str; 8] = ["v12", "v19", "v20", "v21", "v24", "v25", "v35", "v36"];

#[tokio::test(start_paused = true)]
async fn s13_the_server_sdk_passes_every_server_vector() {
    let mut failures = Vec::new();
    for shared in [false, true] {
        let only: Vec<String> = if shared {
            vec!["v09".into(), "v14".into(), "v32".into()]
        } else {
            Vec::new()
        };
        let options = Options {
            only,
            ..Options::default()
        };
        let report =
            run_server_suite(ServerTarget::Connector(SdkFixture::new(shared)), options).await;
        for c in &report.checks {
            let expect_skip = HOST_ONLY.contains(&c.id.as_str())
                || (!shared && ["v09", "v14", "v32"].contains(&c.id.as_str()));
            match &c.outcome {
                Outcome::Pass if !expect_skip => {}
                Outcome::Skipped { .. } if expect_skip => {}
                other => failures.push(format!("{} ({shared}): {other:?}", c.id)),
            }
        }
        if !failures.is_empty() {
            println!("{}", mcpl_conformance::render::table(&report));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
