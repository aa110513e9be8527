//! The conformance fixture contract (`docs/CONFORMANCE.md`) on the `mcpl-server` SDK, ready to add beside a
//! server's own tools so `mcpl conformance server` can drive every server vector against it.
//!
//! The contract is a handful of `cf-*` toolsets and `cf_*` tools with trivial behaviour; each
//! one gives the suite a lever on one RFC-014 path (an instanced open, a game that ends, a
//! push that carries hints, a tool that moves, a declaration that goes away). The names are
//! the suite's own (`mcpl_conformance::fixture`, re-exported here); the suite's `sdk_fixture`
//! test runs this module against the suite.
//!
//! To add the contract to a server:
//!
//! 1. Build the catalog with [`declare`] (the server's own [`Declarations`] plus the fixture),
//!    make the [`Handle`], then a [`Fixture`] holding the server's own declarations and a
//!    clone of the handle (for `cf_later`'s push and `cf_undeclare`'s catalog swap).
//! 2. In the server's [`App`], send every tool for which [`owns_tool`] holds, and every open
//!    and close of a toolset for which [`owns_toolset`] holds, to the fixture. A server with
//!    nothing else serves the [`Fixture`] itself, which is an [`App`].
//!
//! [`InProcess`] lets the server suite reach such a server running in the same process.

mod connector;

use std::time::Duration;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_protocol::rfc014::Presence;
use serde_json::{Map, Value, json};

use mcpl_server::driver::{App, Handle};
use mcpl_server::{Catalog, CloseReply, Context, Declarations, Error, Event, OpenReply};
use mcpl_server::{ToolDef, ToolsetDef, Update};

pub use connector::InProcess;
pub use mcpl_conformance::fixture::{
    DEFAULT_OPEN, ECHO, FINISH, FLAT, FLAT_TOOL, GROUP, GROUPED, INSTANCED, LATER, MOVE, MOVER,
    OPENED_TOOL, REVEAL, REVEALED, TOOLS, TOOLSETS, UNDECLARE,
};

/// Whether `tool` is one of the fixture's tools.
pub fn owns_tool(tool: &str) -> bool {
    TOOLS.contains(&tool)
}

/// Whether `toolset` is one of the fixture's declared toolsets.
pub fn owns_toolset(toolset: &str) -> bool {
    TOOLSETS.contains(&toolset)
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

/// `decls` plus every declaration of the contract; without `with_flat`, [`FLAT`] is left out
/// (what [`UNDECLARE`] switches to). The server's event feature set is left as it is: the
/// contract needs only that one is declared, which every catalog does.
pub fn declare(decls: Declarations, with_flat: bool) -> Declarations {
    let visible = object(json!({"visible": {"type": "boolean"}, "delayMs": {"type": "integer"}}));
    let decls = decls
        .tool(ToolDef::new(REVEAL, "Set cf_revealed's visibility.").input_schema(visible.clone()))
        .tool(ToolDef::new(LATER, "Set it later, as something else.").input_schema(visible))
        .tool(
            ToolDef::new(MOVE, "Move cf_mover.")
                .input_schema(object(json!({"presence": {"enum": ["static", "dynamic"]}}))),
        )
        .tool(ToolDef::new(MOVER, "A tool that moves."))
        .tool(
            ToolDef::new(UNDECLARE, "Remove cf-flat, or restore it.")
                .input_schema(object(json!({"restore": {"type": "boolean"}}))),
        )
        .tool(
            ToolDef::new(REVEALED, "Revealed by cf_reveal.")
                .dynamic()
                .hidden(),
        )
        .tool(ToolDef::new(GROUPED, "In an undeclared group.").group(GROUP))
        .toolset(
            ToolsetDef::new(INSTANCED, "Conformance game")
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
            ToolsetDef::new(DEFAULT_OPEN, "Conformance open")
                .default_open()
                .tool(ToolDef::new(
                    OPENED_TOOL,
                    "A tool of a default-open toolset.",
                )),
        );
    if with_flat {
        decls.toolset(
            ToolsetDef::new(FLAT, "Conformance flat").tool(ToolDef::new(FLAT_TOOL, "Flat tool.")),
        )
    } else {
        decls
    }
}

/// The fixture's behaviour: opens of [`INSTANCED`] and every fixture tool. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Fixture {
    base: Declarations,
    handle: Handle,
}

impl Fixture {
    /// A fixture for a server whose own declarations are `base` (without the fixture; the
    /// server runs `declare(base, true)`), behind `handle`.
    pub fn new(base: Declarations, handle: Handle) -> Self {
        Fixture { base, handle }
    }

    /// The server's full catalog: `base` with the fixture, [`FLAT`] declared or not.
    pub fn catalog(base: &Declarations, with_flat: bool) -> Result<Catalog, Error> {
        declare(base.clone(), with_flat).build()
    }

