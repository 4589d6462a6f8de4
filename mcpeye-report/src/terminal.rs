//! [`terminal_safe`]: text from the input shown in a terminal without acting on it.

use std::borrow::Cow;

/// `text` with every character that a terminal would act on instead of showing written as
/// `\u{…}` (lower-case hex): the C0 controls (newline and tab included), DEL, the C1 controls,
/// and the bidirectional controls (embeddings, overrides, isolates, marks), as well as the line
/// and paragraph separators. Text without them is returned as it is, unallocated.
///
/// Data in a report comes from whoever calls the server: an escape sequence in a tool name could
/// retitle the terminal, hide lines or write the clipboard, and an unclosed right-to-left
/// override in a client name reverses the text after it. `mcpeye report` and `mcpeye receive`
/// pass every value they print through this function.
///
/// ```
/// use mcpeye_report::terminal_safe;
/// assert_eq!(terminal_safe("search"), "search");
/// assert_eq!(terminal_safe("\u{1b}]0;pwned\u{7}x"), r"\u{1b}]0;pwned\u{7}x");
/// assert_eq!(terminal_safe("client\u{202e}gnp.exe"), r"client\u{202e}gnp.exe");
/// assert_eq!(terminal_safe("a\nb"), r"a\u{a}b");
/// ```
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a terminal acts on `c` (or reorders text around it) rather than showing it.
fn acts(c: char) -> bool {
    c.is_control() // C0, DEL and C1
        || matches!(c,
            '\u{061c}' // Arabic letter mark
            | '\u{200e}' | '\u{200f}' // left-to-right and right-to-left marks
            | '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{202a}'..='\u{202e}' // embeddings, pop, overrides
            | '\u{2066}'..='\u{2069}' // isolates and their pop
        )
}

/// A report's text for a terminal: each line made safe, the line breaks kept.
pub(crate) fn safe_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && acts(c)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split('\n').map(terminal_safe).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_and_bidi_character_is_escaped_and_the_rest_kept() {
        for c in ('\0'..='\u{1f}').chain(['\u{7f}', '\u{80}', '\u{9b}', '\u{9f}']) {
            assert_eq!(terminal_safe(&c.to_string()), format!("\\u{{{:x}}}", u32::from(c)));
        }
        for c in ['\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{2028}'] {
            assert!(terminal_safe(&format!("a{c}b")).starts_with("a\\u{"), "{:x}", u32::from(c));
        }
        for kept in ["é → ü 日本", "café", "a b", "\u{200d}", "emoji 👍🏽", r"\u{1b}"] {
            assert!(matches!(terminal_safe(kept), Cow::Borrowed(_)), "{kept}");
        }
        assert_eq!(safe_lines("a\u{1b}[2J\nb\n"), "a\\u{1b}[2J\nb\n");
    }
}
