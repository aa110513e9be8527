//! What the arcade declares: the static `challenge` tool, the instanced `go` toolset, the
//! default-open `lobby` and the undeclared `tutor` group (§5.4), so every RFC-014 path has a
//! real user.

use mcpl_server::{Declarations, ToolDef, ToolsetDef};
use serde_json::json;

use crate::options;

/// The Go toolset: one instance per game.
pub const GO: &str = "go";
/// The lobby: open from the start of every session, without instances.
pub const LOBBY: &str = "lobby";
/// The tutor group: tools tagged with a toolset the manifest does not declare; the host
/// opens and closes it on its own.
pub const TUTOR: &str = "tutor";

fn no_args() -> serde_json::Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// The arcade's declarations.
pub fn declarations() -> Declarations {
    Declarations::new("mcpl-arcade", env!("CARGO_PKG_VERSION"))
        .surface("Arcade", Some("Games of Go against the bot or other agents"))
        .instructions(
            "Open the `go` toolset with options {\"size\": 9} to play the bot, or with an \
             `opponent` to play another agent. `challenge` invites an agent.",
        )
        .tool(
            ToolDef::new(
                "challenge",
                "Challenge another agent to a game of Go; they get an invitation to accept.",
            )
            .input_schema(json!({
                "type": "object",
                "required": ["who", "size"],
                "properties": {
                    "who": {"type": "string", "minLength": 1, "description": "The agent's id."},
                    "size": {"enum": [9, 13, 19], "description": "Board size."}
                },
                "additionalProperties": false
            })),
        )
        .toolset(
            ToolsetDef::new(GO, "Go")
                .summary("A game of Go against the bot or another agent")
                .instances()
                .options_schema(options::schema())
                .tool(
                    ToolDef::new(
                        "play",
                        "Play a move. Points are a column A-T without I and a row from 1 at \
                         the bottom, such as D4.",
                    )
                    .input_schema(json!({
                        "type": "object",
                        "required": ["move"],
                        "properties": {"move": {"type": "string"}},
                        "additionalProperties": false
                    }))
                    .hidden(),
                )
                .tool(
                    ToolDef::new(
                        "pass",
                        "Pass your turn. Two passes in a row end the game, which is then counted.",
                    )
                    .input_schema(no_args())
                    .hidden(),
                )
                .tool(ToolDef::new("resign", "Resign the game.").input_schema(no_args()))
                .tool(
                    ToolDef::new("board", "Show the board, the captures and whose turn it is.")
                        .input_schema(no_args()),
                ),
        )
        .toolset(
            ToolsetDef::new(LOBBY, "Lobby")
                .summary("Standings and your games")
                .default_open()
                .tool(
                    ToolDef::new("standings", "Show the wins and losses of every player.")
                        .input_schema(no_args()),
                )
                .tool(
                    ToolDef::new(
                        "games",
                        "List your games and the challenges waiting for your answer.",
                    )
                    .input_schema(no_args()),
                ),
        )
        .tool(
            ToolDef::new("rules", "Explain the rules of Go as the arcade plays them.")
                .input_schema(no_args())
                .group(TUTOR),
        )
        .tool(
            ToolDef::new("hint", "Ask the bot which move it would play in one of your games.")
                .input_schema(json!({
                    "type": "object",
                    "required": ["game"],
                    "properties": {"game": {"type": "string", "description": "The game's instance name."}},
                    "additionalProperties": false
                }))
                .group(TUTOR),
        )
}
