//! Compact JSON as serde_json writes it, written and measured by hand: the encoder writes
//! events straight into the batch buffer, and the caps measure values without serialising them.

pub(crate) mod flat;
pub(crate) mod flat_ser;
pub(crate) mod node;

/// Compact JSON length of a string: quotes plus serde_json's escapes (`\"`, `\\`, the
/// two-character `\b\t\n\f\r`, `\u00XX` for other control characters).
pub(crate) fn string_len(s: &str) -> usize {
    string_len_with(s, needs_escape(s))
}

/// [`string_len`] when [`needs_escape`]`(s)` is known.
#[inline]
pub(crate) fn string_len_with(s: &str, escapes: bool) -> usize {
    if !escapes {
        return s.len() + 2;
    }
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | b'\t' | b'\n' | 0x0C | b'\r' => 1,
            0..=0x1F => 5,
            _ => 0,
        })
        .sum();
    s.len() + 2 + extra
}

/// Whether serde_json escapes any byte of `s`. Most strings need no escape: a branch-free test
/// over 16 bytes at a time (vectorised) settles them, and the last 0 to 15 bytes are tested as
/// one or two 64-bit words (most strings, keys above all, are that short).
#[inline]
pub(crate) fn needs_escape(s: &str) -> bool {
    bytes_need_escape(s.as_bytes())
}

/// [`needs_escape`] of the bytes of a string.
#[inline]
pub(crate) fn bytes_need_escape(s: &[u8]) -> bool {
    any_byte(s, |b| b < 0x20 || b == b'"' || b == b'\\', word_escapes)
}

/// Whether `s` is ASCII and needs no escape: its JSON is its bytes in quotes, and it lowercases
/// to ASCII (the denylist's cheaper compare). One look instead of two, for keys.
#[inline]
pub(crate) fn is_plain_ascii(s: &str) -> bool {
    !any_byte(
        s.as_bytes(),
        |b| !(0x20..0x80).contains(&b) || b == b'"' || b == b'\\',
        |w| word_escapes(w) || w & HIGH != 0,
    )
}

