//! One look at a string's bytes before it is written: whether JSON escapes any of them, and
//! whether a redaction trigger may start among them. Most strings have neither, and are then
//! copied whole without the exact trigger scan of [`patterns::scan`](super::patterns::scan).
//!
//! The look tests a chunk of positions at a time (32 with AVX2, else 16 with SSE2 on x86_64, a
//! branch-free loop elsewhere), each with the 3 bytes after it. Where the bytes after the string
//! can be read (a string in a flat buffer), the last chunk reads them and ignores the positions
//! past the string; otherwise the string's last bytes are tested in a copy padded with spaces,
//! which are neither escaped nor part of any trigger.
//!
//! It answers the escape question of [`needs_escape`](crate::json::needs_escape) in the same pass as
//! the trigger question, so a value's strings are read once, not twice, on the flusher's path;
//! strings too short to hold a trigger are left to `needs_escape` itself.

/// A byte of the string is escaped by serde_json (exact).
pub(crate) const ESCAPES: u8 = 1;
/// A trigger may start in the string, at least [`SHORTEST_MATCH`] long: `@`, a digit (9 or more in all), or at a position
/// followed by `k-` (`sk-`), `h?_` (`gh?_`), `yJ` (`eyJ`), a position holding `AK` (`AKIA`) or
/// `bea` in any ASCII case (`Bearer`). The rare part of each literal is enough, and costs fewer
/// compares. A clear bit is a proof that [`patterns::scan`] finds nothing; a set bit only a hint.
///
/// [`patterns::scan`]: super::patterns::scan
pub(crate) const TRIGGERS: u8 = 2;
/// A rule of the credential layer may match (docs/wire-format.md#credentials): `=` (a credential
/// parameter), `--` (a PEM block), `://` (URL userinfo), `Bas` (`Basic`), `?Q~` (Azure AD), or
/// [`TOKEN_RUN`] bytes of `[A-Za-z0-9+/=_.-]` in a row, which every vendor token and base64 run
/// is. Like [`TRIGGERS`], a clear bit is a proof, a set bit a hint. Snake-case words, dates and
/// prose set none of these, so most strings never meet the layer's searcher.
pub(crate) const CREDS: u8 = 4;
/// A `:` in the string: a secret key's text form (`password: x`) may be in it. A hint the
/// credential layer settles with one search for the keys (`credentials::may_hold_key_forms`).
pub(crate) const COLON: u8 = 8;

use crate::json::needs_escape;

/// Bytes read after a position: the longest trigger prefix tested is 4 bytes (`gh?_`).
const LOOKAHEAD: usize = 3;
/// The widest chunk, in positions.
const MAX_CHUNK: usize = 32;
/// Fewest digits that can make a card or phone number.
const MIN_DIGITS: u32 = 9;
/// Fewest token bytes in a row that a vendor rule of the credential layer matches: Slack's
/// `xox?-` and 10 more.
const TOKEN_RUN: u32 = 15;
/// Length of the shortest match of any pattern: an e-mail, `a@b.cd`. The others take 9 digits,
/// or a literal and 12 or more characters after it.
pub(crate) const SHORTEST_MATCH: usize = 6;

/// [`ESCAPES`] and [`TRIGGERS`] of `s`.
#[inline]
pub(crate) fn look(s: &[u8]) -> u8 {
    look_in(s, s.len())
}

/// [`look`] of `bytes[..len]`, reading what follows it as needed (fewer copies).
// Always: called per string of every value, its short path and dispatch cost less inline than
// the call (and the saving of registers its rare paths need).
#[inline(always)]
pub(crate) fn look_in(bytes: &[u8], len: usize) -> u8 {
    if len < SHORTEST_MATCH {
        // Too short to hold a match: the escape test alone, on a word (many values are this short).
        return u8::from(needs_escape(&bytes[..len])) * ESCAPES;
    }
    #[cfg(target_arch = "x86_64")]
    return x86::look_in(bytes, len);
    #[cfg(not(target_arch = "x86_64"))]
    return portable::look_in(bytes, len);
}

