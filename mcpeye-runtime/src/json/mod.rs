//! Compact JSON as serde_json writes it, written and measured by hand: the encoder writes
//! events straight into the batch buffer, and the caps measure values without serialising them.

pub(crate) mod flat;
pub(crate) mod node;

/// Compact JSON length of a string: quotes plus serde_json's escapes (`\"`, `\\`, the
/// two-character `\b\t\n\f\r`, `\u00XX` for other control characters).
pub(crate) fn string_len(s: &str) -> usize {
    string_len_with(s, needs_escape(s.as_bytes()))
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

/// Whether serde_json escapes any of a string's bytes `s`. Most strings need no escape: a
/// branch-free test over 16 bytes at a time (vectorised) settles them, and the last 0 to 15 bytes
/// are tested as one or two 64-bit words (most strings, keys above all, are that short).
#[inline]
pub(crate) fn needs_escape(s: &[u8]) -> bool {
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
#[inline(always)]
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
            let at = out.len();
            // A fixed-size copy, then the bytes past `bytes` cut off (`readable` starts with it).
            out.extend_from_slice(block);
            out.truncate(at + bytes.len());
        }
        _ => out.extend_from_slice(bytes),
    }
}

/// [`is_plain_ascii`] of the first `len` bytes of `block` (`len` at most [`BLOCK`]): a word
/// test per 8 bytes up to `len`, the bytes past it ignored (keys are mostly short, and the word
/// tests of `is_plain_ascii` cost more to set up than this).
#[inline(always)]
pub(crate) fn block_is_plain_ascii(block: &[u8; BLOCK], len: usize) -> bool {
    let mut left = len.min(BLOCK);
    for word in block.chunks_exact(8) {
        if left == 0 {
            break;
        }
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // The high bits of the word's first `left` bytes.
        let mine = if left >= 8 { HIGH } else { HIGH & ((1 << (8 * left)) - 1) };
        if word_flags(w) & mine != 0 {
            return false;
        }
        left = left.saturating_sub(8);
    }
    true
}

/// The high bit of each byte of `w` that is not ASCII, below 0x20, `"` or `\\`: exact per byte
/// (no carry crosses a byte, unlike [`word_escapes`]).
#[inline(always)]
fn word_flags(w: u64) -> u64 {
    const LOW7: u64 = !HIGH;
    // A byte's high bit is set when its low 7 bits are not 0 (`nonzero`) or reach 0x20 (`tall`).
    let nonzero = |v: u64| ((v & LOW7) + LOW7) | v;
    let tall = (w & LOW7) + ONES * (0x80 - 0x20);
    let quote = nonzero(w ^ (ONES * u64::from(b'"')));
    let backslash = nonzero(w ^ (ONES * u64::from(b'\\')));
    (w | !tall | !quote | !backslash) & HIGH
}

/// Appends `lead`, then the first `len` bytes of `block` quoted (a string that needs no
/// escape), then `tail`: put together on the stack, appended as one fixed-size copy with one
/// capacity check (a push per piece would pay one each, for every key and value), then cut back.
#[inline(always)]
pub(crate) fn write_block(out: &mut Vec<u8>, lead: Option<u8>, block: &[u8; BLOCK], len: usize, tail: Option<u8>) {
    assert!(len <= BLOCK);
    let mut buf = [0u8; BLOCK + 4];
    let mut n = 0;
    if let Some(b) = lead {
        buf[0] = b;
        n = 1;
    }
    buf[n] = b'"';
    buf[n + 1..n + 1 + BLOCK].copy_from_slice(block);
    buf[n + 1 + len] = b'"';
    n += len + 2;
    if let Some(b) = tail {
        buf[n] = b;
        n += 1;
    }
    let at = out.len();
    out.extend_from_slice(&buf);
    out.truncate(at + n);
}

/// `id` as [`uuid::Uuid::hyphenated`]`().encode_lower` writes it, eight digits per word
/// operation: uuid's byte-at-a-time loop is slower, and runs for every event.
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

/// The 32 lower-case hex digits of `bytes`, most significant nibble first: four bytes at a time
/// in a 64-bit word, each byte spread over two and split into its nibbles, every digit computed
/// at once (no carry crosses a byte).
#[inline(always)]
fn hex_lower(bytes: &[u8; 16]) -> [u8; 32] {
    const NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    let mut hex = [0u8; 32];
    for (four, digits) in bytes.chunks_exact(4).zip(hex.chunks_exact_mut(8)) {
        let x = u64::from(u32::from_le_bytes(four.try_into().expect("four bytes")));
        // Byte i moves to bytes 2i and 2i + 1.
        let x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
        let x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
        // The high nibble first (the lower byte), then the low one.
        let n = ((x >> 4) | (x << 8)) & NIBBLES;
        // '0' + n, and 'a' - 10 = '0' + n + 0x27 past 9 (bit 4 of n + 6 is set exactly then).
        let alpha = ((n + ONES * 6) >> 4 & ONES) * 0x27;
        digits.copy_from_slice(&(n + ONES * u64::from(b'0') + alpha).to_le_bytes());
    }
    hex
}

/// [`hex_lower`] a byte at a time (what the word version is compared with in tests).
#[cfg(test)]
fn hex_lower_portable(bytes: &[u8; 16]) -> [u8; 32] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 32];
    for (i, b) in bytes.iter().enumerate() {
        hex[2 * i] = DIGITS[usize::from(b >> 4)];
        hex[2 * i + 1] = DIGITS[usize::from(b & 15)];
    }
    hex
}

/// Appends `parts` in order after one reserve (an event's fixed keys and short fields).
#[inline(always)]
pub(crate) fn write_parts<const N: usize>(out: &mut Vec<u8>, parts: [&[u8]; N]) {
    out.reserve(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        out.extend_from_slice(part);
    }
}

/// Writes `s` as a JSON string exactly as serde_json does.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_with(out, s, needs_escape(s.as_bytes()));
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
                assert_eq!(needs_escape(clean.as_bytes()), naive(&clean), "{clean:?}");
                assert_eq!(is_plain_ascii(&clean), plain(&clean), "{clean:?}");
                for special in
                    ['"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '\u{7f}', '!', '#', '[', ']', 'é', '\u{80}', '界']
                {
                    for at in 0..clean.chars().count().max(1) {
                        let s: String =
                            clean.chars().take(at).chain([special]).chain(clean.chars().skip(at + 1)).collect();
                        assert_eq!(needs_escape(s.as_bytes()), naive(&s), "{s:?}");
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
