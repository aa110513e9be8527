//! The argument check before sending (RFC §5.5, §8.2, H68), with the `jsonschema` crate in
//! draft 2020-12 mode. Remote `$ref`s cannot be fetched (the crate is built without its
//! resolvers), so such a schema fails to compile and its check is skipped.
//!
//! The check follows JSON Schema, not any server's own habits. One allowance: a top-level
//! property with a `default` counts as given, because servers commonly fill defaults before
//! they check `required`; a copy of the arguments with those defaults filled in is validated.
//! The server still decides: it rejects a bad call with an ordinary tool error (§4.1).

use serde_json::{Map, Value};

use super::render;

/// The check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgCheck {
    /// The arguments validate.
    Valid,
    /// They do not: one line per failing value, each with the JSON Pointer of the value and,
    /// for `anyOf`/`oneOf`, every alternative.
    Invalid(Vec<String>),
    /// The schema could not be compiled, so nothing was checked (the call goes ahead).
    Skipped,
}

/// Checks `args` against `schema`.
pub fn check_args(schema: &Value, args: &Map<String, Value>) -> ArgCheck {
    let validator = match jsonschema::draft202012::options().build(schema) {
        Ok(v) => v,
        Err(e) => {
            // H81: the schema's content is the server's; log only that it failed.
            tracing::warn!(error_kind = ?std::mem::discriminant(e.kind()), "input schema does not compile; argument check skipped");
            return ArgCheck::Skipped;
        }
    };
    let mut filled = args.clone();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (k, p) in props {
            if let (false, Some(d)) = (filled.contains_key(k), p.get("default")) {
                filled.insert(k.clone(), d.clone());
            }
        }
    }
    let instance = Value::Object(filled);
    let mut problems = Vec::new();
    for err in validator.iter_errors(&instance) {
        let at = err.instance_path().as_str().to_owned();
        let at = if at.is_empty() { "/".to_owned() } else { at };
        let keyword_path = err.schema_path().as_str().to_owned();
        let mut line = format!("at `{at}`: {}", err.masked());
        if keyword_path.ends_with("/anyOf") || keyword_path.ends_with("/oneOf") {
            if let Some(Value::Array(alts)) = schema.pointer(&keyword_path) {
                let list: Vec<String> = alts.iter().map(render::json).collect();
                line.push_str(&format!("; alternatives: {}", list.join(" | ")));
            }
        }
        problems.push(line);
    }
    if problems.is_empty() {
        ArgCheck::Valid
    } else {
        ArgCheck::Invalid(problems)
    }
}
