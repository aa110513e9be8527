//! Argument and option validation with the `jsonschema` crate (draft 2020-12).
//!
//! Errors name the argument (or option) and the rule it broke, for example
//! "argument `move`: \"Z9\" is not one of [\"A1\",\"B2\"] (rule `enum`)".

use jsonschema::Validator;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

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

/// A compiled JSON Schema (draft 2020-12), cheap to clone.
#[derive(Clone)]
pub struct Schema {
    source: Value,
    validator: Arc<Validator>,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Schema").field(&self.source).finish()
    }
}

impl Schema {
    /// Compiles `schema` as draft 2020-12; the error says why it is not a valid schema.
    pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
        let validator = jsonschema::draft202012::new(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Schema {
            source: schema.clone(),
            validator: Arc::new(validator),
        })
    }

    /// The schema as written.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Whether `value` is valid.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Checks `value`; `what` is "argument" or "option". The error lists every failure, each
    /// naming the member at fault and the rule.
    pub fn check(&self, what: &str, value: &Value) -> Result<(), SchemaError> {
        let failures: Vec<String> = self
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
    fn the_source_is_the_schema_as_written() {
        let written = json!({"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}});
        let s = Schema::compile(&written).unwrap();
        assert_eq!(s.source(), &written);
        assert_eq!(s.clone().source(), &written, "a clone keeps it");
    }
}
