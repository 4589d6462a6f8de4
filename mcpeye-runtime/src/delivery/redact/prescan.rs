//! One look at a string's bytes before it is written: whether JSON escapes any of them, and
//! whether a redaction trigger may start among them. Most strings have neither, and are then
//! copied whole without the exact trigger scan of [`patterns::scan`](super::patterns::scan).
//!
//! The look tests 16 positions at a time (SSE2 on x86_64, a branch-free loop elsewhere), each
//! with the 3 bytes after it. Where the bytes after the string can be read (a string in a flat
//! buffer), the last chunk reads them and ignores the positions past the string; otherwise the
//! last 0 to 18 bytes are tested in a copy padded with spaces, which are neither escaped nor
//! part of any trigger.

/// A byte of the string is escaped by serde_json (exact).
pub(crate) const ESCAPES: u8 = 1;
/// A trigger may start in the string: `@`, a digit (9 or more in all), `sk-`, `gh?_`, `AKI`,
/// `eyJ`, or `bea` in any ASCII case. A clear bit is a proof that [`patterns::scan`] finds
/// nothing; a set bit only a hint.
///
/// [`patterns::scan`]: super::patterns::scan
pub(crate) const TRIGGERS: u8 = 2;

/// Positions tested at a time.
const CHUNK: usize = 16;
/// Bytes read after a position: the longest trigger prefix tested is 4 bytes (`gh?_`).
const LOOKAHEAD: usize = 3;
/// Bytes a chunk test reads.
const WINDOW: usize = CHUNK + LOOKAHEAD;
/// Fewest digits that can make a card or phone number.
const MIN_DIGITS: u32 = 9;

/// [`ESCAPES`] and [`TRIGGERS`] of `s`.
#[inline]
pub(crate) fn look(s: &[u8]) -> u8 {
    look_in(s, s.len())
}

/// [`look`] of `bytes[..len]`, reading what follows it as needed (fewer copies).
#[inline]
pub(crate) fn look_in(bytes: &[u8], len: usize) -> u8 {
    #[cfg(target_arch = "x86_64")]
    return sse2::look_in(bytes, len);
    #[cfg(not(target_arch = "x86_64"))]
    return portable::look_in(bytes, len);
}

/// Hands `chunk` every window of `bytes` that starts a chunk of `bytes[..len]`, with the number
/// of its positions that are the string's (16 or more: all); windows past the end of `bytes`
/// are padded copies, whose every position counts.
#[inline(always)]
fn windows(bytes: &[u8], len: usize, mut chunk: impl FnMut(&[u8; WINDOW], usize)) {
    let mut at = 0;
    while at < len {
        let Some(window) = bytes.get(at..at + WINDOW) else { break };
        chunk(window.try_into().expect("slice of the window's length"), len - at);
        at += CHUNK;
    }
    if at >= len {
        return;
    }
    let rest = &bytes[at..len];
    let mut pad = [b' '; CHUNK + WINDOW];
    pad[..rest.len()].copy_from_slice(rest);
    chunk(pad[..WINDOW].try_into().expect("slice of the window's length"), CHUNK);
    if rest.len() > CHUNK {
        chunk(pad[CHUNK..].try_into().expect("slice of the window's length"), CHUNK);
    }
}

