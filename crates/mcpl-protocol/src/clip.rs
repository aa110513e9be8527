//! Bounded quoting of client input: no error message, error `data` or log line repeats more
//! than [`MAX_QUOTED_CHARS`] characters of what a client sent.

use crate::jsonrpc::{Message, Response};
use serde_json::Value;
use std::borrow::Cow;

/// The most characters of client input an error or log line quotes.
pub const MAX_QUOTED_CHARS: usize = 128;

/// `input` as it may be quoted: whole when it has at most [`MAX_QUOTED_CHARS`] characters,
/// else its first [`MAX_QUOTED_CHARS`] followed by `...`.
pub fn clip(input: &str) -> Cow<'_, str> {
    match input.char_indices().nth(MAX_QUOTED_CHARS) {
        None => Cow::Borrowed(input),
        Some((end, _)) => Cow::Owned(format!("{}...", &input[..end])),
    }
}

/// The longest error text sent whole; longer text is cut (it can only be long by quoting
/// input).
pub const MAX_ERROR_TEXT_CHARS: usize = 4 * MAX_QUOTED_CHARS;

/// `text` with every backtick-quoted part [`clip`]ped, and the whole cut at
/// [`MAX_ERROR_TEXT_CHARS`]: server messages quote names and values between backticks.
pub fn clip_quoted(text: &str) -> Cow<'_, str> {
    let parts: Vec<&str> = text.split('`').collect();
    let quoted_long = parts
        .iter()
        .skip(1)
        .step_by(2)
        .any(|q| q.chars().nth(MAX_QUOTED_CHARS).is_some());
    let too_long = text.chars().nth(MAX_ERROR_TEXT_CHARS).is_some();
    if !quoted_long && !too_long {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(&clip(part));
        } else {
            out.push_str(part);
        }
    }
    match out.char_indices().nth(MAX_ERROR_TEXT_CHARS) {
        Some((end, _)) => {
            out.truncate(end);
            out.push_str("...");
            Cow::Owned(out)
        }
        None => Cow::Owned(out),
    }
}

/// Every string in `value` [`clip`]ped (error `data` quotes input as values).
fn clip_strings(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(clipped) = clip(s) {
                *s = clipped;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clip_strings),
        Value::Object(map) => map.values_mut().for_each(clip_strings),
        _ => {}
    }
}

/// Bounds what an outgoing message can quote of client input: an error response's message
/// ([`clip_quoted`]) and `data` (every string [`clip`]ped), and the text of a tool result
/// flagged `isError`. Other messages are left alone.
pub fn bound_errors(message: &mut Message) {
    let Message::Response(Response { outcome, .. }) = message else {
        return;
    };
    match outcome {
        Err(error) => {
            if let Cow::Owned(clipped) = clip_quoted(&error.message) {
                error.message = clipped;
            }
            if let Some(data) = &mut error.data {
                clip_strings(data);
            }
        }
        Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => {
            let texts = result
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get_mut("text"));
            for text in texts {
                if let Value::String(s) = text
                    && let Cow::Owned(clipped) = clip_quoted(s)
                {
                    *s = clipped;
                }
            }
        }
        Ok(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{ErrorObject, RequestId};
    use serde_json::json;

    #[test]
    fn quoted_input_in_errors_is_cut_and_the_rest_kept() {
        let name = "n".repeat(1_000_000);
        let text = format!("unknown tool `{name}`; see `tools/list`");
        let clipped = clip_quoted(&text);
        assert_eq!(
            clipped,
            format!("unknown tool `{}...`; see `tools/list`", "n".repeat(128))
        );
        assert_eq!(clip_quoted("unknown tool `play`"), "unknown tool `play`");
        let unquoted = "v".repeat(10_000);
        assert_eq!(
            clip_quoted(&unquoted).chars().count(),
            MAX_ERROR_TEXT_CHARS + 3
        );
    }

    #[test]
    fn error_responses_and_error_results_are_bounded_and_others_untouched() {
        let long = "z".repeat(5_000);
        let error = ErrorObject::new(
            crate::jsonrpc::ErrorCode::InvalidParams,
            format!("unknown tool `{long}`"),
        );
        let mut error = Response::error(Some(RequestId::Number(1)), error);
        if let Err(e) = &mut error.outcome {
            e.data = Some(json!({"name": long, "n": 1}));
        }
        let mut message = Message::Response(error);
        bound_errors(&mut message);
        let json = serde_json::to_value(&message).unwrap();
        assert!(json.to_string().len() < 600, "{json}");
        assert_eq!(json["error"]["data"]["n"], 1);
        let mut result = Message::Response(Response::ok(
            RequestId::Number(2),
            json!({"isError": true, "content": [{"type": "text", "text": format!("no game `{long}`")}]}),
        ));
        bound_errors(&mut result);
        assert!(serde_json::to_string(&result).unwrap().len() < 600);
        let fine = json!({"content": [{"type": "text", "text": long}]});
        let mut ok = Message::Response(Response::ok(RequestId::Number(3), fine.clone()));
        bound_errors(&mut ok);
        let Message::Response(Response { outcome: Ok(v), .. }) = ok else {
            panic!()
        };
        assert_eq!(v, fine);
    }

    #[test]
    fn short_input_is_quoted_whole() {
        assert_eq!(clip("play"), "play");
        let exact = "é".repeat(MAX_QUOTED_CHARS);
        assert_eq!(clip(&exact), exact);
    }

    #[test]
    fn long_input_is_cut_at_128_characters_with_an_ellipsis() {
        let long = "é".repeat(1_000_000);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), MAX_QUOTED_CHARS + 3);
        assert!(clipped.ends_with("..."));
    }
}
