//! What the encoder reads a JSON value through: a `serde_json::Value`, or the same value
//! [flattened](super::flat) into one buffer on the calling thread. The walk that caps, redacts and
//! writes values (`redact/write.rs`) and the compact-length measure are written once, over this
//! trait, so both forms give the same bytes.

use super::string_len;
use serde_json::{Number, Value};
use std::io;

/// A number, as serde_json writes it.
#[derive(Clone, Copy)]
pub(crate) enum Num<'a> {
    Value(&'a Number),
    /// Already written by serde_json (on the calling thread).
    Text(&'a [u8]),
}

impl Num<'_> {
    /// Writes the number; returns how many bytes that took.
    pub(crate) fn write(self, out: &mut Vec<u8>) -> usize {
        let before = out.len();
        match self {
            // Writing to a Vec cannot fail.
            Num::Value(n) => drop(serde_json::to_writer(&mut *out, n)),
            Num::Text(t) => out.extend_from_slice(t),
        }
        out.len() - before
    }

    fn len(self) -> usize {
        match self {
            Num::Value(n) => {
                let mut counter = ByteCounter(0);
                // Writing a number to a counter cannot fail; 0 would only under-count a corrupt number.
                let _ = serde_json::to_writer(&mut counter, n);
                counter.0
            }
            Num::Text(t) => t.len(),
        }
    }
}

struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A string of a node (a value or a key): its text, and its bytes followed by whatever can be
/// read after them. The prescan and the writer read on rather than copy a string's last bytes.
#[derive(Clone, Copy)]
pub(crate) struct Str<'a> {
    pub(crate) text: &'a str,
    pub(crate) readable: &'a [u8],
}

impl<'a> Str<'a> {
    /// A string with nothing readable after it.
    #[inline]
    pub(crate) fn of(text: &'a str) -> Self {
        Str { text, readable: text.as_bytes() }
    }
}

/// One JSON value as a [`Node`] shows it.
pub(crate) enum Kind<'a, N: Node<'a>> {
    Null,
    Bool(bool),
    Number(Num<'a>),
    Str(Str<'a>),
    /// The number of items, and the items.
    Array(usize, N::Items),
    /// The number of entries, and the entries in order.
    Object(usize, N::Entries),
}

/// A JSON value the encoder can read.
pub(crate) trait Node<'a>: Copy + 'a {
    type Items: Iterator<Item = Self>;
    type Entries: Iterator<Item = (Str<'a>, Self)>;
    fn kind(self) -> Kind<'a, Self>;
    fn is_container(self) -> bool;
}

type MapEntry<'a> = (&'a String, &'a Value);

fn entry<'a>((k, v): MapEntry<'a>) -> (Str<'a>, &'a Value) {
    (Str::of(k), v)
}

impl<'a> Node<'a> for &'a Value {
    type Items = std::slice::Iter<'a, Value>;
    type Entries = std::iter::Map<serde_json::map::Iter<'a>, fn(MapEntry<'a>) -> (Str<'a>, &'a Value)>;

    fn kind(self) -> Kind<'a, Self> {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(b) => Kind::Bool(*b),
            Value::Number(n) => Kind::Number(Num::Value(n)),
            Value::String(s) => Kind::Str(Str::of(s)),
            Value::Array(a) => Kind::Array(a.len(), a.iter()),
            Value::Object(m) => Kind::Object(m.len(), m.iter().map(entry as fn(MapEntry<'a>) -> _)),
        }
    }

    fn is_container(self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }
}

/// Length in bytes of the compact JSON of `node`, computed without writing it and without
/// recursion, so any depth is safe.
pub(crate) fn compact_len<'a, N: Node<'a>>(node: N) -> usize {
    let mut len = 0;
    let mut stack: Vec<N> = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            Kind::Null => len += 4,
            Kind::Bool(b) => len += if b { 4 } else { 5 },
            Kind::Number(n) => len += n.len(),
            Kind::Str(s) => len += string_len(s.text),
            Kind::Array(count, items) => {
                // brackets + commas
                len += 2 + count.saturating_sub(1);
                stack.extend(items);
            }
            Kind::Object(count, entries) => {
                // braces + commas + one colon per entry
                len += 2 + count.saturating_sub(1) + count;
                for (k, v) in entries {
                    len += string_len(k.text);
                    stack.push(v);
                }
            }
        }
    }
    len
}
