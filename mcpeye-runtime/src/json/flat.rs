//! Records flattened on the calling thread: the values of a record (arguments, result) and its
//! texts (intent, error message) copied into one buffer, so that what crosses to the flusher is
//! one allocation instead of the dozens of a `serde_json::Value` tree.
//!
//! Why: a `Value` built on the calling thread and dropped on the flusher is freed into another
//! thread's allocator arena (with glibc, under that arena's lock, while the calling thread
//! allocates from it), and the flusher reads it by chasing pointers into memory last written on
//! another core. Flattened, the calling thread frees its own `Value` (its allocator cache hands
//! the same blocks to the next call) and the flusher reads one contiguous buffer.
//!
//! Layout of a node (lengths and counts in four bytes of seven bits each, low first, so that
//! every byte but a text's is ASCII: the whole buffer is valid UTF-8, checked once per record
//! rather than once per string):
//! - `null`, `false`, `true`: the tag alone;
//! - number: tag, one byte of length, the number as serde_json writes it;
//! - string: tag, length, the UTF-8 bytes;
//! - array: tag, item count, byte size of the items, the items;
//! - object: tag, entry count, byte size of the entries, then per entry the key (length, bytes)
//!   and the value.
//!
//! Values larger than a budget or nested [`MAX_VALUE_DEPTH`] deep are not flattened (copying them
//! would lengthen the call, and deep ones are capped by the flusher anyway): they cross as the
//! `Value` they are.

use super::node::{Kind, Node, Num, Str};
use super::BLOCK;
use crate::contract::MAX_VALUE_DEPTH;
use serde_json::{Map, Value};

pub(crate) const NULL: u8 = 0;
pub(crate) const FALSE: u8 = 1;
pub(crate) const TRUE: u8 = 2;
pub(crate) const NUMBER: u8 = 3;
const STRING: u8 = 4;
pub(crate) const ARRAY: u8 = 5;
pub(crate) const OBJECT: u8 = 6;

/// Longest length or count a node holds: four bytes of seven bits.
pub(crate) const MAX_LEN: usize = (1 << 28) - 1;

/// `n` (at most [`MAX_LEN`]) as a node's length bytes.
#[inline(always)]
pub(crate) fn len_bytes(n: usize) -> [u8; 4] {
    [(n & 0x7f) as u8, (n >> 7 & 0x7f) as u8, (n >> 14 & 0x7f) as u8, (n >> 21 & 0x7f) as u8]
}

/// The length [`len_bytes`] wrote.
#[inline(always)]
pub(crate) fn len_from(b: [u8; 4]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 7 | usize::from(b[2]) << 14 | usize::from(b[3]) << 21
}

/// Appends `head` then `body`: the header of a node (fixed size) and its bytes.
#[inline(always)]
fn put_raw<const N: usize>(out: &mut Vec<u8>, head: [u8; N], body: &[u8]) {
    out.extend_from_slice(&head);
    out.extend_from_slice(body);
}

/// A string node.
#[inline]
pub(crate) fn put_tagged_str(out: &mut Vec<u8>, s: &str, limit: usize) -> bool {
    if out.len() + 5 + s.len() > limit {
        return false;
    }
    // Below the limit, itself at most MAX_LEN.
    let [a, b, c, d] = len_bytes(s.len());
    put_raw(out, [STRING, a, b, c, d], s.as_bytes());
    true
}

/// An object's key: its length, then its bytes; false when it would pass `limit`.
#[inline]
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str, limit: usize) -> bool {
    if out.len() + 4 + s.len() > limit {
        return false;
    }
    // Every length is below the limit, itself at most MAX_LEN.
    put_raw(out, len_bytes(s.len()), s.as_bytes());
    true
}

/// A container's header whose count is not known yet; returns where it starts, for
/// [`patch_counted`].
pub(crate) fn put_header_open(out: &mut Vec<u8>, tag: u8) -> usize {
    put_raw(out, [tag, 0, 0, 0, 0, 0, 0, 0, 0], &[]);
    out.len() - 9
}

