//! Decoding from a `Value` the caller owns, moving its parts instead of rebuilding them.
//!
//! A transport hands over a message already parsed into a [`Value`]. Decoding a type from it
//! with `serde_json::from_value` rebuilds every nested object and array it keeps as raw JSON
//! (a tool's input schema, say), and a type with `#[serde(flatten)]` members buffers the
//! whole object once more on top. The decoders here take the object apart member by member:
//! raw JSON members move over as they are, typed members decode from their own (small)
//! values, and unknown members go to `extra` in order. They accept and refuse exactly what
//! the derived `Deserialize` implementations do (the tests compare the two on generated
//! input); only the wording of an error may differ.

use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde_json::{Error, Map, Value};

/// The members of an object, or an error naming what was expected instead.
pub(crate) fn object(value: Value, expected: &'static str) -> Result<Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(Error::invalid_type(unexpected(&other), &expected)),
    }
}

/// A typed member: decoded from its own value.
pub(crate) fn typed<T: DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
}

/// An optional member: `null` reads as absent, as serde reads an `Option`.
pub(crate) fn optional<T: DeserializeOwned>(value: Value) -> Result<Option<T>, Error> {
    match value {
        Value::Null => Ok(None),
        v => serde_json::from_value(v).map(Some),
    }
}

/// An optional object member: `null` reads as absent; an object moves over as it is.
pub(crate) fn optional_object(value: Value) -> Result<Option<Map<String, Value>>, Error> {
    match value {
        Value::Null => Ok(None),
        v => object(v, "a map").map(Some),
    }
}

/// An optional raw member: `null` reads as absent; anything else moves over as it is.
pub(crate) fn raw(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        v => Some(v),
    }
}

/// An optional array whose items decode with `item`: `null` reads as absent.
pub(crate) fn optional_list<T>(
    value: Value,
    item: impl Fn(Value) -> Result<T, Error>,
) -> Result<Option<Vec<T>>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .into_iter()
            .map(item)
            .collect::<Result<_, _>>()
            .map(Some),
        other => Err(Error::invalid_type(unexpected(&other), &"a sequence")),
    }
}

/// A required member that was absent.
pub(crate) fn missing(field: &'static str) -> Error {
    Error::missing_field(field)
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}
