//! Compact JSON as serde_json writes it, written and measured by hand: the encoder writes
//! events straight into the batch buffer, and the caps measure values without serialising them.

/// Compact JSON length of a string: quotes plus serde_json's escapes (`\"`, `\\`, the
/// two-character `\b\t\n\f\r`, `\u00XX` for other control characters).
pub(crate) fn string_len(s: &str) -> usize {
    if !needs_escape(s) {
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
/// (vectorised) settles them.
pub(crate) fn needs_escape(s: &str) -> bool {
    s.bytes().fold(false, |acc, b| acc | (b < 0x20) | (b == b'"') | (b == b'\\'))
}

/// Writes `s` as a JSON string exactly as serde_json does.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    if needs_escape(s) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Writes an unsigned integer in decimal.
pub(crate) fn write_number(out: &mut Vec<u8>, n: u64) {
    let _ = serde_json::to_writer(&mut *out, &n);
}
