//! The flusher's one-pass form of the value cap (docs/wire-format.md#caps), the redaction (#redaction) and serialisation: a value
//! is measured, redacted and written as compact JSON in a single walk, without being modified
//! or copied. Same bytes as `serde_json::to_writer` of [`Redactor::value`](super::Redactor::value)'s
//! output (with the depth cap also applied when redaction is off).

use super::denylist::Denylist;
use super::prescan::{self, ESCAPES};
use super::{is_entropy_secret, redact_flagged};
use crate::contract::{markers, MAX_VALUE_BYTES, MAX_VALUE_DEPTH};
use crate::json::flat::{Cursor, Flat, Token};
use crate::json::node::{compact_len, Kind, Node, Str};
use crate::json::{
    block_is_plain_ascii, is_plain_ascii, needs_escape, string_len_with, write_block, write_escaped, write_number,
    write_plain, write_plain_in, write_raw_in, write_str, BLOCK,
};
use std::borrow::Cow;

/// Writes `value` capped (by its compact length before redaction), with strings redacted and
/// denylisted fields replaced when `denylist` is given, and containers at [`MAX_VALUE_DEPTH`] or
/// deeper replaced in any case. Returns whether a container was left out (a value nested
/// without limit may be among them: drop it without recursion).
pub(super) fn write_value<'a, N: Node<'a>>(value: N, denylist: Option<&Denylist>, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let mut w = Walk { denylist, out, measured: 0, skipped: false };
    // The walk stops as soon as the value is known to be over the cap: the rest is only measured.
    if !w.value(value, 0) || w.measured > MAX_VALUE_BYTES {
        truncated(out, start, compact_len(value));
        return true;
    }
    w.skipped
}

/// [`write_value`] of a flattened value, by a walk of its own: the bytes are read in order by a
/// cursor, with a stack of the open containers' counts instead of recursion. It is the flusher's
/// path for every record's values: the generic [`Node`] walk pays for calls and iterators on
/// every key and value.
pub(super) fn write_flat(value: Flat<'_>, denylist: Option<&Denylist>, out: &mut Vec<u8>) -> bool {
    let mut w = Walk { denylist, out, measured: 0, skipped: false };
    // Every node's compact JSON, with the comma after it, takes at most 7 bytes per byte of its
    // flat form (`false,` of a 1-byte node is the worst; a string's 6-byte escapes come with its
    // 5-byte header): a small flat value can never pass the cap, and is not measured at all.
    if value.size().saturating_mul(FLAT_GROWTH) <= MAX_VALUE_BYTES {
        w.flat::<false>(Cursor::new(value));
        return w.skipped;
    }
    let start = w.out.len();
    if !w.flat::<true>(Cursor::new(value)) || w.measured > MAX_VALUE_BYTES {
        truncated(out, start, compact_len(value));
        return true;
    }
    w.skipped
}

/// Replaces what was written from `start` by the marker of a value `len` bytes long.
fn truncated(out: &mut Vec<u8>, start: usize, len: usize) {
    out.truncate(start);
    out.extend_from_slice(b"{\"[truncated]\":true,\"bytes\":");
    write_number(out, len as u64);
    out.push(b'}');
}

/// Most bytes of compact JSON per byte of a flat node (see [`write_flat`]).
const FLAT_GROWTH: usize = 7;

/// Marks an object in [`Walk::flat`]'s stack of counts.
const OBJECT: u32 = 1 << 31;

struct Walk<'a> {
    denylist: Option<&'a Denylist>,
    out: &'a mut Vec<u8>,
    /// Compact JSON length of the original value so far.
    measured: usize,
    /// A container was replaced by a marker.
    skipped: bool,
}

