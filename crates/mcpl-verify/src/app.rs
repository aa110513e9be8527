//! The app the verification server runs: an instanced toolset `game` (tools `board`, `play`,
//! `pass`) and a plain toolset `notes` (tool `note`), with a little app code that changes
//! presence on open and on `play`.

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Call, CallKind, CloseReply, Declarations, OpenReply, Reply, ToolDef, ToolsetDef,
};
use serde_json::json;

/// The tools of the instanced toolset, in a fixed order (for seeded choices).
pub const GAME_TOOLS: [&str; 3] = ["board", "play", "pass"];

/// The instance names the schedules use.
pub const INSTANCES: [&str; 2] = ["a", "b"];

/// The declarations: `game` (instanced) and `notes` (plain).
pub fn declarations() -> Declarations {
    Declarations::new("verify", "0.1.0")
        .toolset(
            ToolsetDef::new("game", "Go")
                .summary("A game of Go")
                .instances()
                .tool(ToolDef::new("board", "Show the board."))
                .tool(ToolDef::new("play", "Play a move.").input_schema(
                    json!({"type": "object", "properties": {"move": {"type": "string"}}}),
                ))
                .tool(ToolDef::new("pass", "Pass your turn.")),
        )
        .toolset(ToolsetDef::new("notes", "Notes").tool(ToolDef::new("note", "Write a note.")))
}

/// The definition of `play` offering move `n`.
pub fn play_def(n: u8) -> Tool {
    let mut t = Tool::new("play");
    t.description = Some(json!(format!("Play a move (v{n}).")));
    t.input_schema = json!({"type": "object", "properties": {"move": {"enum": [format!("m{n}")]}}});
    t
}

/// What each open, close and tool call does.
pub fn run(call: &mut Call) -> Reply {
    let ctx = &mut call.context;
    match &call.kind {
        CallKind::Open => {
            if ctx.toolset().is_some_and(|t| t.as_str() == "game") {
                ctx.here().show("board").show("play").show("pass");
            }
            Reply::Open(OpenReply::text("opened"))
        }
        CallKind::Close { .. } => Reply::Close(CloseReply::text("closed")),
        CallKind::Tool { tool, .. } => {
            if tool.as_str() == "play" {
                ctx.here().hide("play").hide("pass");
            }
            Reply::Tool(CallToolResult::text(format!("{tool} done")))
        }
        _ => Reply::Tool(CallToolResult::error("unexpected call")),
    }
}
