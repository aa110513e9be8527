//! The vectors as data: `conformance/vectors.json` (format `mcpl-rfc014-vectors`, version 1).
//!
//! Every vector has its id, title, rule and the sides it binds, and its expectations: as
//! `steps` (requests, awaited messages and matchers) for the vectors a script can drive, and
//! as `expect` (per side, the values the coded checks compare with) for what stays a Rust
//! procedure. The server suite runs a vector's steps before its coded check, and the checks
//! read `expect` through `Wants` (server) or the host context, so a changed expectation
//! changes the verdict; `conformance/run.py` runs the same steps without Rust.
//! `docs/CONFORMANCE.md` describes the format.

use crate::verdict::fail;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The file as shipped, compiled in.
const EMBEDDED: &str = include_str!("../../../conformance/vectors.json");

/// The format name the file declares.
pub const FORMAT: &str = "mcpl-rfc014-vectors";
/// The format version this suite reads.
pub const VERSION: u64 = 1;

/// A parsed vector file.
#[derive(Debug, Clone, Deserialize)]
pub struct VectorFile {
    /// `mcpl-rfc014-vectors`.
    pub format: String,
    /// The format version.
    pub version: u64,
    /// The 38 vectors, in order.
    pub vectors: Vec<VectorData>,
}

/// One vector in the file.
#[derive(Debug, Clone, Deserialize)]
pub struct VectorData {
    /// `v01` .. `v38`.
    pub id: String,
    /// A short title.
    pub title: String,
    /// The rule, restated, with its section.
    pub rule: String,
    /// `"server"`, `"host"` or both: the sides the rule binds.
    pub sides: Vec<String>,
    /// The scripted steps, for the vectors expressible as requests and expectations.
    #[serde(default)]
    pub steps: Vec<Value>,
    /// The expectations the coded checks read, by side (`"server"`, `"host"`) and name: the
    /// values a check compares what it saw with (a carrier, a visibility, a presence, the
    /// names a statement must state, a bound). They live only here.
    #[serde(default)]
    pub expect: Map<String, Value>,
}

/// Why a vector file is refused, an expectation is missing, or an answer differs from a
/// step's matcher; the `Display` is the text the suite's user reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The text is not a vector file at all.
    #[error("not a vector file: {0}")]
    NotAVectorFile(String),
    /// A vector file of another format or version.
    #[error("format `{format}` version {version} is not {FORMAT} version {VERSION}")]
    WrongFormat {
        /// The file's format.
        format: String,
        /// The file's version.
        version: u64,
    },
    /// The file has no such expectation.
    #[error("conformance/vectors.json has no expectation {id} expect.{side}.{key}")]
    Missing {
        /// The vector.
        id: String,
        /// `server` or `host`.
        side: String,
        /// The expectation.
        key: String,
    },
    /// An answer does not meet a matcher: `{path} should {rule}`.
    #[error("{path} should {rule}")]
    Mismatch {
        /// The JSON pointer the matcher names.
        path: String,
        /// What the member should be, and what it is.
        rule: String,
    },
}

impl VectorFile {
    /// Parses a vector file; the error names what is wrong.
    pub fn parse(text: &str) -> Result<VectorFile, DataError> {
        let file: VectorFile =
            serde_json::from_str(text).map_err(|e| DataError::NotAVectorFile(e.to_string()))?;
        if file.format != FORMAT || file.version != VERSION {
            return Err(DataError::WrongFormat {
                format: file.format,
                version: file.version,
            });
        }
        Ok(file)
    }

    /// The file shipped with the suite.
    pub fn embedded() -> VectorFile {
        VectorFile::parse(EMBEDDED).unwrap_or_else(|e| panic!("conformance/vectors.json: {e}"))
    }

    /// The vector `id`.
    pub fn get(&self, id: &str) -> Option<&VectorData> {
        self.vectors.iter().find(|v| v.id == id)
    }

    /// The expectation `key` of vector `id` on `side`; the error names what is missing.
    pub fn want(&self, id: &str, side: &str, key: &str) -> Result<&Value, DataError> {
        self.get(id)
            .and_then(|v| v.expect.get(side))
            .and_then(|e| e.get(key))
            .ok_or_else(|| DataError::Missing {
                id: id.to_owned(),
                side: side.to_owned(),
                key: key.to_owned(),
            })
    }
}