impl Walk<'_> {
    /// Counts `n` bytes of output, when measuring.
    #[inline(always)]
    fn add<const MEASURE: bool>(&mut self, n: usize) {
        if MEASURE {
            self.measured += n;
        }
    }

    /// Writes the flat value at `c`; false once the measured length passes the cap (checked at
    /// each string, where a value grows most; the caller checks the whole). Without `MEASURE`,
    /// nothing is measured (a value too small to reach the cap) and the walk always completes.
    fn flat<const MEASURE: bool>(&mut self, mut c: Cursor<'_>) -> bool {
        // Per open container, its items or entries still to come (with [`OBJECT`] for an object).
        // Flat containers nest less than MAX_VALUE_DEPTH deep, and deeper ones are not opened.
        let mut open = [0u32; MAX_VALUE_DEPTH];
        let mut depth = 0;
        loop {
            // A value at `c`, at nesting level `depth`.
            let done = match c.next() {
                Token::Str(s) => {
                    if !self.string::<MEASURE>(s) {
                        return false;
                    }
                    true
                }
                Token::Number(t, readable) => {
                    write_raw_in(self.out, t, readable);
                    self.add::<MEASURE>(t.len());
                    true
                }
                Token::Bool(b) => {
                    self.out.extend_from_slice(if b { b"true" } else { b"false" });
                    self.add::<MEASURE>(if b { 4 } else { 5 });
                    true
                }
                Token::Null => {
                    self.out.extend_from_slice(b"null");
                    self.add::<MEASURE>(4);
                    true
                }
                Token::Array(_) | Token::Object(_) if depth >= MAX_VALUE_DEPTH => {
                    c.back_to_header();
                    if MEASURE {
                        self.measured += compact_len(c.node());
                    }
                    self.skipped = true;
                    c.skip();
                    write_str(self.out, markers::TOO_DEEP);
                    true
                }
                Token::Array(0) => {
                    self.out.extend_from_slice(b"[]");
                    self.add::<MEASURE>(2);
                    true
                }
                Token::Object(0) => {
                    self.out.extend_from_slice(b"{}");
                    self.add::<MEASURE>(2);
                    true
                }
                Token::Array(count) => {
                    self.add::<MEASURE>(count + 1);
                    self.out.push(b'[');
                    // Counts are u32 in the flat form.
                    open[depth] = count as u32;
                    depth += 1;
                    false
                }
                Token::Object(count) => {
                    self.add::<MEASURE>(2 * count + 1);
                    open[depth] = count as u32 | OBJECT;
                    depth += 1;
                    // A denied entry's value is written with its key.
                    self.key::<MEASURE>(&mut c, b'{')
                }
            };
            if !done {
                continue;
            }
            // The value is done: close the containers it ended, then start the next item or entry.
            loop {
                let Some(top) = depth.checked_sub(1) else { return true };
                open[top] -= 1;
                let left = open[top];
                if left & !OBJECT == 0 {
                    self.out.push(if left == 0 { b']' } else { b'}' });
                    depth = top;
                    continue;
                }
                if left & OBJECT == 0 {
                    self.out.push(b',');
                    break;
                }
                if !self.key::<MEASURE>(&mut c, b',') {
                    break;
                }
            }
        }
    }

    /// Writes `lead` (the object's `{` or the comma before the entry), the key at `c` and its
    /// colon; for a denied key, also the marker in place of its value (stepped over). Returns
    /// whether the entry is done.
    #[inline(always)]
    fn key<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, lead: u8) -> bool {
        // Most keys: plain ASCII, short, with a block readable; one look and one write.
        if let Some((k, block)) = c.short_key() {
            if block_is_plain_ascii(block, k.len()) {
                return self.plain_key::<MEASURE>(c, k, block, lead);
            }
            return self.key_slow::<MEASURE>(c, k, block, lead);
        }
        self.key_near_end::<MEASURE>(c, lead)
    }

    /// [`key`](Self::key) of a plain ASCII key of at most [`BLOCK`] bytes, the block starting
    /// with it.
    #[inline(always)]
    fn plain_key<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, k: &str, block: &[u8; BLOCK], lead: u8) -> bool {
        self.add::<MEASURE>(k.len() + 2);
        write_block(self.out, Some(lead), block, k.len(), Some(b':'));
        let denied = self.denylist.is_some_and(|d| d.contains_ascii(k));
        self.denied::<MEASURE>(c, k, denied)
    }

    /// [`key`](Self::key) of a key without a whole block readable from its start (near the end
    /// of the buffer, or long): a short one is looked at in a copy.
    #[inline(never)]
    fn key_near_end<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, lead: u8) -> bool {
        let Str { text: k, readable } = c.key();
        if k.len() <= BLOCK {
            let mut block = [0; BLOCK];
            block[..k.len()].copy_from_slice(k.as_bytes());
            if block_is_plain_ascii(&block, k.len()) {
                return self.plain_key::<MEASURE>(c, k, &block, lead);
            }
        }
        self.key_slow::<MEASURE>(c, k, readable, lead)
    }

    /// [`key`](Self::key) of any other key: not plain ASCII, or long.
    #[inline(never)]
    fn key_slow<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, k: &str, readable: &[u8], lead: u8) -> bool {
        let plain = is_plain_ascii(k);
        let escapes = !plain && needs_escape(k.as_bytes());
        if MEASURE {
            self.measured += string_len_with(k, escapes);
        }
        match readable.first_chunk::<BLOCK>() {
            // Non-ASCII keys without escapes, short ones as one block.
            Some(block) if !escapes && k.len() <= BLOCK => {
                write_block(self.out, Some(lead), block, k.len(), Some(b':'))
            }
            _ => {
                self.out.push(lead);
                if escapes {
                    write_escaped(self.out, k);
                } else {
                    write_plain(self.out, k);
                }
                self.out.push(b':');
            }
        }
        let denied = match self.denylist {
            Some(d) if plain => d.contains_ascii(k),
            Some(d) => d.contains(k),
            None => false,
        };
        self.denied::<MEASURE>(c, k, denied)
    }

    /// For a denied key, writes the marker in place of the value at `c` (stepped over); with
    /// the credential layer, also for a high-entropy string under a key-like `k`. Returns
    /// whether it did.
    #[inline(always)]
    fn denied<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, k: &str, denied: bool) -> bool {
        if !denied && self.denylist.is_some_and(|d| d.rules.credentials) {
            return self.entropy_secret::<MEASURE>(c, k);
        }
        if denied {
            let node = c.node();
            if MEASURE {
                self.measured += compact_len(node);
            }
            self.skipped |= node.is_container();
            c.skip();
            write_str(self.out, markers::FIELD);
        }
        denied
    }

    /// The credential layer's value rule at `c`, under key `k`: a high-entropy string under a
    /// key-like name is written as [`markers::TOKEN`] (stepped over). Returns whether it was.
    #[inline(always)]
    fn entropy_secret<const MEASURE: bool>(&mut self, c: &mut Cursor<'_>, k: &str) -> bool {
        let node = c.node();
        // Most values are not strings long enough to be looked at: no call for them.
        let Kind::Str(Str { text, .. }) = node.kind() else { return false };
        if text.len() < super::credentials::ENTROPY_MIN_LEN || !is_entropy_secret(k, text) {
            return false;
        }
        if MEASURE {
            self.measured += compact_len(node);
        }
        c.skip();
        write_str(self.out, markers::TOKEN);
        true
    }

    /// Writes `v` at nesting level `depth`; false once the measured length passes the cap.
    fn value<'n, N: Node<'n>>(&mut self, v: N, depth: usize) -> bool {
        if depth >= MAX_VALUE_DEPTH && v.is_container() {
            self.measured += compact_len(v);
            self.skipped = true;
            write_str(self.out, markers::TOO_DEEP);
            return self.measured <= MAX_VALUE_BYTES;
        }
        match v.kind() {
            Kind::Array(count, items) => {
                self.measured += 2 + count.saturating_sub(1);
                self.out.push(b'[');
                for (i, item) in items.enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    if !self.item(item, depth + 1) {
                        return false;
                    }
                }
                self.out.push(b']');
            }
            Kind::Object(count, entries) => {
                self.measured += 2 + count.saturating_sub(1) + count;
                self.out.push(b'{');
                for (i, (Str { text: k, readable }, item)) in entries.enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    // Keys are mostly plain ASCII: one look answers the escape and the case-fold.
                    let plain = is_plain_ascii(k);
                    let escapes = !plain && needs_escape(k.as_bytes());
                    self.measured += string_len_with(k, escapes);
                    if escapes {
                        write_escaped(self.out, k);
                    } else {
                        write_plain_in(self.out, k, readable);
                    }
                    self.out.push(b':');
                    let denied = match self.denylist {
                        Some(d) if plain => d.contains_ascii(k),
                        Some(d) => d.contains(k),
                        None => false,
                    };
                    let secret = !denied
                        && self.denylist.is_some_and(|d| d.rules.credentials)
                        && matches!(item.kind(), Kind::Str(Str { text, .. })
                            if text.len() >= super::credentials::ENTROPY_MIN_LEN && is_entropy_secret(k, text));
                    if denied || secret {
                        self.measured += compact_len(item);
                        self.skipped |= item.is_container();
                        write_str(self.out, if denied { markers::FIELD } else { markers::TOKEN });
                    } else if !self.item(item, depth + 1) {
                        return false;
                    }
                }
                self.out.push(b'}');
            }
            scalar => return self.scalar(scalar),
        }
        self.measured <= MAX_VALUE_BYTES
    }

    /// [`value`](Self::value) of an item or entry: scalars without the call (most items are).
    #[inline(always)]
    fn item<'n, N: Node<'n>>(&mut self, v: N, depth: usize) -> bool {
        if v.is_container() {
            self.value(v, depth)
        } else {
            self.scalar(v.kind())
        }
    }

    /// Writes a value that is not a container; false once the measured length passes the cap.
    #[inline(always)]
    fn scalar<'n, N: Node<'n>>(&mut self, kind: Kind<'n, N>) -> bool {
        match kind {
            Kind::Str(s) => return self.string::<true>(s),
            Kind::Null => {
                self.out.extend_from_slice(b"null");
                self.measured += 4;
            }
            Kind::Bool(b) => {
                self.out.extend_from_slice(if b { b"true" } else { b"false" });
                self.measured += if b { 4 } else { 5 };
            }
            Kind::Number(n) => self.measured += n.write(self.out),
            // Containers go through `value`.
            Kind::Array(..) | Kind::Object(..) => {}
        }
        self.measured <= MAX_VALUE_BYTES
    }

    /// Writes a string value; false once the measured length passes the cap.
    #[inline(always)]
    fn string<const MEASURE: bool>(&mut self, Str { text: s, readable }: Str<'_>) -> bool {
        // One look for escapes and triggers serves the measure, the redaction and, most often,
        // the writing.
        let look = match self.denylist {
            Some(_) => prescan::look_in(readable, s.len()),
            None => u8::from(needs_escape(s.as_bytes())) * ESCAPES,
        };
        let escapes = look & ESCAPES != 0;
        if MEASURE {
            self.measured += string_len_with(s, escapes);
            if self.measured > MAX_VALUE_BYTES {
                return false;
            }
        }
        match self.denylist.filter(|d| look & d.rules.triggers() != 0).map(|d| redact_flagged(s, d, look)) {
            Some(Cow::Owned(redacted)) => write_str(self.out, &redacted),
            _ if escapes => write_escaped(self.out, s),
            _ => write_plain_in(self.out, s, readable),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::Redactor;
    use serde_json::{json, Value};

    fn nested(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    /// The one-pass writer gives the bytes of the two-pass path (cap, redact, serialise).
    #[test]
    fn writes_what_the_two_pass_path_writes() {
        let cases = [
            json!({}),
            json!({"q": "café a@b.com", "n": [1, -2.5, null, true], "Password": {"x": [1]}, "k\"\n": "t\tab"}),
            json!({"card": "4111 1111 1111 1111", "ssn": "123-45-6789", "deep": nested(70, json!("x"))}),
            json!({"edge": nested(63, json!([])), "ok": nested(62, json!([1]))}),
            json!({"big": "y".repeat(40_000)}),
            json!({"a": "y".repeat(32_000), "b": "z".repeat(760)}),
            json!({"token": "y".repeat(40_000)}),
            json!({"ctl": "\u{1}\u{7f}é界🔑", "e": "sk-ant-api03-ABCDEFGHIJKLMNOP_qrs"}),
            json!({"client_secret": "Zx8Qp2Lm9Rt4Vw7Yb1Nc", "u": ["https://a:b@h.io/?sig=1", {"X-Api-Key": "q8Zr2Kx9Lp4Wm7Vn3Bt6"}]}),
            json!("plain"),
            json!(12),
            nested(200, json!(1)),
        ];
        for (enabled, layer) in [(true, false), (false, false), (true, true)] {
            let r = Redactor::new(enabled, &["SSN".to_owned()]).credentials(layer);
            for v in &cases {
                let mut expected = r.value(v.clone());
                if !enabled {
                    // The depth cap also applies without redaction.
                    expected = Redactor::new(true, &[]).value(expected);
                    expected = strip_redaction(v, expected);
                }
                let mut out = b"prefix".to_vec();
                r.write_value(v.clone(), &mut out);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("prefix{}", serde_json::to_string(&expected).unwrap()),
                    "enabled={enabled} {v}"
                );
            }
        }
    }

    /// A small deterministic generator (xorshift) of JSON values: nested containers, keys
    /// from the denylist in any case, non-ASCII and escaped text, redaction triggers, strings of
    /// every length around the block size, and sizes around the value cap.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
        fn text(&mut self) -> String {
            const PARTS: [&str; 20] = [
                "https://u:pw@h.io/?token=x",
                "npm_0123456789abcdefghijABCDEFGHIJ012345",
                "Zx8Qp2Lm9Rt4Vw7Yb1Nc",
                "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
                "a",
                "query",
                "é",
                "界",
                "🔑",
                "\"",
                "\\",
                "\n",
                "\u{1}",
                "\u{7f}",
                " ",
                "a@b.com",
                "4111 1111 1111 1111",
                "sk-ant-api03-ABCDEFGHIJKLMNOP_qrs",
                "Bearer abcdef1234567890",
                "0123456789",
            ];
            let mut t = String::new();
            for _ in 0..self.below(12) {
                let part = PARTS[self.below(PARTS.len() as u64)];
                t.push_str(&part.repeat(1 + self.below(3) * self.below(3)));
            }
            if self.below(40) == 0 {
                t.push_str(&"y".repeat(1000 + self.below(34_000)));
            }
            t
        }
        fn key(&mut self) -> String {
            const KEYS: [&str; 14] = [
                "client_secret",
                "X-Api-Key",
                "q",
                "Password",
                "TOKEN",
                "api_key",
                "ssn",
                "clé",
                "CLÉ",
                "status",
                "k\"\n",
                "apiKey",
                "x",
                "to\u{212A}en",
            ];
            match self.below(3) {
                0 => KEYS[self.below(KEYS.len() as u64)].to_owned(),
                _ => self.text(),
            }
        }
        fn value(&mut self, depth: usize) -> Value {
            let container = depth < 8 && self.below(3) == 0;
            match (container, self.below(2)) {
                (true, 0) => Value::Array((0..self.below(5)).map(|_| self.value(depth + 1)).collect()),
                (true, _) => Value::Object((0..self.below(5)).map(|_| (self.key(), self.value(depth + 1))).collect()),
                _ => match self.below(6) {
                    0 => Value::Null,
                    1 => Value::Bool(self.below(2) == 0),
                    2 => json!(self.next() as i64),
                    3 => json!(self.below(1000) as f64 / 7.0),
                    _ => Value::String(self.text()),
                },
            }
        }
    }

    /// The cursor walk of flat values writes what the generic walk writes, of the flat value and
    /// of the value itself, on thousands of generated values, for every redactor.
    #[test]
    fn flat_walk_writes_what_the_generic_walk_writes() {
        use crate::json::flat::flatten;
        use crate::json::flat::Flat;
        let redactors = [
            Redactor::new(true, &[]),
            Redactor::new(true, &["SSN".to_owned(), "Clé".to_owned()]),
            Redactor::new(true, &[]).credentials(true).luhn_cards(true),
        ];
        let no_redaction = Redactor::new(false, &[]);
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let mut values: Vec<Value> = (0..3000).map(|_| g.value(0)).collect();
        // Depth limits, and the cap reached mid-string and mid-container.
        values.push(nested(62, json!({"token": [1]})));
        values.push(nested(61, json!({"a": [[]]})));
        values.push(json!({"a": "y".repeat(32_000), "b": ["z".repeat(700), "w".repeat(100)]}));
        values.push(json!({"a": "y".repeat(32_700), "b": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}));
        values.push(json!(["y".repeat(32_764)]));
        values.push(json!(["y".repeat(32_765)]));
        for v in &values {
            let mut tape = b"x".to_vec();
            assert!(flatten(v, &mut tape, usize::MAX), "{v}");
            tape.extend_from_slice(b"\"\\ after the value \n");
            let flat = Flat::new(std::str::from_utf8(&tape[1..]).unwrap());
            for r in redactors.iter().chain([&no_redaction]) {
                let denylist = r.enabled.then_some(&*r.denylist);
                let (mut new, mut generic_flat, mut generic_value) = (b"p".to_vec(), b"p".to_vec(), b"p".to_vec());
                let skipped = super::write_flat(flat, denylist, &mut new);
                assert_eq!(skipped, super::write_value(flat, denylist, &mut generic_flat), "{v}");
                assert_eq!(skipped, super::write_value(v, denylist, &mut generic_value), "{v}");
                assert_eq!(String::from_utf8(new.clone()).unwrap(), String::from_utf8(generic_flat).unwrap(), "{v}");
                assert_eq!(new, generic_value, "{v}");
            }
        }
    }

    /// Flat containers nested deeper than the depth cap (never flattened, built here by hand) are
    /// replaced as the generic walk replaces them.
    #[test]
    fn flat_walk_caps_depth() {
        use crate::json::flat::{Flat, ARRAY, OBJECT};
        for depth in [63, 64, 65, 70] {
            let mut node = vec![crate::json::flat::TRUE];
            for level in 0..depth {
                let mut outer = Vec::new();
                if level % 2 == 0 {
                    outer.extend_from_slice(&[ARRAY, 1, 0, 0, 0]);
                    outer.extend_from_slice(&crate::json::flat::len_bytes(node.len()));
                } else {
                    outer.extend_from_slice(&[OBJECT, 1, 0, 0, 0]);
                    outer.extend_from_slice(&crate::json::flat::len_bytes(node.len() + 5));
                    outer.extend_from_slice(&[1, 0, 0, 0, b'k']);
                }
                outer.extend_from_slice(&node);
                node = outer;
            }
            let flat = Flat::new(std::str::from_utf8(&node).unwrap());
            for denylist in [None, Some(super::Denylist::default_list())] {
                let (mut new, mut generic) = (Vec::new(), Vec::new());
                assert_eq!(
                    super::write_flat(flat, denylist, &mut new),
                    super::write_value(flat, denylist, &mut generic)
                );
                assert_eq!(String::from_utf8(new).unwrap(), String::from_utf8(generic).unwrap(), "{depth}");
            }
        }
    }

    /// With redaction off the expected value is the input with only its too-deep containers
    /// replaced: rebuilt from `original`, taking the markers from `capped`.
    fn strip_redaction(original: &Value, capped: Value) -> Value {
        fn walk(o: &Value, c: &Value, depth: usize) -> Value {
            match (o, c) {
                (Value::Array(_) | Value::Object(_), _) if depth >= crate::contract::MAX_VALUE_DEPTH => c.clone(),
                (Value::Array(a), Value::Array(b)) => {
                    Value::Array(a.iter().zip(b).map(|(x, y)| walk(x, y, depth + 1)).collect())
                }
                (Value::Object(a), Value::Object(b)) => {
                    Value::Object(a.iter().map(|(k, x)| (k.clone(), walk(x, &b[k], depth + 1))).collect())
                }
                _ => o.clone(),
            }
        }
        if crate::redact::is_cap_marker(&capped) && !crate::redact::is_cap_marker(original) {
            return capped;
        }
        walk(original, &capped, 0)
    }
}