/// Hands `test` every window of `chunk + LOOKAHEAD` bytes that starts a chunk of
/// `bytes[..len]`, with the number of its positions that are the string's (`chunk` or more:
/// all). Windows that would pass the end of `bytes` are copies padded with spaces.
#[inline(always)]
fn windows(bytes: &[u8], len: usize, chunk: usize, mut test: impl FnMut(&[u8], usize)) {
    let mut at = 0;
    while at < len {
        let Some(window) = bytes.get(at..at + chunk + LOOKAHEAD) else { break };
        test(window, len - at);
        at += chunk;
    }
    if at >= len {
        return;
    }
    // The rest of the string and what can be read after it, as a full window would hold.
    let rest = &bytes[at..bytes.len().min(len + LOOKAHEAD)];
    let mut pad = [b' '; 2 * MAX_CHUNK + LOOKAHEAD];
    pad[..rest.len()].copy_from_slice(rest);
    test(&pad[..chunk + LOOKAHEAD], len - at);
    if len - at > chunk {
        test(&pad[chunk..2 * chunk + LOOKAHEAD], len - at - chunk);
    }
}

/// The lanes where a [`CREDS`] literal starts, from the lanes' bytes `$a` to `$c` (each the
/// next position's) and the lane tests `$eq` (against a byte), `$and` and `$or`.
#[cfg(target_arch = "x86_64")]
macro_rules! creds_lanes {
    ($a:ident, $b:ident, $c:ident, $eq:ident, $and:ident, $or:ident) => {{
        let ab = |x: u8, y: u8| $and($eq($a, x), $eq($b, y));
        let abc = |x: u8, y: u8, z: u8| $and(ab(x, y), $eq($c, z));
        $or(
            $or($eq($a, b'='), ab(b'-', b'-')),
            $or($or(abc(b':', b'/', b'/'), abc(b'B', b'a', b's')), $and($eq($b, b'Q'), $eq($c, b'~'))),
        )
    }};
}

/// Whether [`TOKEN_RUN`] token bytes stand in a row, fed the lanes' token masks chunk by chunk
/// (bit `i` for lane `i`), so that a run across chunks counts.
#[derive(Default)]
struct Runs {
    /// Token bytes in a row at the end of the chunks so far.
    carry: u32,
    found: bool,
}

impl Runs {
    /// Feeds the mask `m` of a chunk of `width` lanes (lanes past the string clear).
    #[inline(always)]
    fn feed(&mut self, m: u32, width: u32) {
        let lead = m.trailing_ones();
        // Bit `i` of `x` ends up set when lanes `i` to `i + 14` all are: runs of 2, 4, 8, 15.
        let x = m & (m >> 1);
        let x = x & (x >> 2);
        let x = x & (x >> 4);
        self.found |= self.carry + lead >= TOKEN_RUN || x & (x >> (TOKEN_RUN - 8)) != 0;
        self.carry = if lead >= width { self.carry + width } else { (m << (32 - width)).leading_ones() };
    }
}