/// Completes the header at `at` with `count` and the size of what follows it.
pub(crate) fn patch_counted(out: &mut [u8], at: usize, count: usize) {
    let size = out.len() - at - 9;
    out[at + 1..at + 5].copy_from_slice(&len_bytes(count));
    out[at + 5..at + 9].copy_from_slice(&len_bytes(size));
}

/// Appends `v` to `out` as a flat node. Returns false, with `out` as it was, when `v` nests
/// [`MAX_VALUE_DEPTH`] deep or its node would take more than `budget` bytes.
pub(crate) fn flatten(v: &Value, out: &mut Vec<u8>, budget: usize) -> bool {
    within(out, budget, |out, limit| put_value(v, out, 0, limit))
}

/// Appends `m` as the node of `Value::Object(m)` (without cloning it into one). Returns false,
/// with `out` as it was, like [`flatten`].
pub(crate) fn flatten_map(m: &Map<String, Value>, out: &mut Vec<u8>, budget: usize) -> bool {
    within(out, budget, |out, limit| put_map(m, out, 0, limit))
}

/// Runs `write` with the end `budget` bytes from here allows; false, with `out` as it was, when
/// it gives up.
pub(crate) fn within(out: &mut Vec<u8>, budget: usize, write: impl FnOnce(&mut Vec<u8>, usize) -> bool) -> bool {
    let start = out.len();
    let fits = write(out, start.saturating_add(budget).min(MAX_LEN));
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Appends the node of `v`, at nesting level `depth`; false past `limit` or too deep (the caller
/// truncates).
fn put_value(v: &Value, out: &mut Vec<u8>, depth: usize, limit: usize) -> bool {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
        Value::Number(n) => {
            out.extend_from_slice(&[NUMBER, 0]);
            let at = out.len() - 1;
            // Writing to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, n);
            // Below 0x80, as every byte outside a text (numbers take at most 40 or so).
            let len = out.len() - at - 1;
            if len >= 0x80 {
                return false;
            }
            out[at] = len as u8;
        }
        Value::String(s) => return put_tagged_str(out, s, limit),
        Value::Array(a) => {
            if depth >= MAX_VALUE_DEPTH {
                return false;
            }
            let at = put_header_open(out, ARRAY);
            for item in a {
                if !put_value(item, out, depth + 1, limit) {
                    return false;
                }
            }
            patch_counted(out, at, a.len());
        }
        Value::Object(m) => return put_map(m, out, depth, limit),
    }
    out.len() <= limit
}

/// Appends the node of `Value::Object(m)` at nesting level `depth`, like [`put_value`]. A `Map`
/// has each key once: nothing to check.
pub(crate) fn put_map(m: &Map<String, Value>, out: &mut Vec<u8>, depth: usize, limit: usize) -> bool {
    if depth >= MAX_VALUE_DEPTH {
        return false;
    }
    let at = put_header_open(out, OBJECT);
    for (k, item) in m {
        if !put_str(out, k, limit) || !put_value(item, out, depth + 1, limit) {
            return false;
        }
    }
    patch_counted(out, at, m.len());
    out.len() <= limit
}

fn u32_at(b: &[u8], at: usize) -> usize {
    let mut word = [0; 4];
    word.copy_from_slice(&b[at..at + 4]);
    len_from(word)
}

/// The JSON value a flat node was made from.
pub(crate) fn to_value(node: Flat<'_>) -> Value {
    match node.kind() {
        Kind::Null => Value::Null,
        Kind::Bool(b) => Value::Bool(b),
        // The text serde_json wrote for a number reads back as that number.
        Kind::Number(Num::Text(t)) => serde_json::from_slice(t).unwrap_or(Value::Null),
        Kind::Number(Num::Value(n)) => Value::Number(n.clone()),
        Kind::Str(s) => Value::String(s.text.to_owned()),
        Kind::Array(_, items) => Value::Array(items.map(to_value).collect()),
        Kind::Object(_, entries) => Value::Object(entries.map(|(k, v)| (k.text.to_owned(), to_value(v))).collect()),
    }
}

/// A flattened value: the text from one node's start (a flat buffer is valid UTF-8: its texts
/// are sliced out of it, not checked one by one).
#[derive(Clone, Copy)]
pub(crate) struct Flat<'a>(&'a str);