/// Reads typed expectations out of the vector file for one vector and side; a missing or
/// mistyped expectation fails the check, naming it.
pub(crate) struct Wants<'a> {
    pub(crate) file: &'a VectorFile,
    pub(crate) id: &'a str,
    pub(crate) side: &'a str,
}

impl Wants<'_> {
    /// The expectation `key`, as JSON.
    pub(crate) fn value(&self, key: &str) -> Result<Value, crate::verdict::Verdict> {
        self.file
            .want(self.id, self.side, key)
            .cloned()
            .map_err(|e| crate::verdict::Verdict::Fail(e.to_string()))
    }

    /// The expectation `key`, a string.
    pub(crate) fn str(&self, key: &str) -> Result<String, crate::verdict::Verdict> {
        match self.value(key)? {
            Value::String(s) => Ok(s),
            other => fail!(
                "{} expect.{}.{key} should be a string, it is {other}",
                self.id,
                self.side
            ),
        }
    }

    /// The expectation `key`, a boolean.
    pub(crate) fn bool(&self, key: &str) -> Result<bool, crate::verdict::Verdict> {
        match self.value(key)? {
            Value::Bool(b) => Ok(b),
            other => fail!(
                "{} expect.{}.{key} should be a boolean, it is {other}",
                self.id,
                self.side
            ),
        }
    }

    /// The expectation `key`, a non-negative integer.
    pub(crate) fn u64(&self, key: &str) -> Result<u64, crate::verdict::Verdict> {
        match self.value(key)?.as_u64() {
            Some(n) => Ok(n),
            None => fail!(
                "{} expect.{}.{key} should be a non-negative integer",
                self.id,
                self.side
            ),
        }
    }

    /// The expectation `key`, an array of strings.
    pub(crate) fn strs(&self, key: &str) -> Result<Vec<String>, crate::verdict::Verdict> {
        let value = self.value(key)?;
        let items = value.as_array().map(|a| {
            a.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        match items {
            Some(Some(v)) => Ok(v),
            _ => fail!(
                "{} expect.{}.{key} should be an array of strings",
                self.id,
                self.side
            ),
        }
    }
}

/// A copy of `value` changed so that an expectation holding it no longer holds: a string
/// gets a suffix, a boolean flips, a number grows by 1000, an array's first element is altered.
/// The tests alter every expectation in a copy of the file this way and see the good
/// fixture fail.
pub fn altered(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(format!("{s}-altered")),
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => json!(u + 1000),
            (None, Some(i)) => json!(i + 1000),
            _ => json!(n.as_f64().unwrap_or(0.0) + 1000.0),
        },
        Value::Array(a) => {
            let mut a = a.clone();
            match a.first_mut() {
                Some(first) => *first = altered(first),
                None => a.push(json!("altered")),
            }
            Value::Array(a)
        }
        other => json!({"altered": other}),
    }
}

