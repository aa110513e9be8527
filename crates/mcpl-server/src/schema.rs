//! Argument and option validation with the `jsonschema` crate (draft 2020-12).
//!
//! Errors name the argument (or option) and the rule it broke, for example
//! "argument `move`: \"Z9\" is not one of [\"A1\",\"B2\"] (rule `enum`)".

use jsonschema::Validator;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// Why a schema does not compile, or why a value does not meet it; the `Display` is the
/// text a host (or the server's operator) reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema itself is not a valid draft 2020-12 schema.
    #[error("{0}")]
    Invalid(String),
    /// The value breaks the schema: every failure, each naming the member at fault and the
    /// rule.
    #[error("{}", .0.join("; "))]
    Violated(Vec<String>),
}

/// A compiled JSON Schema (draft 2020-12), cheap to clone: clones share the schema as
/// written and its validator.
#[derive(Clone)]
pub struct Schema(Arc<Compiled>);

/// What every clone of a [`Schema`] shares.
struct Compiled {
    source: Value,
    validator: Validator,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Schema").field(&self.0.source).finish()
    }
}

impl Schema {
    /// Compiles `schema` as draft 2020-12; the error says why it is not a valid schema.
    pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
        let validator = jsonschema::draft202012::new(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Schema(Arc::new(Compiled {
            source: schema.clone(),
            validator,
        })))
    }

    /// The schema as written.
    pub fn source(&self) -> &Value {
        &self.0.source
    }

    /// Whether `value` is valid.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.0.validator.is_valid(value)
    }

    /// Checks `value`; `what` is "argument" or "option". The error lists every failure, each
    /// naming the member at fault and the rule.
    pub fn check(&self, what: &str, value: &Value) -> Result<(), SchemaError> {
        // The common case costs one pass that builds nothing; errors are collected only for
        // a value that fails.
        if self.0.validator.is_valid(value) {
            return Ok(());
        }
        let failures: Vec<String> = self
            .0
            .validator
            .iter_errors(value)
            .map(|e| {
                let path = e.instance_path().to_string();
                let rule = e.kind().keyword().to_owned();
                let member = path.trim_start_matches('/');
                if member.is_empty() {
                    format!("{what}s: {e} (rule `{rule}`)")
                } else {
                    format!("{what} `{member}`: {e} (rule `{rule}`)")
                }
            })
            .collect();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(SchemaError::Violated(failures))
        }
    }
}

/// Compiled schemas by content, so a definition that arrives in the principal's state (a
/// dynamic tool's own definition) is compiled once, not on every call. Bounded: when full it
/// starts over, so a server whose definitions keep changing holds at most [`CACHE_CAP`].
#[derive(Default)]
pub(crate) struct SchemaCache {
    compiled: Mutex<HashMap<u64, Vec<Schema>>>,
}

/// The most compiled schemas a [`SchemaCache`] keeps.
pub(crate) const CACHE_CAP: usize = 1024;

impl fmt::Debug for SchemaCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaCache").finish_non_exhaustive()
    }
}

impl SchemaCache {
    /// The compiled form of `schema`, compiled now only if it was not seen before.
    pub(crate) fn get(&self, schema: &Value) -> Result<Schema, SchemaError> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        schema.hash(&mut hasher);
        let key = hasher.finish();
        if let Some(found) = self
            .lock()
            .get(&key)
            .and_then(|bucket| bucket.iter().find(|s| s.source() == schema))
        {
            return Ok(found.clone());
        }
        let compiled = Schema::compile(schema)?;
        let mut cache = self.lock();
        if cache.values().map(Vec::len).sum::<usize>() >= CACHE_CAP {
            cache.clear();
        }
        cache.entry(key).or_default().push(compiled.clone());
        Ok(compiled)
    }

    /// How many compiled schemas are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Schema>>> {
        self.compiled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_argument_and_the_rule() {
        let s = Schema::compile(&json!({"type": "object", "required": ["move"],
            "properties": {"move": {"enum": ["A1", "B2"]}}}))
        .unwrap();
        assert!(s.check("argument", &json!({"move": "A1"})).is_ok());
        let err = s
            .check("argument", &json!({"move": "Z9"}))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("argument `move`: "), "{err}");
        assert!(err.contains("rule `enum`"), "{err}");
        let err = s.check("argument", &json!({})).unwrap_err().to_string();
        assert!(err.contains("\"move\""), "{err}");
        assert!(err.contains("rule `required`"), "{err}");
    }

    #[test]
    fn draft_2020_12_keywords_apply() {
        let s = Schema::compile(&json!({"prefixItems": [{"type": "integer"}]})).unwrap();
        assert!(!s.is_valid(&json!(["x"])));
        assert!(Schema::compile(&json!({"type": 5})).is_err());
    }

    #[test]
    fn a_cached_schema_is_compiled_once_per_definition() {
        let cache = SchemaCache::default();
        let a = json!({"type": "object", "properties": {"m": {"enum": ["A1"]}}});
        let b = json!({"type": "object", "properties": {"m": {"enum": ["B2"]}}});
        let first = cache.get(&a).unwrap();
        let again = cache.get(&a).unwrap();
        assert!(
            Arc::ptr_eq(&first.0, &again.0),
            "the same definition is not compiled twice"
        );
        let other = cache.get(&b).unwrap();
        assert!(!Arc::ptr_eq(&first.0, &other.0));
        assert!(other.check("argument", &json!({"m": "B2"})).is_ok());
        assert!(other.check("argument", &json!({"m": "A1"})).is_err());
        let err = cache.get(&json!({"type": 5})).unwrap_err();
        assert!(matches!(err, SchemaError::Invalid(ref text) if !text.is_empty()));
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = SchemaCache::default();
        for n in 0..CACHE_CAP + 10 {
            cache.get(&json!({"enum": [n]})).unwrap();
        }
        assert!(cache.len() <= CACHE_CAP, "{} kept", cache.len());
    }

    #[test]
    fn the_source_is_the_schema_as_written() {
        let written = json!({"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}});
        let s = Schema::compile(&written).unwrap();
        assert_eq!(s.source(), &written);
        let clone = s.clone();
        assert_eq!(clone.source(), &written, "a clone keeps it");
        assert!(
            std::ptr::eq(clone.source(), s.source()),
            "and shares it: a call's clone copies nothing"
        );
    }
}
