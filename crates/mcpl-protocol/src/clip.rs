//! Bounded quoting of client input: no error message, error `data` or log line repeats more
//! than [`MAX_QUOTED_CHARS`] characters of what a client sent.

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

#[cfg(test)]
mod tests {
    use super::*;

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