/// One chunk test written once for SSE2 and AVX2: `$v` the vector type, `$w` its width, and the
/// intrinsics by role.
#[cfg(target_arch = "x86_64")]
macro_rules! simd_look {
    (
        $feature:literal, $name:ident, $v:ty, $w:expr, load: $load:ident, set1: $set1:ident,
        zero: $zero:ident, eq: $eq:ident, and: $and:ident, or: $or:ident, subs: $subs:ident,
        sub: $sub:ident, adds: $adds:ident, movemask: $movemask:ident, sum: $sum:ident
    ) => {
        /// `bytes` and `len` as for [`look_in`](super::look_in).
        ///
        /// # Safety
        /// The CPU must have the feature.
        #[target_feature(enable = $feature)]
        // SAFETY: callers check the feature first (`look_in`), as its `# Safety` requires.
        pub(super) unsafe fn $name(bytes: &[u8], len: usize) -> u8 {
            /// `$w` lanes set, then `$w` clear: loaded at `$w - n`, the first `n` lanes set.
            static LANES: [u8; 2 * $w] = {
                let mut t = [0; 2 * $w];
                let mut i = 0;
                while i < $w {
                    t[i] = 0xFF;
                    i += 1;
                }
                t
            };
            // Closures, not functions: they inherit the target feature, so the intrinsics inline.
            let load = |w: &[u8], at: usize| -> $v {
                let bytes: &[u8; $w] = w[at..at + $w].try_into().expect("slice of a chunk's length");
                // SAFETY: `bytes` is `$w` readable bytes; the load has no alignment requirement.
                unsafe { $load(bytes.as_ptr().cast()) }
            };
            let splat = |b: u8| $set1(b as i8);
            let eq = |v: $v, b: u8| $eq(v, splat(b));
            // Lanes whose byte is at most `max` (unsigned).
            let at_most = |v: $v, max: u8| $eq($subs(v, splat(max)), $zero());
            let and = |x: $v, y: $v| $and(x, y);
            let or = |x: $v, y: $v| $or(x, y);
            // Token bytes: ASCII letters and digits, `_ . + / = -`.
            let token = |v: $v| {
                let letter = at_most($sub($or(v, splat(0x20)), splat(b'a')), 25);
                let digit = at_most($sub(v, splat(b'0')), 9);
                let marks = $or(
                    $or($or(eq(v, b'_'), eq(v, b'.')), $or(eq(v, b'+'), eq(v, b'/'))),
                    $or(eq(v, b'='), eq(v, b'-')),
                );
                $or($or(letter, digit), marks)
            };
            let (mut triggers, mut escapes, mut digits, mut creds) = ($zero(), $zero(), $zero(), $zero());
            let mut colons = $zero();
            let mut runs = super::Runs::default();
            super::windows(bytes, len, $w, |w, valid| {
                let (a, b, c, d) = (load(w, 0), load(w, 1), load(w, 2), load(w, 3));
                let mut cr = creds_lanes!(a, b, c, eq, and, or);
                let mut tok = token(a);
                let case = splat(0x20);
                let bea = $and($and(eq($or(a, case), b'b'), eq($or(b, case), b'e')), eq($or(c, case), b'a'));
                let words = $or(
                    $or($and(eq(b, b'k'), eq(c, b'-')), $and(eq(b, b'h'), eq(d, b'_'))),
                    $or($or($and(eq(a, b'A'), eq(b, b'K')), $and(eq(b, b'y'), eq(c, b'J'))), bea),
                );
                let mut t = $or(words, eq(a, b'@'));
                let mut e = $or(at_most(a, 0x1F), $or(eq(a, b'"'), eq(a, b'\\')));
                let mut n = $and(at_most($sub(a, splat(b'0')), 9), splat(1));
                let mut co = eq(a, b':');
                if valid < $w {
                    // The string ends in this chunk: only its positions count.
                    let lanes = load(&LANES, $w - valid);
                    t = $and(t, lanes);
                    e = $and(e, lanes);
                    n = $and(n, lanes);
                    cr = $and(cr, lanes);
                    co = $and(co, lanes);
                    tok = $and(tok, lanes);
                }
                triggers = $or(triggers, t);
                escapes = $or(escapes, e);
                digits = $adds(digits, n);
                creds = $or(creds, cr);
                colons = $or(colons, co);
                runs.feed($movemask(tok) as u32, $w);
            });
            let triggers = $movemask(triggers) != 0 || $sum(digits) >= super::MIN_DIGITS;
            let creds = $movemask(creds) != 0 || runs.found;
            u8::from($movemask(escapes) != 0) * super::ESCAPES
                + u8::from(triggers) * super::TRIGGERS
                + u8::from(creds) * super::CREDS
                + u8::from($movemask(colons) != 0) * super::COLON
        }
    };
}