/// Whether `byte` holds for a byte of `s`; `word` is the same test of 8 bytes at once.
#[inline(always)]
fn any_byte(s: &[u8], byte: impl Fn(u8) -> bool, word: impl Fn(u64) -> bool) -> bool {
    let mut chunks = s.chunks_exact(16);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |acc, &b| acc | byte(b)) {
            return true;
        }
    }
    let rest = chunks.remainder();
    let n = rest.len();
    let whole = |at: usize| {
        let mut w = [0; 8];
        w.copy_from_slice(&rest[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let half = |at: usize| {
        let mut w = [0; 4];
        w.copy_from_slice(&rest[at..at + 4]);
        u64::from(u32::from_le_bytes(w))
    };
    match n {
        // Overlapping words: a byte tested twice changes nothing.
        8.. => word(whole(0)) | word(whole(n - 8)),
        4.. => word(half(0) | half(n - 4) << 32),
        // `a` (0x61) is in no test: it pads the missing bytes.
        1.. => word(u64::from_le_bytes([rest[0], rest[n / 2], rest[n - 1], b'a', b'a', b'a', b'a', b'a'])),
        0 => false,
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether a byte of `w` is below 0x20, `"` or `\` (exact: the classic "has a zero byte" test
/// of the word XORed with each character, and "has a byte less than" for 0x20).
#[inline(always)]
fn word_escapes(w: u64) -> bool {
    let below = w.wrapping_sub(ONES * 0x20) & !w;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero = |v: u64| v.wrapping_sub(ONES) & !v;
    (below | zero(quote) | zero(backslash)) & HIGH != 0
}

/// Writes `s`, known to need no escape ([`needs_escape`] false), as a JSON string.
#[inline]
pub(crate) fn write_plain(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Longest string [`write_plain_in`] copies as one block.
pub(crate) const BLOCK: usize = 32;

/// [`write_plain`] of `s`, whose bytes `readable` starts with: a string of up to 32 bytes with
/// as many readable is copied as one fixed-size block then cut back, without a call to memcpy
/// (most strings are that short, and the call cost more than the copy).
#[inline]
pub(crate) fn write_plain_in(out: &mut Vec<u8>, s: &str, readable: &[u8]) {
    match readable.first_chunk::<BLOCK>() {
        Some(block) if s.len() <= BLOCK => write_block(out, None, block, s.len(), None),
        _ => write_plain(out, s),
    }
}

/// Appends `bytes`, which `readable` starts with: up to [`BLOCK`] bytes with as many readable
/// are copied as one fixed-size block then cut back, without a call to memcpy (numbers).
#[inline(always)]
pub(crate) fn write_raw_in(out: &mut Vec<u8>, bytes: &[u8], readable: &[u8]) {
    match readable.first_chunk::<BLOCK>() {
        Some(block) if bytes.len() <= BLOCK => {
            out.reserve(BLOCK);
            let at = out.len();
            // SAFETY: the reserve leaves room for the whole block; `set_len` then covers only its
            // first `bytes.len()` bytes, which are `bytes` (`readable` starts with them).
            unsafe {
                std::ptr::copy_nonoverlapping(block.as_ptr(), out.as_mut_ptr().add(at), BLOCK);
                out.set_len(at + bytes.len());
            }
        }
        _ => out.extend_from_slice(bytes),
    }
}

/// [`is_plain_ascii`] of the first `len` bytes of `block` (`len` at most [`BLOCK`]): one look
/// at the whole block, the bytes past `len` ignored (keys are mostly short, and the word tests
/// of `is_plain_ascii` cost more to set up than this).
#[inline(always)]
pub(crate) fn block_is_plain_ascii(block: &[u8; BLOCK], len: usize) -> bool {
    let mine = (1u64 << len) - 1;
    // Most keys fit the first half: one look at it.
    match block.first_chunk::<{ BLOCK / 2 }>() {
        Some(half) if len <= BLOCK / 2 => half_flags(half) & mine == 0,
        _ => block_flags(block) & mine == 0,
    }
}

/// A bit per byte of `block` that is not ASCII, below 0x20, `"` or `\\`.
#[inline(always)]
fn block_flags(block: &[u8; BLOCK]) -> u64 {
    let (low, high) = block.split_at(BLOCK / 2);
    let half = |h: &[u8]| half_flags(h.try_into().expect("half a block"));
    half(low) | half(high) << (BLOCK / 2)
}

/// [`block_flags`] of 16 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn half_flags(half: &[u8; BLOCK / 2]) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the 16 bytes loaded are `half` (unaligned
    // load).
    unsafe {
        let v = _mm_loadu_si128(half.as_ptr().cast());
        // Signed, non-ASCII bytes are negative: one compare flags them and those below 0x20.
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        u64::from(_mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, backslash))) as u16)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn half_flags(half: &[u8; BLOCK / 2]) -> u64 {
    let mut flags = 0u64;
    for (i, &b) in half.iter().enumerate() {
        flags |= u64::from(!(0x20..0x80).contains(&b) || b == b'"' || b == b'\\') << i;
    }
    flags
}

/// Appends `lead`, then the first `len` bytes of `block` quoted (a string that needs no
/// escape), then `tail`: all in one reserve, the block copied whole and cut back.
#[inline(always)]
pub(crate) fn write_block(out: &mut Vec<u8>, lead: Option<u8>, block: &[u8; BLOCK], len: usize, tail: Option<u8>) {
    assert!(len <= BLOCK);
    let (lead_len, tail_len) = (usize::from(lead.is_some()), usize::from(tail.is_some()));
    out.reserve(lead_len + BLOCK + 2 + tail_len);
    let at = out.len();
    // SAFETY: the reserve leaves room for every byte written below (the block is written whole,
    // the closing quote and `tail` overwrite its bytes from `len` on); `set_len` then covers
    // only bytes just written: `lead`, the quote, `block[..len]`, the quote, `tail`. Through
    // `push`/`extend_from_slice`, every key and value would pay for the capacity checks.
    unsafe {
        let mut p = out.as_mut_ptr().add(at);
        if let Some(b) = lead {
            p.write(b);
            p = p.add(1);
        }
        p.write(b'"');
        std::ptr::copy_nonoverlapping(block.as_ptr(), p.add(1), BLOCK);
        p.add(1 + len).write(b'"');
        if let Some(b) = tail {
            p.add(2 + len).write(b);
        }
        out.set_len(at + lead_len + len + 2 + tail_len);
    }
}

/// `id` as [`uuid::Uuid::hyphenated`]`().encode_lower` writes it, in a few vector operations:
/// uuid's byte-at-a-time loop is slower, and runs for every event.
#[inline]
pub(crate) fn hyphenated_lower(id: &uuid::Uuid) -> [u8; 36] {
    let hex = hex_lower(id.as_bytes());
    let mut out = [b'-'; 36];
    out[..8].copy_from_slice(&hex[..8]);
    out[9..13].copy_from_slice(&hex[8..12]);
    out[14..18].copy_from_slice(&hex[12..16]);
    out[19..23].copy_from_slice(&hex[16..20]);
    out[24..].copy_from_slice(&hex[20..]);
    out
}

/// The 32 lower-case hex digits of `bytes`, most significant nibble first.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hex_lower(bytes: &[u8; 16]) -> [u8; 32] {
    use std::arch::x86_64::*;
    let mut hex = [0u8; 32];
    // SAFETY: SSE2 is part of the x86_64 baseline; the loads and stores are unaligned, of the 16
    // bytes of `bytes` and the 32 of `hex`.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        let nibble = _mm_set1_epi8(0x0F);
        let high = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
        let low = _mm_and_si128(v, nibble);
        // A nibble's digit: '0' + n, and 'a' - 10 = '0' + n + 0x27 past 9.
        let digits = |n: __m128i| {
            let alpha = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(0x27));
            _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), alpha)
        };
        _mm_storeu_si128(hex.as_mut_ptr().cast(), digits(_mm_unpacklo_epi8(high, low)));
        _mm_storeu_si128(hex.as_mut_ptr().add(16).cast(), digits(_mm_unpackhi_epi8(high, low)));
    }
    hex
}

