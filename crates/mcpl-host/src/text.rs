//! Bounded text, shared by the grouping rules and the presenter: a cut that never splits a
//! character, and a description's first sentence (H71).

use serde_json::Value;

/// The longest first sentence, in characters (H71).
pub const MAX_SENTENCE: usize = 200;

/// Cuts `s` to at most `max` bytes on a `char` boundary that also never splits a UTF-16
/// surrogate pair (every char boundary is one, since a pair is one `char`) (H71).
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The first sentence of a description, only when it is a string (H71), bounded in length.
pub fn first_sentence(description: Option<&Value>) -> Option<String> {
    let text = description?.as_str()?.trim();
    if text.is_empty() {
        return None;
    }
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?')
                && text[i + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map_or(text.len(), |(i, c)| i + c.len_utf8());
    let sentence = &text[..end];
    let bounded: String = sentence.chars().take(MAX_SENTENCE).collect();
    if bounded.len() < sentence.len() {
        Some(format!("{bounded}…"))
    } else {
        Some(bounded)
    }
}