impl<'a> Flat<'a> {
    /// The node that `flatten` wrote at the start of `flat`.
    pub(crate) fn new(flat: &'a str) -> Self {
        Flat(flat)
    }

    /// Bytes this node takes.
    #[inline]
    pub(crate) fn size(self) -> usize {
        let b = self.0.as_bytes();
        match b[0] {
            NUMBER => 2 + usize::from(b[1]),
            STRING => 5 + u32_at(b, 1),
            ARRAY | OBJECT => 9 + u32_at(b, 5),
            _ => 1,
        }
    }
}

/// The items of a flattened array.
pub(crate) struct Items<'a> {
    rest: &'a str,
    left: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Flat<'a>;
    #[inline]
    fn next(&mut self) -> Option<Flat<'a>> {
        self.left = self.left.checked_sub(1)?;
        let node = Flat(self.rest);
        self.rest = &self.rest[node.size()..];
        Some(node)
    }
}

/// The entries of a flattened object.
pub(crate) struct Entries<'a> {
    rest: &'a str,
    left: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Str<'a>, Flat<'a>);
    #[inline]
    fn next(&mut self) -> Option<(Str<'a>, Flat<'a>)> {
        self.left = self.left.checked_sub(1)?;
        let key_end = 4 + u32_at(self.rest.as_bytes(), 0);
        let key = Str { text: &self.rest[4..key_end], readable: &self.rest.as_bytes()[4..] };
        let node = Flat(&self.rest[key_end..]);
        self.rest = &self.rest[key_end + node.size()..];
        Some((key, node))
    }
}

