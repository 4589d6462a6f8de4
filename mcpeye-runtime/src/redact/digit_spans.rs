//! Narrowing of the card and phone patterns to the digit clusters that can hold a match.
//!
//! Both patterns are costly for the regex engine on long texts (their leading `\b\d` gives it
//! no literal to skip to), and their matches are made of digits with short gaps. So the text is
//! split into clusters of digits, and the regex runs only over the clusters with enough digits,
//! each with one character of context on either side so that `\b` sees what it would see in
//! the whole text. Leftmost-first matching gives the same matches: none can span two clusters,
//! and none can start in the context characters (they are not digits, and a `+` is one byte
//! before a digit only inside the span).

use regex::{NoExpand, Regex};
use std::borrow::Cow;

/// Which clusters one pattern can match in.
#[derive(Clone, Copy)]
pub(crate) struct ClusterRule {
    /// Fewest digits in a match.
    min_digits: usize,
    /// Most bytes between two digits of one match.
    max_gap: usize,
    /// Whether a one-byte gap must be a space or a dash.
    dash_or_space: bool,
    /// Bytes a match can take before its first digit (`+`) and after its last one (a separator).
    before: usize,
    after: usize,
}

/// `(?:\d[ -]?){13,16}`: digits adjacent or one space or dash apart; may end on the separator.
pub(crate) const CARD: ClusterRule =
    ClusterRule { min_digits: 13, max_gap: 1, dash_or_space: true, before: 0, after: 1 };

/// `\+?\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{3,4}`: at most 4 bytes between two
/// digits (a 3-byte `\s` and a parenthesis); may start with `+`.
pub(crate) const PHONE: ClusterRule =
    ClusterRule { min_digits: 9, max_gap: 4, dash_or_space: false, before: 1, after: 0 };

/// Replaces every match of `regex` in `s` with `replacement`, searching only the clusters of
/// `rule`. Returns `None` when nothing matched.
pub(crate) fn replace_in_clusters(s: &str, regex: &Regex, replacement: &str, rule: ClusterRule) -> Option<String> {
    replace_in_clusters_if(s, regex, replacement, rule, |_| true)
}

/// [`replace_in_clusters`] of the matches that `accept` takes; the others are kept as they are.
pub(crate) fn replace_in_clusters_if(
    s: &str,
    regex: &Regex,
    replacement: &str,
    rule: ClusterRule,
    accept: impl Fn(&str) -> bool,
) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // end of the part of `s` already in `out`
    for (first, last) in clusters(bytes, rule) {
        let start = floor_boundary(s, first.saturating_sub(rule.before + 1));
        let end = ceil_boundary(s, (last + 1 + rule.after + 1).min(bytes.len()));
        let window = &s[start..end];
        for m in regex.find_iter(window).filter(|m| accept(m.as_str())) {
            let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
            o.push_str(&s[copied..start + m.start()]);
            o.push_str(replacement);
            copied = start + m.end();
        }
    }
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

/// `(first digit, last digit)` of each cluster with at least `rule.min_digits` digits.
fn clusters(bytes: &[u8], rule: ClusterRule) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut digits = digit_positions(bytes);
    let Some(mut first) = digits.next() else { return found };
    let (mut last, mut count) = (first, 1);
    for i in digits {
        let gap = i - last - 1;
        let joins =
            gap == 0 || (gap <= rule.max_gap && (!rule.dash_or_space || matches!(bytes[last + 1], b' ' | b'-')));
        if joins {
            count += 1;
        } else {
            if count >= rule.min_digits {
                found.push((first, last));
            }
            (first, count) = (i, 1);
        }
        last = i;
    }
    if count >= rule.min_digits {
        found.push((first, last));
    }
    found
}

/// The positions of the ASCII digits of `bytes`, in order: eight bytes tested at once, as most
/// text has few digits.
fn digit_positions(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let tail_at = bytes.len() - tail.len();
    let in_words = words.enumerate().flat_map(|(k, word)| {
        let w = u64::from_le_bytes(word.try_into().expect("a chunk of 8 bytes"));
        // Per byte, without carries across bytes: the low 7 bits reach `0`, not `:`, and the high
        // bit is clear.
        let low = w & !HIGH;
        let mut mask = (low + ONES * (0x80 - u64::from(b'0'))) & !(low + ONES * (0x80 - u64::from(b':'))) & !w & HIGH;
        std::iter::from_fn(move || {
            (mask != 0).then(|| {
                let bit = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                k * 8 + bit / 8
            })
        })
    });
    in_words.chain(tail.iter().enumerate().filter(|(_, b)| b.is_ascii_digit()).map(move |(i, _)| tail_at + i))
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `regex.replace_all` over the whole of `s`, in the same shape (the reference for tests).
pub(crate) fn replace_everywhere(s: &str, regex: &Regex, replacement: &str) -> Option<String> {
    match regex.replace_all(s, NoExpand(replacement)) {
        Cow::Owned(new) => Some(new),
        Cow::Borrowed(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_positions_are_the_ascii_digits() {
        let mut bytes: Vec<u8> = (0..=255u8).collect();
        bytes.extend(b"a1b22c333/:0 9\xff9".iter());
        for len in 0..bytes.len() {
            for from in 0..9.min(len + 1) {
                let b = &bytes[from..len];
                let want: Vec<usize> =
                    b.iter().enumerate().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
                assert_eq!(digit_positions(b).collect::<Vec<_>>(), want);
            }
        }
    }
}