/// SSE2 is part of x86_64: no runtime detection is needed.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{CHUNK, MIN_DIGITS, WINDOW};
    use std::arch::x86_64::*;

    pub(super) fn look_in(bytes: &[u8], len: usize) -> u8 {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { look_sse2(bytes, len) }
    }

    #[target_feature(enable = "sse2")]
    fn look_sse2(bytes: &[u8], len: usize) -> u8 {
        let mut acc = Acc::new();
        super::windows(bytes, len, |w, valid| acc.chunk(w, valid));
        acc.finish()
    }

    /// 16 lanes set, then 16 clear: loaded at `CHUNK - n`, the first `n` lanes set.
    static LANES: [u8; 2 * CHUNK] = {
        let mut t = [0; 2 * CHUNK];
        let mut i = 0;
        while i < CHUNK {
            t[i] = 0xFF;
            i += 1;
        }
        t
    };

    struct Acc {
        triggers: __m128i,
        escapes: __m128i,
        /// Digits per lane, saturating.
        digits: __m128i,
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn load(w: &[u8], at: usize) -> __m128i {
        let bytes: &[u8; CHUNK] = w[at..at + CHUNK].try_into().expect("slice of a chunk's length");
        // SAFETY: `bytes` is 16 readable bytes, and `_mm_loadu_si128` has no alignment requirement.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn eq(v: __m128i, b: u8) -> __m128i {
        _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn and3(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
        _mm_and_si128(_mm_and_si128(a, b), c)
    }

    /// Lanes whose byte is at most `max` (unsigned).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn at_most(v: __m128i, max: u8) -> __m128i {
        _mm_cmpeq_epi8(_mm_subs_epu8(v, _mm_set1_epi8(max as i8)), _mm_setzero_si128())
    }

    impl Acc {
        #[target_feature(enable = "sse2")]
        #[inline]
        fn new() -> Self {
            let zero = _mm_setzero_si128();
            Acc { triggers: zero, escapes: zero, digits: zero }
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        fn chunk(&mut self, w: &[u8; WINDOW], valid: usize) {
            let (a, b, c, d) = (load(w, 0), load(w, 1), load(w, 2), load(w, 3));
            let case = _mm_set1_epi8(0x20);
            let bea =
                and3(eq(_mm_or_si128(a, case), b'b'), eq(_mm_or_si128(b, case), b'e'), eq(_mm_or_si128(c, case), b'a'));
            let words = _mm_or_si128(
                _mm_or_si128(and3(eq(a, b's'), eq(b, b'k'), eq(c, b'-')), and3(eq(a, b'g'), eq(b, b'h'), eq(d, b'_'))),
                _mm_or_si128(
                    _mm_or_si128(
                        and3(eq(a, b'A'), eq(b, b'K'), eq(c, b'I')),
                        and3(eq(a, b'e'), eq(b, b'y'), eq(c, b'J')),
                    ),
                    bea,
                ),
            );
            let mut triggers = _mm_or_si128(words, eq(a, b'@'));
            let mut escapes = _mm_or_si128(at_most(a, 0x1F), _mm_or_si128(eq(a, b'"'), eq(a, b'\\')));
            let mut digits = _mm_and_si128(at_most(_mm_sub_epi8(a, _mm_set1_epi8(b'0' as i8)), 9), _mm_set1_epi8(1));
            if valid < CHUNK {
                // The string ends in this chunk: only its positions count.
                let lanes = load(&LANES, CHUNK - valid);
                triggers = _mm_and_si128(triggers, lanes);
                escapes = _mm_and_si128(escapes, lanes);
                digits = _mm_and_si128(digits, lanes);
            }
            self.triggers = _mm_or_si128(self.triggers, triggers);
            self.escapes = _mm_or_si128(self.escapes, escapes);
            self.digits = _mm_adds_epu8(self.digits, digits);
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        fn finish(self) -> u8 {
            // Two sums of 8 lanes each (at most 2 × 8 × 255: no overflow).
            let sums = _mm_sad_epu8(self.digits, _mm_setzero_si128());
            let digits = _mm_cvtsi128_si32(sums) as u32 + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8)) as u32;
            let triggers = _mm_movemask_epi8(self.triggers) != 0 || digits >= MIN_DIGITS;
            u8::from(_mm_movemask_epi8(self.escapes) != 0) * super::ESCAPES + u8::from(triggers) * super::TRIGGERS
        }
    }
}

/// The same tests one position at a time, branch-free (the compiler vectorises them).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))] // compared with the SSE2 path in tests
mod portable {
    use super::{CHUNK, MIN_DIGITS, WINDOW};

    pub(super) fn look_in(bytes: &[u8], len: usize) -> u8 {
        let mut acc = Acc::default();
        super::windows(bytes, len, |w, valid| acc.chunk(w, valid));
        acc.finish()
    }

    #[derive(Default)]
    struct Acc {
        triggers: bool,
        escapes: bool,
        digits: u32,
    }

    impl Acc {
        #[inline(always)]
        fn chunk(&mut self, w: &[u8; WINDOW], valid: usize) {
            let (mut triggers, mut escapes, mut digits) = (0u8, 0u8, 0u8);
            for i in 0..CHUNK {
                // Positions past the string (only in its last chunk) count for nothing.
                let mine = u8::from(i < valid);
                let (a, b, c, d) = (w[i], w[i + 1], w[i + 2], w[i + 3]);
                triggers |= mine
                    & (u8::from(a == b'@')
                        | (u8::from(a == b's') & u8::from(b == b'k') & u8::from(c == b'-'))
                        | (u8::from(a == b'g') & u8::from(b == b'h') & u8::from(d == b'_'))
                        | (u8::from(a == b'A') & u8::from(b == b'K') & u8::from(c == b'I'))
                        | (u8::from(a == b'e') & u8::from(b == b'y') & u8::from(c == b'J'))
                        | (u8::from(a | 0x20 == b'b') & u8::from(b | 0x20 == b'e') & u8::from(c | 0x20 == b'a')));
                escapes |= mine & (u8::from(a < 0x20) | u8::from(a == b'"') | u8::from(a == b'\\'));
                digits += mine & u8::from(a.wrapping_sub(b'0') < 10);
            }
            self.triggers |= triggers != 0;
            self.escapes |= escapes != 0;
            self.digits = self.digits.saturating_add(u32::from(digits));
        }

