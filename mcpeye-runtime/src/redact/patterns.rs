//! The nine redaction patterns of docs/wire-format.md#redaction and the byte-scan prefilter that decides which
//! of them can match a string at all.
//!
//! The patterns follow the JavaScript semantics of the TypeScript reference (regex literals
//! without the `u` flag): `\b` and `\d` are ASCII, `\s` is JavaScript's whitespace set, and the
//! case-insensitive `Bearer` folds ASCII letters only.

use super::digit_spans;
use crate::contract::markers;
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// ASCII word boundary: JavaScript's `\b`. (The Unicode `\b` of the regex crate also differs in
/// meaning and is ~150× slower once a string holds any non-ASCII character.)
const B: &str = r"(?-u:\b)";

/// JavaScript's `\s` (WhiteSpace + LineTerminator of ECMA-262): ASCII `\t\n\v\f\r` and space,
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
/// Unlike Python's `\s`, it excludes U+0085 and U+001C–U+001F.
const JS_SPACE: &str =
    r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Bit of each pattern in the prefilter's mask, in the order the patterns run.
pub(crate) const EMAIL: u16 = 1 << 0;
pub(crate) const SK_ANT: u16 = 1 << 1;
pub(crate) const SK: u16 = 1 << 2;
pub(crate) const GITHUB: u16 = 1 << 3;
pub(crate) const AKIA: u16 = 1 << 4;
pub(crate) const BEARER: u16 = 1 << 5;
pub(crate) const JWT: u16 = 1 << 6;
pub(crate) const CARD: u16 = 1 << 7;
pub(crate) const PHONE: u16 = 1 << 8;
/// Every pattern.
pub(crate) const ALL: u16 = (1 << 9) - 1;
/// The two patterns that the digit clusters decide.
const DIGITS: u16 = CARD | PHONE;

/// One compiled pattern with its replacement.
pub(crate) struct Pattern {
    pub(crate) bit: u16,
    pub(crate) regex: Regex,
    pub(crate) replacement: &'static str,
}

fn compile(bit: u16, pattern: &str, replacement: &'static str) -> Pattern {
    // The patterns are constants covered by the vector tests; failing here is a build defect.
    let regex = Regex::new(pattern).expect("redaction pattern compiles");
    Pattern { bit, regex, replacement }
}

/// The nine patterns, in the order they run.
pub(crate) static PATTERNS: LazyLock<[Pattern; 9]> = LazyLock::new(|| {
    let sep = format!(r"[{JS_SPACE}.\-]");
    [
        compile(EMAIL, r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}", markers::EMAIL),
        compile(SK_ANT, &format!(r"{B}sk-ant-[A-Za-z0-9_\-]{{16,}}{B}"), markers::KEY),
        compile(SK, &format!(r"{B}sk-[A-Za-z0-9_\-]{{16,}}{B}"), markers::KEY),
        compile(GITHUB, &format!(r"{B}gh[pousr]_[A-Za-z0-9]{{20,}}{B}"), markers::KEY),
        compile(AKIA, &format!(r"{B}AKIA[0-9A-Z]{{16}}{B}"), markers::KEY),
        compile(BEARER, &format!(r"{B}(?i-u:bearer)[{JS_SPACE}]+[A-Za-z0-9._\-]{{12,}}{B}"), markers::BEARER),
        compile(
            JWT,
            &format!(r"{B}eyJ[A-Za-z0-9_\-]{{8,}}\.[A-Za-z0-9_\-]{{8,}}\.[A-Za-z0-9_\-]{{8,}}{B}"),
            markers::JWT,
        ),
        compile(CARD, &format!(r"{B}(?:[0-9][ \-]?){{13,16}}{B}"), markers::CARD),
        compile(
            PHONE,
            &format!(r"{B}\+?[0-9]{{1,3}}{sep}?\(?[0-9]{{2,4}}\)?{sep}?[0-9]{{3,4}}{sep}?[0-9]{{3,4}}{B}"),
            markers::PHONE,
        ),
    ]
});

/// Runs the patterns whose bit is in `mask`, in order, each on the output of the previous one.
/// With `narrow`, the card and phone patterns search only the digit clusters that can hold a
/// match (same output, see [`digit_spans`]).
pub(crate) fn apply(s: &str, mask: u16, narrow: bool) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    for p in PATTERNS.iter() {
        if mask & p.bit == 0 {
            continue;
        }
        let rule = match p.bit {
            CARD if narrow => Some(digit_spans::CARD),
            PHONE if narrow => Some(digit_spans::PHONE),
            _ => None,
        };
        let replaced = match rule {
            Some(rule) => digit_spans::replace_in_clusters(&out, &p.regex, p.replacement, rule),
            None => digit_spans::replace_everywhere(&out, &p.regex, p.replacement),
        };
        if let Some(new) = replaced {
            out = Cow::Owned(new);
        }
    }
    out
}

