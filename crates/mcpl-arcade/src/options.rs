//! The options of the `go` toolset, `{size, opponent?, komi?}`, and their JSON Schema.
//!
//! The SDK validates options against [`schema`] before the arcade sees them; [`GoOptions`]
//! reads them again with its own checks, so a host without `toolHints` (or a schema drift)
//! still gets a clear refusal.

use serde_json::{Map, Value, json};

use crate::error::ArcadeError;
use crate::go::{BoardSize, Komi};

/// Who the other player is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opponent {
    /// The MCTS bot, which plays White.
    Bot,
    /// Another agent, by principal id.
    Agent(String),
}

/// The options of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoOptions {
    /// 9, 13 or 19 lines.
    pub size: BoardSize,
    /// The bot (default) or another agent.
    pub opponent: Opponent,
    /// Points for White; 7.5 by default.
    pub komi: Komi,
}

/// The JSON Schema of the options, for the toolset declaration.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["size"],
        "properties": {
            "size": {"enum": [9, 13, 19], "description": "Board size."},
            "opponent": {
                "type": "string", "minLength": 1,
                "description": "\"bot\" (the default) or the id of another agent to challenge."
            },
            "komi": {
                "type": "number", "multipleOf": 0.5, "minimum": -150, "maximum": 150,
                "description": "Points White receives; 7.5 by default."
            }
        },
        "additionalProperties": false
    })
}

impl GoOptions {
    /// Reads options from their JSON object.
    pub fn from_json(options: &Value) -> Result<Self, ArcadeError> {
        let bad = |why: String| ArcadeError::BadInput {
            what: "options",
            why,
        };
        let empty = Map::new();
        let object = match options {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => return Err(bad(format!("expected an object, got `{other}`"))),
        };
        if let Some(key) = object
            .keys()
            .find(|k| !["size", "opponent", "komi"].contains(&k.as_str()))
        {
            return Err(bad(format!("unknown option `{key}`")));
        }
        let size = match object.get("size") {
            None => return Err(bad("`size` is required: 9, 13 or 19".into())),
            Some(v) => match v.as_u64() {
                Some(n) => BoardSize::new(n)?,
                None => return Err(bad(format!("`size` must be 9, 13 or 19, not `{v}`"))),
            },
        };
        let opponent = match object.get("opponent") {
            None => Opponent::Bot,
            Some(Value::String(s)) if s == "bot" => Opponent::Bot,
            Some(Value::String(s)) if !s.trim().is_empty() => Opponent::Agent(s.clone()),
            Some(v) => {
                return Err(bad(format!(
                    "`opponent` must be \"bot\" or an agent id, not `{v}`"
                )));
            }
        };
        let komi = match object.get("komi") {
            None => Komi::DEFAULT,
            Some(v) => match v.as_f64() {
                Some(points) => Komi::new(points)?,
                None => return Err(bad(format!("`komi` must be a number, not `{v}`"))),
            },
        };
        Ok(Self {
            size,
            opponent,
            komi,
        })
    }

    /// The options as JSON, as an open or a suggestion carries them.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"size": self.size.lines()});
        if let Opponent::Agent(id) = &self.opponent {
            out["opponent"] = json!(id);
        }
        if self.komi != Komi::DEFAULT {
            out["komi"] = json!(self.komi.points());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_bot_and_seven_and_a_half() {
        let options = GoOptions::from_json(&json!({"size": 13})).unwrap();
        assert_eq!(options.size, BoardSize::THIRTEEN);
        assert_eq!(options.opponent, Opponent::Bot);
        assert_eq!(options.komi, Komi::DEFAULT);
        assert_eq!(options.to_json(), json!({"size": 13}));
    }

    #[test]
    fn bad_options_name_the_problem() {
        let err = |v: Value| GoOptions::from_json(&v).unwrap_err().to_string();
        assert_eq!(
            err(json!({"size": 10})),
            "unsupported board size 10: use 9, 13 or 19"
        );
        assert!(err(json!({})).contains("`size` is required"));
        assert!(err(json!({"size": "9"})).contains("must be 9, 13 or 19"));
        assert!(err(json!({"size": 9, "colour": "white"})).contains("unknown option `colour`"));
        assert!(err(json!({"size": 9, "opponent": 3})).contains("`opponent` must be"));
        assert!(err(json!({"size": 9, "komi": 7.3})).contains("bad komi 7.3"));
    }

    #[test]
    fn options_round_trip_and_match_the_schema() {
        let options =
            GoOptions::from_json(&json!({"size": 19, "opponent": "ada", "komi": 6.5})).unwrap();
        assert_eq!(GoOptions::from_json(&options.to_json()).unwrap(), options);
        let schema = schema();
        assert_eq!(schema["properties"]["size"]["enum"], json!([9, 13, 19]));
    }
}