/// SSE2 is part of x86_64; AVX2 is looked up once (std caches it) and taken when present.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    #[inline(always)]
    pub(super) fn look_in(bytes: &[u8], len: usize) -> u8 {
        if std::arch::is_x86_feature_detected!("avx2") {
            // Most strings fit one chunk with the bytes after them readable: one window, without
            // the loop, the lane masks and the digit sums of the general path.
            if let Some(window) = bytes.first_chunk::<{ 32 + super::LOOKAHEAD }>().filter(|_| len <= 32) {
                if std::arch::is_x86_feature_detected!("popcnt") {
                    // SAFETY: the CPU has AVX2 and POPCNT (just checked).
                    return unsafe { look_one_avx2(window, len) };
                }
            }
            // SAFETY: the CPU has AVX2 (just checked).
            unsafe { look_avx2(bytes, len) }
        } else {
            // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
            unsafe { look_sse2(bytes, len) }
        }
    }

    simd_look!(
        "sse2", look_sse2, __m128i, 16, load: _mm_loadu_si128, set1: _mm_set1_epi8, zero: _mm_setzero_si128,
        eq: _mm_cmpeq_epi8, and: _mm_and_si128, or: _mm_or_si128, subs: _mm_subs_epu8, sub: _mm_sub_epi8,
        adds: _mm_adds_epu8, movemask: _mm_movemask_epi8, sum: sum_128
    );

    simd_look!(
        "avx2", look_avx2, __m256i, 32, load: _mm256_loadu_si256, set1: _mm256_set1_epi8,
        zero: _mm256_setzero_si256, eq: _mm256_cmpeq_epi8, and: _mm256_and_si256, or: _mm256_or_si256,
        subs: _mm256_subs_epu8, sub: _mm256_sub_epi8, adds: _mm256_adds_epu8, movemask: _mm256_movemask_epi8,
        sum: sum_256
    );

    /// [`look_avx2`] of `window[..len]`, `len` from 1 to 32: the chunk's tests once, their lanes
    /// as bit masks (the digits counted by `popcnt`).
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[target_feature(enable = "avx2,popcnt")]
    // SAFETY: called only once AVX2 and POPCNT are detected (`look_in`).
    unsafe fn look_one_avx2(window: &[u8; 32 + super::LOOKAHEAD], len: usize) -> u8 {
        debug_assert!((1..=32).contains(&len));
        // SAFETY: each load reads 32 bytes at 0 to 3, within the window's 35; unaligned loads.
        let (a, b, c, d) = unsafe {
            let p = window.as_ptr();
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(1).cast()),
                _mm256_loadu_si256(p.add(2).cast()),
                _mm256_loadu_si256(p.add(3).cast()),
            )
        };
        let splat = |b: u8| _mm256_set1_epi8(b as i8);
        let eq = |v: __m256i, b: u8| _mm256_cmpeq_epi8(v, splat(b));
        let at_most = |v: __m256i, max: u8| _mm256_cmpeq_epi8(_mm256_subs_epu8(v, splat(max)), _mm256_setzero_si256());
        let or = |x, y| _mm256_or_si256(x, y);
        let and = |x, y| _mm256_and_si256(x, y);
        let case = splat(0x20);
        let bea = and(and(eq(or(a, case), b'b'), eq(or(b, case), b'e')), eq(or(c, case), b'a'));
        let words = or(
            or(and(eq(b, b'k'), eq(c, b'-')), and(eq(b, b'h'), eq(d, b'_'))),
            or(or(and(eq(a, b'A'), eq(b, b'K')), and(eq(b, b'y'), eq(c, b'J'))), bea),
        );
        let triggers = or(words, eq(a, b'@'));
        let escapes = or(at_most(a, 0x1F), or(eq(a, b'"'), eq(a, b'\\')));
        let digits = at_most(_mm256_sub_epi8(a, splat(b'0')), 9);
        let creds = creds_lanes!(a, b, c, eq, and, or);
        let letter = at_most(_mm256_sub_epi8(or(a, case), splat(b'a')), 25);
        let marks = or(or(or(eq(a, b'_'), eq(a, b'.')), or(eq(a, b'+'), eq(a, b'/'))), or(eq(a, b'='), eq(a, b'-')));
        let token = or(or(letter, digits), marks);
        // The string's positions: the first `len` lanes.
        let mine = u32::MAX >> (32 - len);
        let bits = |v: __m256i| _mm256_movemask_epi8(v) as u32 & mine;
        let triggers = bits(triggers) != 0 || bits(digits).count_ones() >= super::MIN_DIGITS;
        let mut runs = super::Runs::default();
        runs.feed(bits(token), 32);
        let creds = bits(creds) != 0 || runs.found;
        u8::from(bits(escapes) != 0) * super::ESCAPES
            + u8::from(triggers) * super::TRIGGERS
            + u8::from(creds) * super::CREDS
            + u8::from(bits(eq(a, b':')) != 0) * super::COLON
    }

    /// Sum of the lanes' digit counts (each at most 255: no overflow).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn sum_128(v: __m128i) -> u32 {
        let sums = _mm_sad_epu8(v, _mm_setzero_si128());
        _mm_cvtsi128_si32(sums) as u32 + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8)) as u32
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn sum_256(v: __m256i) -> u32 {
        let sums = _mm256_sad_epu8(v, _mm256_setzero_si256());
        sum_128(_mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256::<1>(sums)))
    }

    /// The SSE2 path, also on a CPU with AVX2 (tests).
    #[cfg(test)]
    pub(super) fn look_in_sse2(bytes: &[u8], len: usize) -> u8 {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe { look_sse2(bytes, len) }
    }
}

