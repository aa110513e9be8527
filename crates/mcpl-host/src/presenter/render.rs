//! Bounded rendering of server-written JSON: first sentences, signatures, printed JSON and
//! definition identity (H69-H76).
//!
//! Nothing here recurses on server data: every walk carries an explicit stack and a depth
//! counter, so the stack size is never the limit and the same input renders the same way in
//! debug and release builds on every target (H72).

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

pub use crate::text::{MAX_SENTENCE, cut, first_sentence};

/// The fixed nesting bound for signatures and printed JSON (H72).
pub const MAX_DEPTH: usize = 64;
/// The longest signature, in bytes, before "(too long to show)" (H73).
pub const MAX_SIGNATURE: usize = 2_000;
/// The longest printed JSON, in bytes, before "(too long to show)" (H73).
pub const MAX_JSON: usize = 16_000;
/// What a printed value deeper than [`MAX_DEPTH`] becomes (H72).
pub const TOO_DEEP: &str = "(too deep to show)";
/// What ends output cut at its size bound (H73).
pub const TOO_LONG: &str = "(too long to show)";

/// A type read only from a string or an array of strings; anything else is unknown (H70).
pub fn type_of(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) if !ts.is_empty() && ts.iter().all(Value::is_string) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "unknown".to_owned(),
    }
}

/// A one-line signature, `name(a: string, b?: "x"|"y")`, bounded in depth and size (H72, H73).
///
/// Only the top-level properties are listed; a property's `enum`/`const` literals are printed
/// with [`json`], which renders anything nested past the bound as `…`.
pub fn signature(name: &str, schema: &Value) -> String {
    let mut out = format!("{name}(");
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (i, (key, prop)) in props.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let opt = if required.contains(&key.as_str()) {
                ""
            } else {
                "?"
            };
            let ty = literal_type(prop);
            let _ = write!(out, "{key}{opt}: {ty}");
            // H73: the closing `)` still to come counts toward the bound.
            if out.len() + 1 > MAX_SIGNATURE {
                return format!("{} {TOO_LONG}", cut(&out, MAX_SIGNATURE));
            }
        }
    }
    out.push(')');
    out
}

fn literal_type(prop: &Value) -> String {
    if let Some(Value::Array(values)) = prop.get("enum") {
        let parts: Vec<String> = values.iter().map(|v| json_at(v, 1, "…", 200)).collect();
        return parts.join("|");
    }
    if let Some(c) = prop.get("const") {
        return json_at(c, 1, "…", 200);
    }
    type_of(prop)
}

/// Prints JSON compactly, with values nested deeper than [`MAX_DEPTH`] shown as
/// "(too deep to show)" and output past [`MAX_JSON`] cut with "(too long to show)".
pub fn json(value: &Value) -> String {
    json_at(value, 0, TOO_DEEP, MAX_JSON)
}

/// Iterative compact printer: `start` is the depth of `value`, `deep` what replaces a value
/// past [`MAX_DEPTH`], `max` the byte bound.
fn json_at(value: &Value, start: usize, deep: &str, max: usize) -> String {
    enum Step<'a> {
        Value(&'a Value, usize),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(value, start)];
    while let Some(step) = stack.pop() {
        if out.len() > max {
            return format!("{} {TOO_LONG}", cut(&out, max));
        }
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                out.push_str(&Value::String(k.to_owned()).to_string());
                out.push(':');
            }
            Step::Value(v, depth) => match v {
                Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => out.push_str(deep),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item, depth + 1));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    let entries: Vec<_> = map.iter().collect();
                    for (i, (k, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item, depth + 1));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                scalar => out.push_str(&scalar.to_string()),
            },
        }
    }
    if out.len() > max {
        return format!("{} {TOO_LONG}", cut(&out, max));
    }
    out
}