#[cfg(not(target_arch = "x86_64"))]
use hex_lower_portable as hex_lower;

/// [`hex_lower`] a byte at a time (compared with the SSE2 path in tests).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn hex_lower_portable(bytes: &[u8; 16]) -> [u8; 32] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 32];
    for (i, b) in bytes.iter().enumerate() {
        hex[2 * i] = DIGITS[usize::from(b >> 4)];
        hex[2 * i + 1] = DIGITS[usize::from(b & 15)];
    }
    hex
}

/// Appends `parts` in order with one capacity check (an event's fixed keys and short fields).
#[inline(always)]
pub(crate) fn write_parts<const N: usize>(out: &mut Vec<u8>, parts: [&[u8]; N]) {
    let len = parts.iter().map(|p| p.len()).sum();
    out.reserve(len);
    let mut at = out.len();
    // SAFETY: the reserve leaves room for the `len` bytes copied; `set_len` covers only them,
    // once written. Through `extend_from_slice`, each part paid its own capacity check.
    unsafe {
        for part in parts {
            std::ptr::copy_nonoverlapping(part.as_ptr(), out.as_mut_ptr().add(at), part.len());
            at += part.len();
        }
        out.set_len(at);
    }
}

/// Writes `s` as a JSON string exactly as serde_json does.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_with(out, s, needs_escape(s));
}

/// [`write_str`] when [`needs_escape`]`(s)` is known.
#[inline]
pub(crate) fn write_str_with(out: &mut Vec<u8>, s: &str, escapes: bool) {
    if escapes {
        write_escaped(out, s);
    } else {
        write_plain(out, s);
    }
}