/// Whether a [`CREDS`] literal starts at a position holding `a`, followed by `b` and `c` (the
/// portable path's form of `creds_lanes!`).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn creds_at(a: u8, b: u8, c: u8) -> bool {
    let ab = |x, y| (a == x) & (b == y);
    let abc = |x, y, z| ab(x, y) & (c == z);
    (a == b'=') | ab(b'-', b'-') | abc(b':', b'/', b'/') | abc(b'B', b'a', b's') | ((b == b'Q') & (c == b'~'))
}

/// `[A-Za-z0-9+/=_.-]`: the bytes of base64 and of dotted tokens.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn is_token(a: u8) -> bool {
    a.is_ascii_alphanumeric() | matches!(a, b'_' | b'.' | b'+' | b'/' | b'=' | b'-')
}

/// The same tests one position at a time, branch-free (the compiler vectorises them).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))] // compared with the SIMD paths in tests
mod portable {
    use super::MIN_DIGITS;

    const CHUNK: usize = 16;

    pub(super) fn look_in(bytes: &[u8], len: usize) -> u8 {
        let (mut triggers, mut escapes, mut digits, mut creds, mut colon) = (false, false, 0u32, false, false);
        let mut runs = super::Runs::default();
        super::windows(bytes, len, CHUNK, |w, valid| {
            let (mut t, mut e, mut n, mut cr, mut co, mut tok) = (0u8, 0u8, 0u8, 0u8, 0u8, 0u32);
            for i in 0..CHUNK {
                // Positions past the string (only in its last chunk) count for nothing.
                let mine = u8::from(i < valid);
                let (a, b, c, d) = (w[i], w[i + 1], w[i + 2], w[i + 3]);
                t |= mine
                    & (u8::from(a == b'@')
                        | (u8::from(b == b'k') & u8::from(c == b'-'))
                        | (u8::from(b == b'h') & u8::from(d == b'_'))
                        | (u8::from(a == b'A') & u8::from(b == b'K'))
                        | (u8::from(b == b'y') & u8::from(c == b'J'))
                        | (u8::from(a | 0x20 == b'b') & u8::from(b | 0x20 == b'e') & u8::from(c | 0x20 == b'a')));
                e |= mine & (u8::from(a < 0x20) | u8::from(a == b'"') | u8::from(a == b'\\'));
                n += mine & u8::from(a.wrapping_sub(b'0') < 10);
                cr |= mine & u8::from(super::creds_at(a, b, c));
                co |= mine & u8::from(a == b':');
                tok |= u32::from(mine & u8::from(super::is_token(a))) << i;
            }
            triggers |= t != 0;
            escapes |= e != 0;
            digits = digits.saturating_add(u32::from(n));
            creds |= cr != 0;
            colon |= co != 0;
            runs.feed(tok, CHUNK as u32);
        });
        let creds = creds || runs.found;
        let triggers = triggers || digits >= MIN_DIGITS;
        u8::from(escapes) * super::ESCAPES
            + u8::from(triggers) * super::TRIGGERS
            + u8::from(creds) * super::CREDS
            + u8::from(colon) * super::COLON
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
        let triggers = len >= SHORTEST_MATCH
            && (digits >= 9
                || (0..len).any(|i| {
                    ["@", "?k-", "?h?_", "AK", "?yJ"].iter().any(|lit| starts(i, lit.as_bytes()))
                        || bytes.get(i..i + 3).is_some_and(|w| w.eq_ignore_ascii_case(b"bea"))
                }));
        const CREDS_LITERALS: [&str; 5] = ["=", "--", "://", "Bas", "?Q~"];
        let token = |b: &u8| b.is_ascii_alphanumeric() || b"_.+/=-".contains(b);
        let longest_run = s.split(|b| !token(b)).map(<[u8]>::len).max().unwrap_or(0);
        let creds = len >= SHORTEST_MATCH
            && ((0..len).any(|i| CREDS_LITERALS.iter().any(|lit| starts(i, lit.as_bytes())))
                || longest_run >= TOKEN_RUN as usize);
        let colon = len >= SHORTEST_MATCH && s.contains(&b':');
        u8::from(escapes) * ESCAPES + u8::from(triggers) * TRIGGERS + u8::from(creds) * CREDS + u8::from(colon) * COLON
    }