        #[inline(always)]
        fn finish(self) -> u8 {
            let triggers = self.triggers || self.digits >= MIN_DIGITS;
            u8::from(self.escapes) * super::ESCAPES + u8::from(triggers) * super::TRIGGERS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::patterns;
    use super::*;

    /// The straightforward definition for `bytes[..len]`: every position, every trigger
    /// starting there (read on into `bytes[len..]`; a superset of the triggers in the string).
    fn naive(bytes: &[u8], len: usize) -> u8 {
        let s = &bytes[..len];
        let escapes = s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        let digits = s.iter().filter(|b| b.is_ascii_digit()).count();
        let starts = |i: usize, lit: &[u8]| {
            bytes.get(i..i + lit.len()).is_some_and(|w| w.iter().zip(lit).all(|(&x, &l)| l == b'?' || x == l))
        };
        let triggers = digits >= 9
            || (0..len).any(|i| {
                ["@", "sk-", "gh?_", "AKI", "eyJ"].iter().any(|lit| starts(i, lit.as_bytes()))
                    || bytes.get(i..i + 3).is_some_and(|w| w.eq_ignore_ascii_case(b"bea"))
            });
        u8::from(escapes) * ESCAPES + u8::from(triggers) * TRIGGERS
    }

    fn check(s: &[u8]) {
        let expected = naive(s, s.len());
        assert_eq!(look(s), expected, "{:?}", String::from_utf8_lossy(s));
        assert_eq!(portable::look_in(s, s.len()), expected, "{:?}", String::from_utf8_lossy(s));
        if let Ok(text) = std::str::from_utf8(s) {
            // The hint is sound: no trigger flagged, nothing for the exact scan to find.
            if expected & TRIGGERS == 0 {
                assert_eq!(patterns::scan(text), 0, "{text:?}");
            }
        }
    }

    /// [`check`], and the look of `s` followed by more readable bytes.
    fn check_with_tails(s: &[u8]) {
        check(s);
        // Followed by bytes that would be every trigger and escape: they count only to complete a
        // trigger that starts in the string.
        for tail in [&b"@0123456789\"\n\x00sk-ghp_AKIAeyJbea"[..], b"kIA_"] {
            for n in 0..tail.len() {
                let bytes = [s, &tail[..n]].concat();
                let expected = naive(&bytes, s.len());
                assert_eq!(look_in(&bytes, s.len()), expected, "{:?}+{n}", String::from_utf8_lossy(s));
                assert_eq!(portable::look_in(&bytes, s.len()), expected, "{:?}+{n}", String::from_utf8_lossy(s));
            }
        }
    }

    /// Every trigger and escape, at every offset of strings around the chunk and window
    /// lengths, over backgrounds of ASCII, multi-byte UTF-8 and near-miss bytes.
    #[test]
    fn look_is_the_straightforward_test() {
        let backgrounds: [&[u8]; 5] = [
            b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "é界🔑 café ünïcödé ".as_bytes(),
            b"sk_gh-AK eyj be-a bEe ghp- sK- ey Bea",
            b"x",
            b"\x7f\x80\xff\x20\x21\x2f\x3a\x3f\x40\x41\x5b\x5c\x5d",
        ];
        let needles: [&[u8]; 22] = [
            b"@", b"0", b"9", b"/", b":", b"sk-", b"gh_", b"ghp_", b"gh\xff_", b"AKI", b"AKIA", b"eyJ", b"bea", b"BEA",
            b"bEa", b"Bearer", b"\"", b"\\", b"\n", b"\x00", b"\x1f", b"\x20",
        ];
        for bg in backgrounds {
            for len in 0..60 {
                let base: Vec<u8> = bg.iter().copied().cycle().take(len).collect();
                check_with_tails(&base);
                for needle in needles {
                    for at in 0..=len {
                        let mut s = base[..at].to_vec();
                        s.extend_from_slice(needle);
                        s.extend_from_slice(&base[at..]);
                        check(&s);
                        // The needle cut short by the end of the string.
                        check_with_tails(&s[..at + needle.len() - 1]);
                    }
                    check_with_tails(&[&base, needle].concat());
                }
            }
        }
    }

    /// The digit count: 8 digits anywhere are not a trigger, 9 are.
    #[test]
    fn digits_count_across_chunks() {
        for len in 0..80 {
            for spread in 1..12 {
                let mut s = vec![b'x'; len];
                for i in (0..len).step_by(spread) {
                    s[i] = b'0' + (i % 10) as u8;
                    check(&s);
                }
            }
        }
        // Saturation keeps a long run of digits a trigger.
        check(&vec![b'7'; 70_000]);
        check(&[b"a".repeat(5000), b"1".repeat(9)].concat());
    }
}