/// Definition identity (H75): a SHA-256 over canonical JSON (sorted keys, numbers in one
/// form), computed iteratively over the whole value, so two values that differ anywhere, at
/// any depth, get different identities.
pub fn identity(value: &Value) -> String {
    /// 2^53: every whole number below it, and no wider range, converts to f64 and back exactly.
    const EXACT_F64: f64 = 9_007_199_254_740_992.0;
    enum Item<'a> {
        V(&'a Value),
        K(&'a str),
        End,
    }
    fn text(h: &mut Sha256, tag: &[u8], s: &str) {
        h.update(tag);
        h.update(s.len().to_le_bytes());
        h.update(s.as_bytes());
    }
    let mut h = Sha256::new();
    let mut stack = vec![Item::V(value)];
    while let Some(item) = stack.pop() {
        match item {
            // The end marker keeps `[[1],2]` and `[[1,2]]` apart.
            Item::End => h.update(b")"),
            Item::K(k) => text(&mut h, b"k", k),
            Item::V(Value::Null) => h.update(b"n"),
            Item::V(Value::Bool(b)) => h.update(if *b { b"t" } else { b"f" }),
            Item::V(Value::Number(n)) => {
                // Normalized: 1 and 1.0 are one number. Below 2^53 a whole f64 is the
                // number it came from; at 2^53 and past it, 2^53 + 1 would read as 2^53, so
                // those keep their own form.
                let f = n.as_f64().unwrap_or(0.0);
                let form = if f.fract() == 0.0 && f.abs() < EXACT_F64 {
                    format!("{}", f as i64)
                } else {
                    n.to_string()
                };
                text(&mut h, b"#", &form);
            }
            Item::V(Value::String(s)) => text(&mut h, b"s", s),
            Item::V(Value::Array(items)) => {
                h.update(b"[");
                stack.push(Item::End);
                stack.extend(items.iter().rev().map(Item::V));
            }
            Item::V(Value::Object(map)) => {
                h.update(b"{");
                stack.push(Item::End);
                let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                keys.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in keys.into_iter().rev() {
                    stack.push(Item::V(v));
                    stack.push(Item::K(k));
                }
            }
        }
    }
    let digest = h.finalize();
    digest.iter().take(16).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identity_orders_keys_and_normalizes_numbers() {
        assert_eq!(
            identity(&json!({"a": 1, "b": 2})),
            identity(&json!({"b": 2, "a": 1.0}))
        );
        assert_ne!(identity(&json!([[1], 2])), identity(&json!([[1, 2]])));
        // Only whole numbers in the exact range are written as integers: a fraction keeps its
        // digits, and numbers past 2^53 keep their own form.
        assert_ne!(identity(&json!(1.5)), identity(&json!(1)));
        assert_ne!(identity(&json!(1e20)), identity(&json!(1e19)));
        // The exact range reaches up to 2^53: 9e15 written as a float is the integer 9e15,
        // and 2^53 + 1 (which an f64 reads as 2^53) is not 2^53.
        assert_eq!(
            identity(&json!(9e15)),
            identity(&json!(9_000_000_000_000_000u64))
        );
        assert_eq!(
            identity(&json!(-9e15)),
            identity(&json!(-9_000_000_000_000_000i64))
        );
        let two_53 = 1u64 << 53;
        assert_ne!(identity(&json!(two_53 + 1)), identity(&json!(two_53)));
        assert_ne!(identity(&json!(two_53 - 1)), identity(&json!(two_53)));
    }

    #[test]
    fn first_sentence_stops_at_the_first_full_stop() {
        assert_eq!(
            first_sentence(Some(&json!("Play a move. More."))).as_deref(),
            Some("Play a move.")
        );
        assert_eq!(
            first_sentence(Some(&json!("v1.2 is out"))).as_deref(),
            Some("v1.2 is out")
        );
        assert_eq!(first_sentence(Some(&json!(5))), None);
    }

    #[test]
    fn a_signature_lists_every_property_comma_separated() {
        let schema = json!({"type": "object", "required": ["move"], "properties": {
            "move": {"type": "string"},
            "color": {"enum": ["black", "white"]},
            "at": {"const": [3, 4]},
            "opts": {"const": {"a": 1, "b": 2}}}});
        assert_eq!(
            signature("play", &schema),
            r#"play(move: string, color?: "black"|"white", at?: [3,4], opts?: {"a":1,"b":2})"#
        );
    }

    #[test]
    fn printed_json_within_its_bounds_is_compact_json() {
        let v = json!({"a": [1, 2, [3, 4]], "b": {"c": null, "d": "e"}, "f": []});
        assert_eq!(
            json(&v),
            r#"{"a":[1,2,[3,4]],"b":{"c":null,"d":"e"},"f":[]}"#
        );
        assert_eq!(json(&v), v.to_string());
    }
}