/// Every expectation `(vector id, key)` of `side` in `file`, for the tests that alter each.
pub fn expectations(file: &VectorFile, side: &str) -> Vec<(String, String)> {
    file.vectors
        .iter()
        .flat_map(|v| {
            v.expect
                .get(side)
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys())
                .map(|k| (v.id.clone(), k.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A copy of `file` with expectation `key` of vector `id` on `side` [`altered`].
pub fn with_altered(file: &VectorFile, id: &str, side: &str, key: &str) -> VectorFile {
    let mut copy = file.clone();
    if let Some(v) = copy.vectors.iter_mut().find(|v| v.id == id)
        && let Some(e) = v.expect.get_mut(side).and_then(|e| e.get_mut(key))
    {
        *e = altered(e);
    }
    copy
}

/// Replaces `${name}` in every string of `value` with the variable's text.
pub(crate) fn substitute(value: &Value, vars: &HashMap<String, String>) -> Value {
    match value {
        Value::String(s) => {
            let mut out = s.clone();
            for (k, v) in vars {
                out = out.replace(&format!("${{{k}}}"), v);
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute(x, vars)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// Whether `actual` holds `wanted`: equal, or for objects every wanted member held.
fn holds(actual: &Value, wanted: &Value) -> bool {
    match (actual, wanted) {
        (Value::Object(a), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| a.get(k).is_some_and(|av| holds(av, wv))),
        _ => actual == wanted,
    }
}

/// Checks one matcher against an answer (`{"result": ...}` or `{"error": ...}`); `Err` says
/// what differed.
pub fn check(answer: &Value, matcher: &Value) -> Result<(), DataError> {
    let path = matcher.get("path").and_then(Value::as_str).unwrap_or("");
    let found = answer.pointer(path);
    let mismatch = |rule: String| {
        Err(DataError::Mismatch {
            path: path.to_owned(),
            rule,
        })
    };
    if let Some(want) = matcher.get("exists").and_then(Value::as_bool)
        && found.is_some() != want
    {
        return mismatch(format!("{}exist", if want { "" } else { "not " }));
    }
    if let Some(want) = matcher.get("equals")
        && found != Some(want)
    {
        return mismatch(format!("equal {want}, it is {found:?}"));
    }
    if let Some(unwanted) = matcher.get("notEquals")
        && found == Some(unwanted)
    {
        return mismatch(format!("not equal {unwanted}"));
    }
    if let Some(part) = matcher.get("contains")
        && !contains(found, part)
    {
        return mismatch(format!("contain {part}, it is {found:?}"));
    }
    if let Some(part) = matcher.get("lacks")
        && contains(found, part)
    {
        return mismatch(format!("not contain {part}, it is {found:?}"));
    }
    Ok(())
}

/// Whether `found` contains `part`: a substring of a string, or an element of an array that
/// holds every member given.
fn contains(found: Option<&Value>, part: &Value) -> bool {
    match (found, part) {
        (Some(Value::String(s)), Value::String(p)) => s.contains(p.as_str()),
        (Some(Value::Array(items)), p) => items.iter().any(|i| holds(i, p)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::VECTORS;

    #[test]
    fn the_file_lists_the_catalogue_s_38_vectors_with_their_titles() {
        let file = VectorFile::embedded();
        assert_eq!(file.vectors.len(), 38);
        for (v, rule) in file.vectors.iter().zip(VECTORS.iter()) {
            assert_eq!(v.id, rule.id);
            assert_eq!(v.title, rule.title, "{}", v.id);
            assert_eq!(v.rule, rule.rfc, "{}", v.id);
            assert!(!v.sides.is_empty(), "{} binds no side", v.id);
        }
    }

    #[test]
    fn matchers_judge_paths() {
        let a = json!({"result": {"instance": "x", "open": [{"toolset": "t", "title": "T"}],
                                  "content": [{"text": "a b"}]}});
        assert!(check(&a, &json!({"path": "/result/instance", "equals": "x"})).is_ok());
        assert!(check(&a, &json!({"path": "/result/instance", "equals": "y"})).is_err());
        assert!(check(&a, &json!({"path": "/error", "exists": false})).is_ok());
        assert!(check(&a, &json!({"path": "/error", "exists": true})).is_err());
        assert!(check(&a, &json!({"path": "/result/isError", "notEquals": true})).is_ok());
        assert!(
            check(
                &a,
                &json!({"path": "/result/open", "contains": {"toolset": "t"}})
            )
            .is_ok()
        );
        assert!(
            check(
                &a,
                &json!({"path": "/result/open", "contains": {"toolset": "u"}})
            )
            .is_err()
        );
        assert!(
            check(
                &a,
                &json!({"path": "/result/content/0/text", "contains": "b"})
            )
            .is_ok()
        );
    }

    #[test]
    fn a_wrong_format_or_version_is_refused() {
        assert!(VectorFile::parse(r#"{"format": "x", "version": 1, "vectors": []}"#).is_err());
        let v2 = format!(r#"{{"format": "{FORMAT}", "version": 2, "vectors": []}}"#);
        assert!(VectorFile::parse(&v2).is_err());
        assert!(VectorFile::parse("[]").is_err());
    }
}