    fn check(s: &[u8]) {
        let expected = naive(s, s.len());
        assert_eq!(look(s), expected, "{:?}", String::from_utf8_lossy(s));
        if s.len() >= SHORTEST_MATCH {
            assert_eq!(portable::look_in(s, s.len()), expected, "{:?}", String::from_utf8_lossy(s));
            #[cfg(target_arch = "x86_64")]
            assert_eq!(x86::look_in_sse2(s, s.len()), expected, "{:?}", String::from_utf8_lossy(s));
        }
        if let Ok(text) = std::str::from_utf8(s) {
            // The hint is sound: no trigger flagged, nothing for the exact scan to find (shorter
            // strings: `shorter_strings_never_match`).
            if expected & TRIGGERS == 0 && s.len() >= SHORTEST_MATCH {
                assert_eq!(patterns::scan(text), 0, "{text:?}");
            }
        }
    }

    /// [`check`], and the look of `s` followed by more readable bytes.
    fn check_with_tails(s: &[u8]) {
        check(s);
        // Followed by bytes that would be every trigger and escape: they count only to complete a
        // trigger that starts in the string. Up to 4 bytes complete one; 19 and 35 let the last
        // 16- or 32-position chunk read on instead of copying.
        const MORE: &[u8] = b"@0123456789\"\n\x00sk-ghp_AKIAeyJbea@0123456789\"\n\x00";
        for start in [&b"k-"[..], b"Kh_", b"yJ", b"ea", b"EA", b"@9\"\n\x00"] {
            let tail = [start, MORE].concat();
            for n in [0, 1, 2, 3, 4, 18, 19, 34, 35, 40] {
                let bytes = [s, &tail[..n]].concat();
                let expected = naive(&bytes, s.len());
                assert_eq!(look_in(&bytes, s.len()), expected, "{:?}+{n}", String::from_utf8_lossy(s));
                if s.len() >= SHORTEST_MATCH {
                    assert_eq!(portable::look_in(&bytes, s.len()), expected, "{:?}+{n}", String::from_utf8_lossy(s));
                    #[cfg(target_arch = "x86_64")]
                    assert_eq!(x86::look_in_sse2(&bytes, s.len()), expected, "{:?}+{n}", String::from_utf8_lossy(s));
                }
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
        let needles: [&[u8]; 26] = [
            b"@", b"0", b"9", b"/", b":", b"sk-", b"k-", b"gh_", b"ghp_", b"gh\xff_", b"h_", b"AKI", b"AKIA", b"eyJ",
            b"yJ", b"bea", b"BEA", b"bEa", b"Bearer", b"\"", b"\\", b"\n", b"\x00", b"\x1f", b"\x20", b"\x7f",
        ];
        for bg in backgrounds {
            for len in 0..72 {
                let base: Vec<u8> = bg.iter().copied().cycle().take(len).collect();
                check_with_tails(&base);
                for needle in needles {
                    for at in 0..=len {
                        let mut s = base[..at].to_vec();
                        s.extend_from_slice(needle);
                        s.extend_from_slice(&base[at..]);
                        check(&s);
                        // The needle cut short by the end of the string (and what may follow).
                        let cut = &s[..at + needle.len() - 1];
                        if bg == backgrounds[0] && len < 40 {
                            check_with_tails(cut);
                        } else {
                            check(cut);
                        }
                    }
                    check_with_tails(&[&base, needle].concat());
                }
            }
        }
    }

    /// No string shorter than [`SHORTEST_MATCH`] is changed by the nine patterns (all of them
    /// run, without the prefilter): every such string over characters that the patterns take.
    #[test]
    fn shorter_strings_never_match() {
        let alphabet = ['a', 'Z', '0', '@', '.', '-', '_', ' '];
        let mut strings = vec![String::new()];
        for _ in 1..SHORTEST_MATCH {
            strings = strings.iter().flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}"))).collect();
            for s in &strings {
                assert_eq!(patterns::apply(s, patterns::ALL, false), s.as_str(), "{s:?}");
            }
        }
        assert_ne!(patterns::apply("a@b.cd", patterns::ALL, false), "a@b.cd");
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