// Byte classes of the prefilter's table.
const WORD: u8 = 1; // [A-Za-z0-9_]: JavaScript's \w
const DIGIT: u8 = 2;
const AT: u8 = 4;
const LEAD: u8 = 8; // first byte of a literal that a pattern starts with: s g A b B e
const LOCAL: u8 = 16; // [A-Za-z0-9._%+-]: may end an e-mail's local part
const DOMAIN: u8 = 32; // [A-Za-z0-9.-]: may start an e-mail's domain

const fn byte_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let alnum = c.is_ascii_alphanumeric();
        let mut k = 0;
        if alnum || c == b'_' {
            k |= WORD;
        }
        if c.is_ascii_digit() {
            k |= DIGIT;
        }
        if c == b'@' {
            k |= AT;
        }
        if matches!(c, b's' | b'g' | b'A' | b'b' | b'B' | b'e') {
            k |= LEAD;
        }
        if alnum || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-') {
            k |= LOCAL;
        }
        if alnum || matches!(c, b'.' | b'-') {
            k |= DOMAIN;
        }
        t[b] = k;
        b += 1;
    }
    t
}

static CLASS: [u8; 256] = byte_classes();

/// Digits of a phone number (`\d{1,3}`, `\d{2,4}`, `\d{3,4}`, `\d{3,4}`): at least 9.
const PHONE_MIN_DIGITS: u32 = 9;
/// Widest gap between two digits of one phone number, in bytes: `[\s.-]?\(?` where `\s` may
/// take 3 bytes of UTF-8.
const PHONE_MAX_GAP: usize = 4;
/// Digits of a card number: `(?:\d[ -]?){13,16}`.
const CARD_MIN_DIGITS: u32 = 13;

/// Returns the mask of the patterns that can match `s` (or the strings the earlier patterns make
/// of it). A clear bit is a proof of "no match"; a set bit is only a hint.
///
/// Why it is sound although it looks at the input only: the replacements contain none of the
/// trigger literals (`@`, digits, `sk-`, `gh?_`, `AKIA`, `eyJ`; `Bearer` only in pattern 6's
/// own output), a marker is at least 14 bytes long so no digit cluster forms across one, and no
/// earlier match can end with a word character right before a trigger that starts a word
/// (patterns 2–9 end on `\b`; the e-mail's greedy `[A-Za-z]{2,}` would have taken the letter).
pub(crate) fn scan(s: &str) -> u16 {
    let bytes = s.as_bytes();
    let mut scanner = Scanner::default();
    let mut start = 0;
    // Blocks without any trigger byte pattern are skipped by a branch-free test that the
    // compiler vectorises; the others get the exact byte-by-byte look.
    while let Some(window) = bytes.get(start..start + BLOCK + LOOKAHEAD) {
        let window: &[u8; BLOCK + LOOKAHEAD] = window.try_into().expect("slice of the window's length");
        // Once both digit patterns are flagged, digits no longer make a block interesting.
        let hit = if scanner.mask & DIGITS == DIGITS {
            block_may_trigger::<false>(window)
        } else {
            block_may_trigger::<true>(window)
        };
        if hit {
            scanner.scan(bytes, start, start + BLOCK);
            if scanner.mask == ALL {
                return ALL;
            }
        }
        start += BLOCK;
    }
    scanner.scan(bytes, start, bytes.len());
    scanner.mask
}

const BLOCK: usize = 32;
/// Bytes after a block that its test reads: the longest trigger prefix is 4 bytes (`gh?_`).
const LOOKAHEAD: usize = 3;

/// Whether a trigger may start in the first [`BLOCK`] bytes of `w`: `@`, a digit, `sk-`, `gh?_`,
/// `AKIA`, `eyJ`, or `bea` in any ASCII case. A superset of what [`Scanner::scan`] reports.
#[inline]
fn block_may_trigger<const DIGITS: bool>(w: &[u8; BLOCK + LOOKAHEAD]) -> bool {
    let mut hit = 0u8;
    for i in 0..BLOCK {
        let (a, b, c, d) = (w[i], w[i + 1], w[i + 2], w[i + 3]);
        hit |= u8::from(a == b'@')
            | (u8::from(DIGITS) & u8::from(a.wrapping_sub(b'0') < 10))
            | (u8::from(a == b's') & u8::from(b == b'k') & u8::from(c == b'-'))
            | (u8::from(a == b'g') & u8::from(b == b'h') & u8::from(d == b'_'))
            | (u8::from(a == b'A') & u8::from(b == b'K') & u8::from(c == b'I'))
            | (u8::from(a == b'e') & u8::from(b == b'y') & u8::from(c == b'J'))
            | (u8::from(a | 0x20 == b'b') & u8::from(b | 0x20 == b'e') & u8::from(c | 0x20 == b'a'));
    }
    hit != 0
}

