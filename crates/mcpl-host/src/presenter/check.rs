//! The argument check before sending (RFC §5.5, §8.2, H68), with the `jsonschema` crate in
//! draft 2020-12 mode. Remote `$ref`s cannot be fetched (the crate is built without its
//! resolvers), so such a schema fails to compile and its check is skipped.
//!
//! The check follows JSON Schema, not any server's own habits. One allowance: a top-level
//! property with a `default` counts as given, because servers commonly fill defaults before
//! they check `required`; a copy of the arguments with those defaults filled in is validated.
//! The server still decides: it rejects a bad call with an ordinary tool error (§4.1).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::rc::Rc;

use jsonschema::Validator;
use serde_json::{Map, Value};

use super::render;

/// How many compiled schemas each thread keeps; past that the cache starts afresh.
const CACHED_SCHEMAS: usize = 256;

thread_local! {
    /// Compiled schemas by the hash of their JSON text, each with the schema it was compiled
    /// from (a hit must be equal to it, so a hash collision only costs a compile).
    static VALIDATORS: RefCell<HashMap<u64, (Value, Rc<Validator>)>> =
        RefCell::new(HashMap::new());
}

/// Feeds JSON text into a hasher without building it.
struct HashWriter(DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `schema` compiled, once per schema: the same definition is checked on every call of its
/// tool, and compiling is most of a check's cost.
fn validator(schema: &Value) -> Result<Rc<Validator>, jsonschema::ValidationError<'static>> {
    let mut hasher = HashWriter(DefaultHasher::new());
    let key = match serde_json::to_writer(&mut hasher, schema) {
        Ok(()) => Some(hasher.0.finish()),
        Err(_) => None,
    };
    let cached = key.and_then(|key| {
        VALIDATORS.with_borrow(|v| {
            v.get(&key)
                .filter(|(seen, _)| seen == schema)
                .map(|(_, compiled)| compiled.clone())
        })
    });
    if let Some(compiled) = cached {
        return Ok(compiled);
    }
    let compiled = Rc::new(jsonschema::draft202012::options().build(schema)?);
    if let Some(key) = key {
        VALIDATORS.with_borrow_mut(|v| {
            if v.len() >= CACHED_SCHEMAS {
                v.clear();
            }
            v.insert(key, (schema.clone(), compiled.clone()));
        });
    }
    Ok(compiled)
}

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
    let validator = match validator(schema) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schema is compiled once and its compiled form reused, keyed by the hash of its text;
    /// an equal schema built apart hits the same entry, a different one does not.
    #[test]
    fn a_schema_is_compiled_once_and_reused_for_an_equal_schema() {
        let schema = json!({"type": "object", "properties": {"move": {"type": "string"}}});
        let first = validator(&schema).expect("compiles");
        let again = validator(&schema.clone()).expect("compiles");
        assert!(Rc::ptr_eq(&first, &again), "compiled twice");
        let other = validator(&json!({"type": "object"})).expect("compiles");
        assert!(!Rc::ptr_eq(&first, &other));
    }

    /// The cache keeps every schema up to its bound, not only the latest, and never holds
    /// more than the bound.
    #[test]
    fn the_cache_keeps_schemas_up_to_its_bound_and_no_more() {
        let kept = json!({"type": "object", "title": "kept"});
        let first = validator(&kept).expect("compiles");
        for i in 0..10 {
            validator(&json!({"type": "object", "title": format!("s{i}")})).expect("compiles");
        }
        let again = validator(&kept).expect("compiles");
        assert!(Rc::ptr_eq(&first, &again), "dropped before the bound");
        for i in 0..2 * CACHED_SCHEMAS {
            validator(&json!({"title": format!("t{i}")})).expect("compiles");
        }
        assert!(VALIDATORS.with_borrow(|v| v.len()) <= CACHED_SCHEMAS);
    }
}