    /// Opens a fixture toolset: an instance of [`INSTANCED`] gets a per-instance [`ECHO`]
    /// that accepts only its own name (§5.5).
    pub fn open(&self, ctx: &mut Context) -> OpenReply {
        if let Some(instance) = ctx.instance().map(|i| i.as_str().to_owned()) {
            let mut def = Tool::new(ECHO);
            def.description = Some(json!("Echo a value this instance accepts."));
            def.input_schema = json!({"type": "object", "required": ["value"],
                "properties": {"value": {"enum": [instance]}}});
            ctx.here().define(def);
        }
        OpenReply::text("opened")
    }

    /// Runs fixture tool `tool`; the SDK has already checked `args` against its definition.
    pub async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        let visible = args.get("visible").and_then(Value::as_bool).unwrap_or(true);
        let delay = Duration::from_millis(args.get("delayMs").and_then(Value::as_u64).unwrap_or(0));
        match tool {
            ECHO => {
                let instance = ctx.instance().map(|i| i.as_str()).unwrap_or_default();
                let value = args.get("value").and_then(Value::as_str).unwrap_or("");
                CallToolResult::text(format!("{instance}:{value}"))
            }
            FINISH => {
                // §5.3: a game that ends on its own is an `ended` record, not a close.
                ctx.here().end("the game finished");
                CallToolResult::text("finished")
            }
            REVEAL => {
                tokio::time::sleep(delay).await;
                ctx.update().tools().set_visible(REVEALED, visible);
                CallToolResult::text("revealed")
            }
            LATER => {
                // §6.2: something else's consequence, so it leaves after this result.
                let (handle, who) = (self.handle.clone(), ctx.principal().clone());
                ctx.after_commit(move || {
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        let mut update = Update::new();
                        update.tools().set_visible(REVEALED, visible);
                        update.event(Event::text("the world moved"));
                        if let Err(e) = handle.apply(&who, update) {
                            tracing::warn!(error = %e, "conformance fixture push rejected");
                        }
                    });
                });
                CallToolResult::text("later")
            }
            MOVE => {
                let to = match args.get("presence").and_then(Value::as_str) {
                    Some("dynamic") => Presence::Dynamic,
                    _ => Presence::Static,
                };
                ctx.update().move_tool(MOVER, to);
                CallToolResult::text("moved")
            }
            UNDECLARE => {
                let restore = args.get("restore").and_then(Value::as_bool) == Some(true);
                match Fixture::catalog(&self.base, restore) {
                    Ok(catalog) => {
                        self.handle.replace_catalog(catalog);
                        CallToolResult::text(if restore { "restored" } else { "removed" })
                    }
                    Err(e) => CallToolResult::error(format!("cannot change the catalog: {e}")),
                }
            }
            FLAT_TOOL => CallToolResult::text("flat"),
            MOVER => CallToolResult::text("moved"),
            OPENED_TOOL | GROUPED | REVEALED => CallToolResult::text(tool),
            other => CallToolResult::error(format!("`{other}` is not a conformance fixture tool")),
        }
    }
}

impl App for Fixture {
    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        Fixture::call_tool(self, ctx, tool, args).await
    }

    async fn open(&self, ctx: &mut Context) -> OpenReply {
        Fixture::open(self, ctx)
    }

    async fn close(&self, _ctx: &mut Context, _disconnect: bool) -> CloseReply {
        CloseReply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_declares_every_name_and_builds_beside_other_tools() {
        let base = Declarations::new("host-app", "1").tool(ToolDef::new("own", "Its own tool."));
        let with = Fixture::catalog(&base, true).expect("the fixture builds");
        let tools: Vec<&str> = with.tool_names().collect();
        for name in TOOLS.iter().chain(&["own"]) {
            assert!(tools.contains(name), "{name} missing from {tools:?}");
        }
        for toolset in [INSTANCED, FLAT, DEFAULT_OPEN] {
            assert!(with.toolset(toolset).is_some(), "{toolset} not declared");
        }
        assert!(
            with.toolset(GROUP).is_none(),
            "{GROUP} must stay undeclared"
        );
        let without = Fixture::catalog(&base, false).expect("the fixture builds");
        assert!(without.toolset(FLAT).is_none());
        assert!(!without.tool_names().any(|t| t == FLAT_TOOL));
    }

    #[test]
    fn ownership_covers_the_fixture_and_nothing_else() {
        assert!(TOOLS.iter().all(|t| owns_tool(t)));
        assert!(!owns_tool("own") && !owns_tool("play"));
        assert!(owns_toolset(INSTANCED) && owns_toolset(FLAT) && owns_toolset(DEFAULT_OPEN));
        assert!(!owns_toolset(GROUP) && !owns_toolset("go"));
    }
}