impl<'a> Node<'a> for Flat<'a> {
    type Items = Items<'a>;
    type Entries = Entries<'a>;

    // Always: called once per node of the walk, which outgrew the inliner's budget.
    #[inline(always)]
    fn kind(self) -> Kind<'a, Self> {
        let (s, b) = (self.0, self.0.as_bytes());
        match b[0] {
            NULL => Kind::Null,
            FALSE => Kind::Bool(false),
            TRUE => Kind::Bool(true),
            NUMBER => Kind::Number(Num::Text(&b[2..2 + usize::from(b[1])])),
            STRING => Kind::Str(Str { text: &s[5..5 + u32_at(b, 1)], readable: &b[5..] }),
            tag => {
                // Not cut at the container's end: its strings' last chunks read on (the
                // redaction prescan), and the count ends the walk.
                let rest = &s[9..];
                let left = u32_at(b, 1);
                if tag == ARRAY {
                    Kind::Array(left, Items { rest, left })
                } else {
                    Kind::Object(left, Entries { rest, left })
                }
            }
        }
    }

    #[inline]
    fn is_container(self) -> bool {
        matches!(self.0.as_bytes()[0], ARRAY | OBJECT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use serde_json::json;

    fn nested(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    /// A flattened value is written exactly as the value itself, by every redactor.
    #[test]
    fn flat_values_encode_as_their_value() {
        let cases = [
            json!({}),
            json!([]),
            json!({"q": "café a@b.com", "n": [1, -2.5, null, true, false, u64::MAX, i64::MIN, 1e300], "Password": {"x": [1]}}),
            json!({"k\"\n": "t\tab", "ctl": "\u{1}\u{7f}é界🔑", "e": "sk-ant-api03-ABCDEFGHIJKLMNOP_qrs"}),
            json!({"card": "4111 1111 1111 1111", "ssn": "123-45-6789", "token": [[{"a": 1}]]}),
            json!({"edge": nested(62, json!([])), "ok": nested(61, json!([1]))}),
            json!({"a": "y".repeat(32_000), "b": "z".repeat(760)}),
            json!({"big": "y".repeat(40_000)}),
            json!("plain"),
            json!(12),
            json!(null),
            json!({"content": [{"type": "text", "text": "3 invoices found"}], "isError": false}),
        ];
        for enabled in [true, false] {
            let r = Redactor::new(enabled, &["SSN".to_owned()]);
            for v in &cases {
                let mut tape = b"xx".to_vec();
                assert!(flatten(v, &mut tape, usize::MAX), "{v}");
                let (mut from_value, mut from_flat) = (Vec::new(), Vec::new());
                r.write_value(v.clone(), &mut from_value);
                r.write_flat(Flat::new(std::str::from_utf8(&tape[2..]).unwrap()), &mut from_flat);
                assert_eq!(String::from_utf8(from_flat).unwrap(), String::from_utf8(from_value).unwrap(), "{v}");
                assert_eq!(Flat::new(std::str::from_utf8(&tape[2..]).unwrap()).size(), tape.len() - 2);
                assert_eq!(&to_value(Flat::new(std::str::from_utf8(&tape[2..]).unwrap())), v);
            }
        }
    }

    #[test]
    fn maps_flatten_as_objects() {
        for v in [json!({}), json!({"a": [1, {"b": null}], "c": "d"}), json!({"deep": nested(70, json!(1))})] {
            let (mut direct, mut via_value) = (Vec::new(), Vec::new());
            let fits = flatten(&v, &mut via_value, usize::MAX);
            assert_eq!(flatten_map(v.as_object().unwrap(), &mut direct, usize::MAX), fits, "{v}");
            assert_eq!(direct, via_value, "{v}");
        }
    }

    /// A writer with one `extend` per piece and no shared helper: the reference the writer is
    /// compared with.
    mod reference {
        use super::super::{ARRAY, FALSE, NULL, NUMBER, OBJECT, STRING, TRUE};
        use crate::contract::MAX_VALUE_DEPTH;
        use serde_json::Value;

        pub(super) fn flatten(v: &Value, out: &mut Vec<u8>, budget: usize) -> bool {
            let start = out.len();
            let fits = put(v, out, 0, start.saturating_add(budget).min(super::super::MAX_LEN));
            if !fits {
                out.truncate(start);
            }
            fits
        }

        fn header(out: &mut Vec<u8>, tag: u8, count: usize) -> usize {
            let [a, b, c, d] = super::super::len_bytes(count);
            out.extend_from_slice(&[tag, a, b, c, d, 0, 0, 0, 0]);
            out.len() - 4
        }

        fn size(out: &mut [u8], at: usize) {
            let size = out.len() - at - 4;
            out[at..at + 4].copy_from_slice(&super::super::len_bytes(size));
        }

        fn string(out: &mut Vec<u8>, tag: Option<u8>, s: &str, limit: usize) -> bool {
            if out.len() + usize::from(tag.is_some()) + 4 + s.len() > limit {
                return false;
            }
            out.extend(tag);
            out.extend_from_slice(&super::super::len_bytes(s.len()));
            out.extend_from_slice(s.as_bytes());
            true
        }

        fn put(v: &Value, out: &mut Vec<u8>, depth: usize, limit: usize) -> bool {
            match v {
                Value::Null => out.push(NULL),
                Value::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
                Value::Number(n) => {
                    out.extend_from_slice(&[NUMBER, 0]);
                    let at = out.len() - 1;
                    let _ = serde_json::to_writer(&mut *out, n);
                    let len = out.len() - at - 1;
                    if len >= 0x80 {
                        return false;
                    }
                    out[at] = len as u8;
                }
                Value::String(s) => return string(out, Some(STRING), s, limit),
                Value::Array(_) | Value::Object(_) if depth >= MAX_VALUE_DEPTH => return false,
                Value::Array(a) => {
                    let at = header(out, ARRAY, a.len());
                    for item in a {
                        if !put(item, out, depth + 1, limit) {
                            return false;
                        }
                    }
                    size(out, at);
                }
                Value::Object(m) => {
                    let at = header(out, OBJECT, m.len());
                    for (k, item) in m {
                        if !string(out, None, k, limit) || !put(item, out, depth + 1, limit) {
                            return false;
                        }
                    }
                    size(out, at);
                }
            }
            out.len() <= limit
        }
    }

    /// Values of every kind, nested, from a seed (a small xorshift: deterministic).
    fn generated(seed: &mut u64, depth: usize) -> Value {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        const TEXTS: [&str; 8] = ["", "a", "café", "界🔑\u{1}", "\"quoted\"\n", "sk-ant-api03-XYZ", "0", "long text "];
        let pick = next();
        match if depth >= 6 { pick % 6 } else { pick % 9 } {
            0 => Value::Null,
            1 => Value::Bool(pick & 64 != 0),
            2 => json!([u64::MAX, i64::MIN, 0, -1, 1e300, -2.5e-308, 0.1, 12345678901234567u64])
                [(pick >> 8) as usize % 8]
                .take(),
            3 => json!((pick >> 3) as i64),
            4 | 5 => Value::String(TEXTS[(pick >> 8) as usize % 8].repeat(1 + (pick >> 16) as usize % 40)),
            6 => Value::Array(vec![]),
            7 => Value::Array((0..pick % 7).map(|_| generated(seed, depth + 1)).collect()),
            _ => Value::Object(
                (0..pick % 7)
                    .map(|i| (format!("{}{i}", TEXTS[(pick >> (8 + i)) as usize % 8]), generated(seed, depth + 1)))
                    .collect(),
            ),
        }
    }

    /// The writer writes exactly what the reference writes, for many values and budgets
    /// (nested, non-ASCII, big numbers, empty containers, cut by the budget anywhere).
    #[test]
    fn the_writer_matches_the_reference() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        let mut values: Vec<Value> = (0..3000).map(|_| generated(&mut seed, 0)).collect();
        values.extend([json!({}), json!([]), json!({"": ""}), json!([[[{}]]]), nested(MAX_VALUE_DEPTH, json!(1))]);
        values.push(nested(MAX_VALUE_DEPTH + 1, json!(1)));
        for (i, v) in values.iter().enumerate() {
            let size = {
                let mut out = Vec::new();
                reference::flatten(v, &mut out, usize::MAX);
                out.len()
            };
            for budget in [usize::MAX, size, size.saturating_sub(1), size / 2, i % 64] {
                let (mut new, mut old) = (b"prefix".to_vec(), b"prefix".to_vec());
                assert_eq!(flatten(v, &mut new, budget), reference::flatten(v, &mut old, budget), "{v}");
                assert_eq!(new, old, "{v} within {budget}");
                if let Value::Object(m) = v {
                    let mut direct = b"prefix".to_vec();
                    assert_eq!(flatten_map(m, &mut direct, budget), new.len() > 6, "{v} within {budget}");
                    assert_eq!(direct, new, "{v} within {budget}");
                }
            }
        }
    }

    /// A node's compact JSON takes at most 7 bytes per byte of its flat form (the flusher's
    /// writer does not measure a value below the cap by that bound: `redact/write.rs`), for the
    /// worst cases and many generated values.
    #[test]
    fn compact_json_is_at_most_seven_bytes_per_flat_byte() {
        let mut seed = 0x2545_F491_4F6C_DD1D;
        let mut values: Vec<Value> = (0..3000).map(|_| generated(&mut seed, 0)).collect();
        values.extend([
            json!(false),
            json!(null),
            json!([false, false, false, null, true]),
            json!({"": false, "\u{1}": null, "\u{2}\u{3}": "\u{4}"}),
            json!(["\u{1}\u{1f}", "", "\"\\"]),
            json!([[], [[]], {}, [{}]]),
            json!([0, 1, -2, 1e300]),
            nested(MAX_VALUE_DEPTH, json!(false)),
        ]);
        for v in &values {
            let mut out = Vec::new();
            if !flatten(v, &mut out, usize::MAX) {
                continue;
            }
            let node = Flat::new(std::str::from_utf8(&out).unwrap());
            let json = serde_json::to_vec(v).unwrap().len();
            assert_eq!(super::super::node::compact_len(node), json, "{v}");
            assert!(json <= 7 * node.size(), "{v}: {json} bytes from {}", node.size());
        }
    }

    #[test]
    fn too_large_or_too_deep_values_are_not_flattened() {
        let mut out = b"keep".to_vec();
        assert!(!flatten(&json!({"a": "y".repeat(100)}), &mut out, 64));
        assert!(!flatten(&nested(MAX_VALUE_DEPTH + 1, json!(1)), &mut out, usize::MAX));
        assert_eq!(out, b"keep");
        assert!(flatten(&nested(MAX_VALUE_DEPTH, json!(1)), &mut out, usize::MAX));
    }
}

/// A node read in order by a walk that keeps its own stack (the flusher's writer,
/// `redact/write.rs`): a scalar whole, a container by its header alone.
pub(crate) enum Token<'a> {
    Null,
    Bool(bool),
    /// The number's text, then the bytes readable from its start (the text and more).
    Number(&'a [u8], &'a [u8]),
    Str(Str<'a>),
    /// The number of items, which follow.
    Array(usize),
    /// The number of entries, which follow.
    Object(usize),
}

/// A read position in a flat value: each node is read once, in order, without building
/// iterators or looking up its size (the generic [`Node`] walk did both for every node).
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `node`.
    pub(crate) fn new(node: Flat<'a>) -> Self {
        Cursor { s: node.0, at: 0 }
    }

    /// The node here.
    #[inline]
    pub(crate) fn node(self) -> Flat<'a> {
        Flat(&self.s[self.at..])
    }

    /// Steps over the node here.
    #[inline]
    pub(crate) fn skip(&mut self) {
        self.at += self.node().size();
    }

    /// Reads the node here: a scalar whole, a container's header (its first item or entry is
    /// then here).
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Token<'a> {
        let (b, at) = (self.s.as_bytes(), self.at);
        match b[at] {
            NULL => {
                self.at = at + 1;
                Token::Null
            }
            FALSE | TRUE => {
                self.at = at + 1;
                Token::Bool(b[at] == TRUE)
            }
            NUMBER => {
                let end = at + 2 + usize::from(b[at + 1]);
                self.at = end;
                Token::Number(&b[at + 2..end], &b[at + 2..])
            }
            STRING => Token::Str(self.str_at(at + 1)),
            tag => {
                self.at = at + 9;
                let count = u32_at(b, at + 1);
                if tag == ARRAY {
                    Token::Array(count)
                } else {
                    Token::Object(count)
                }
            }
        }
    }

    /// Back to the start of the container whose header [`next`](Self::next) just read.
    pub(crate) fn back_to_header(&mut self) {
        self.at -= 9;
    }

    /// Reads the key of an entry (its value is then here).
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Str<'a> {
        self.str_at(self.at)
    }

    /// The key of an entry when it is at most [`BLOCK`] bytes long with a whole block readable
    /// from its start: its text and that block (its value is then here). Else `None`, and the
    /// cursor is where it was. One bounds check where [`key`](Self::key) and a block take four.
    #[inline(always)]
    pub(crate) fn short_key(&mut self) -> Option<(&'a str, &'a [u8; BLOCK])> {
        let at = self.at;
        let (len, block) = self.s.as_bytes().get(at..)?.first_chunk::<{ 4 + BLOCK }>()?.split_first_chunk::<4>()?;
        let len = len_from(*len);
        let block: &[u8; BLOCK] = block.try_into().ok()?;
        let key = self.s.get(at + 4..at + 4 + len).filter(|_| len <= BLOCK)?;
        self.at = at + 4 + len;
        Some((key, block))
    }

    /// The string whose length is at `at`; moves past it.
    #[inline(always)]
    fn str_at(&mut self, at: usize) -> Str<'a> {
        let start = at + 4;
        let end = start + u32_at(self.s.as_bytes(), at);
        self.at = end;
        // Read on past the string's end, as `Flat::kind` does.
        Str { text: &self.s[start..end], readable: &self.s.as_bytes()[start..] }
    }
}