/// The exact trigger scan, resumable block by block. Skipped blocks hold no digit, so the digit
/// cluster state stays valid across them.
#[derive(Default)]
struct Scanner {
    mask: u16,
    last_digit: Option<usize>,
    phone_run: u32,
    card_run: u32,
}

impl Scanner {
    /// Looks for triggers starting in `bytes[start..end]` (reading around it as needed).
    fn scan(&mut self, bytes: &[u8], start: usize, end: usize) {
        for i in start..end {
            let b = bytes[i];
            let class = CLASS[b as usize];
            if class & (DIGIT | AT | LEAD) == 0 {
                continue;
            }
            if class & DIGIT != 0 {
                if self.mask & DIGITS != DIGITS {
                    self.digit(bytes, i);
                }
            } else if class & AT != 0 {
                let before = i > 0 && CLASS[bytes[i - 1] as usize] & LOCAL != 0;
                let after = bytes.get(i + 1).is_some_and(|&n| CLASS[n as usize] & DOMAIN != 0);
                if before && after {
                    self.mask |= EMAIL;
                }
            } else if i == 0 || CLASS[bytes[i - 1] as usize] & WORD == 0 {
                // A word-initial s/g/A/b/B/e: the other patterns start with `\b` and a letter.
                self.mask |= word_trigger(&bytes[i..]);
            }
        }
    }

    fn digit(&mut self, bytes: &[u8], i: usize) {
        let gap = self.last_digit.map(|last| i - last - 1);
        self.phone_run = match gap {
            Some(g) if g <= PHONE_MAX_GAP => self.phone_run + 1,
            _ => 1,
        };
        self.card_run = match gap {
            Some(0) => self.card_run + 1,
            Some(1) if matches!(bytes[i - 1], b' ' | b'-') => self.card_run + 1,
            _ => 1,
        };
        self.last_digit = Some(i);
        if self.phone_run >= PHONE_MIN_DIGITS {
            // A card run is also a phone run (its gaps are narrower).
            self.mask |= PHONE;
            if self.card_run >= CARD_MIN_DIGITS {
                self.mask |= CARD;
            }
        }
    }
}

/// The pattern bits whose literal `rest` starts with.
fn word_trigger(rest: &[u8]) -> u16 {
    match rest {
        [b's', b'k', b'-', b'a', b'n', b't', b'-', ..] => SK_ANT | SK,
        [b's', b'k', b'-', ..] => SK,
        [b'g', b'h', b'p' | b'o' | b'u' | b's' | b'r', b'_', ..] => GITHUB,
        [b'A', b'K', b'I', b'A', ..] => AKIA,
        [b'b' | b'B', r @ ..] if r.len() >= 5 && r[..5].eq_ignore_ascii_case(b"earer") => BEARER,
        [b'e', b'y', b'J', ..] => JWT,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        assert_eq!(PATTERNS.len(), 9);
        let bits = PATTERNS.iter().fold(0, |m, p| m | p.bit);
        assert_eq!(bits, ALL);
    }

    #[test]
    fn scan_sees_each_trigger() {
        assert_eq!(scan("plain prose, nothing here"), 0);
        assert_eq!(scan("a@b.com"), EMAIL);
        assert_eq!(scan("@@@"), 0);
        assert_eq!(scan("x sk-ant-y"), SK_ANT | SK);
        assert_eq!(scan("task-abc"), 0);
        assert_eq!(scan("ghp_x"), GITHUB);
        assert_eq!(scan("ghx_x"), 0);
        assert_eq!(scan("AKIAX"), AKIA);
        assert_eq!(scan("BeArEr"), BEARER);
        assert_eq!(scan("eyJ"), JWT);
        assert_eq!(scan("12345678"), 0);
        assert_eq!(scan("123456789"), PHONE);
        assert_eq!(scan("(415) 555-0123"), PHONE);
        assert_eq!(scan("4111 1111 1111 1111"), PHONE | CARD);
        assert_eq!(scan("4111  1111 1111 1111"), PHONE);
    }
}