/// [`write_str`] of a string that needs escapes (rare: kept out of line).
#[inline(never)]
pub(crate) fn write_escaped(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Writes an unsigned integer in decimal.
pub(crate) fn write_number(out: &mut Vec<u8>, n: u64) {
    let _ = serde_json::to_writer(&mut *out, &n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_are_written_as_uuid_writes_them() {
        let mut ids = vec![
            uuid::Uuid::nil(),
            uuid::Uuid::max(),
            uuid::Uuid::from_u128(0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210),
        ];
        ids.extend((0..10_000).map(|_| uuid::Uuid::new_v4()));
        // Every byte value at every position.
        ids.extend((0..=255u8).map(|b| uuid::Uuid::from_bytes(std::array::from_fn(|i| b.wrapping_add(i as u8 * 17)))));
        for id in ids {
            let mut expected = uuid::Uuid::encode_buffer();
            let expected = id.hyphenated().encode_lower(&mut expected).as_bytes();
            assert_eq!(&hyphenated_lower(&id)[..], expected, "{id}");
            let mut simple = [0; 32];
            let simple: [u8; 32] = id.simple().encode_lower(&mut simple).as_bytes().try_into().unwrap();
            assert_eq!(hex_lower(id.as_bytes()), simple, "{id}");
            assert_eq!(hex_lower_portable(id.as_bytes()), simple, "{id}");
        }
    }

    /// The word tests agree with a byte-by-byte look, at every length and position, over ASCII
    /// and non-ASCII strings.
    #[test]
    fn needs_escape_is_exact() {
        let naive = |s: &str| s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
        let plain = |s: &str| s.is_ascii() && !naive(s);
        for len in 0..48 {
            for base in ["é-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP", "abcdefghijklmnopqrstuvwxyz~\u{7f}"]
            {
                let clean: String = base.chars().cycle().take(len).collect();
                assert_eq!(needs_escape(&clean), naive(&clean), "{clean:?}");
                assert_eq!(is_plain_ascii(&clean), plain(&clean), "{clean:?}");
                for special in
                    ['"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '\u{7f}', '!', '#', '[', ']', 'é', '\u{80}', '界']
                {
                    for at in 0..clean.chars().count().max(1) {
                        let s: String =
                            clean.chars().take(at).chain([special]).chain(clean.chars().skip(at + 1)).collect();
                        assert_eq!(needs_escape(&s), naive(&s), "{s:?}");
                        assert_eq!(is_plain_ascii(&s), plain(&s), "{s:?}");
                        assert_eq!(string_len(&s), serde_json::to_string(&s).unwrap().len(), "{s:?}");
                    }
                }
            }
        }
    }

    /// The block look agrees with `is_plain_ascii` of the block's first bytes, whatever follows.
    #[test]
    fn block_is_plain_ascii_is_exact() {
        let specials = ['"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '\u{7f}', '~', 'é', '\u{80}', '界'];
        let text: String = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ".into();
        for len in 0..=BLOCK {
            for at in 0..=BLOCK {
                for special in specials {
                    let mut bytes: Vec<u8> = text.bytes().take(at).collect();
                    let mut buf = [0; 4];
                    bytes.extend_from_slice(special.encode_utf8(&mut buf).as_bytes());
                    bytes.resize(BLOCK + 4, b'"');
                    let block: &[u8; BLOCK] = bytes.first_chunk().unwrap();
                    let expected = bytes[..len].iter().all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
                    assert_eq!(block_is_plain_ascii(block, len), expected, "{len} {at} {special:?}");
                }
            }
        }
    }

    /// The block copy writes what the plain copy writes, whatever follows the string, into
    /// buffers with and without spare room.
    #[test]
    fn write_plain_in_is_write_plain() {
        let text = "abcdefghijklmnopqrstuvwxyzé0123456789ABCDEFGHIJ";
        for len in (0..=text.len()).filter(|&n| text.is_char_boundary(n)) {
            let s = &text[..len];
            for after in [0, 1, 15, 16, 31, 32, 40] {
                let readable = [s.as_bytes(), &b"\"x\n\\yz".repeat(8)[..after]].concat();
                for prefix in [0, 5, 1000] {
                    let mut expected = vec![b'p'; prefix];
                    write_plain(&mut expected, s);
                    let mut out = Vec::with_capacity(prefix + 3);
                    out.resize(prefix, b'p');
                    write_plain_in(&mut out, s, &readable);
                    assert_eq!(out, expected, "{s:?} + {after}");
                }
            }
        }
    }
}
