//! A serde `Serializer` that writes a value's [flat](super::flat) node directly: the node of
//! `serde_json::to_value(value)`, without building that `Value` (rmcp's results are recorded so).
//!
//! It follows `serde_json`'s `Value` serializer, and gives up (the caller then goes through
//! `to_value`) where matching it would cost more than it saves: 128-bit integers out of 64-bit
//! range, map keys other than strings, characters and integers, an object with a key twice (a
//! `Value` keeps the last value in the first key's place), nesting [`MAX_VALUE_DEPTH`] deep, and a
//! node past the budget.

use super::flat::{
    patch_counted, patch_header, put_header_open, put_str, put_tagged_str, ARRAY, FALSE, NULL, NUMBER, OBJECT, TRUE,
};
use crate::contract::MAX_VALUE_DEPTH;
use serde::ser::{self, Serialize};
use serde_json::Value;
use std::fmt;

/// Appends the node of `serde_json::to_value(value)` to `out`, leaving out the root object's
/// `skip_root_key` entry. Returns false, with `out` as it was, when it gives up (see the module).
pub(crate) fn flatten_serialize<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
    budget: usize,
    skip_root_key: Option<&'static str>,
) -> bool {
    flatten_checked(value, out, budget, skip_root_key, false)
}

/// [`flatten_serialize`]; `unique`: the value's objects are known to have each key once (a
/// `serde_json` `Value`'s), so their keys are not compared as they are written: that comparison
/// is most of what writing a small object's keys costs.
fn flatten_checked<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
    budget: usize,
    skip_root_key: Option<&'static str>,
    unique: bool,
) -> bool {
    let start = out.len();
    let limit = start.saturating_add(budget).min(u32::MAX as usize);
    let ser = Ser { out, depth: 0, limit, skip: skip_root_key, unique };
    let fits = value.serialize(ser).is_ok() && out.len() <= limit;
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Appends `v` to `out` as a flat node. Returns false, with `out` as it was, when `v` nests
/// [`MAX_VALUE_DEPTH`](crate::contract::MAX_VALUE_DEPTH) deep or its node would take more than `budget` bytes. Written by the one
/// flat writer, this serializer.
pub(crate) fn flatten(v: &Value, out: &mut Vec<u8>, budget: usize) -> bool {
    flatten_checked(v, out, budget, None, true)
}

/// Appends `m` as the node of `Value::Object(m)` (without cloning it into one). Returns false,
/// with `out` as it was, like [`flatten`].
pub(crate) fn flatten_map(m: &serde_json::Map<String, Value>, out: &mut Vec<u8>, budget: usize) -> bool {
    flatten_checked(m, out, budget, None, true)
}

#[derive(Debug)]
pub(crate) struct GiveUp;

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not flattened")
    }
}

impl std::error::Error for GiveUp {}

impl ser::Error for GiveUp {
    fn custom<T: fmt::Display>(_: T) -> Self {
        GiveUp
    }
}

type Written = Result<(), GiveUp>;

struct Ser<'a> {
    out: &'a mut Vec<u8>,
    depth: usize,
    limit: usize,
    /// The key left out of the root object.
    skip: Option<&'static str>,
    /// Every object below has each key once (see [`flatten_checked`]).
    unique: bool,
}

impl<'a> Ser<'a> {
    fn check(&self) -> Written {
        if self.out.len() > self.limit {
            return Err(GiveUp);
        }
        Ok(())
    }

    /// A number (or `null` for a non-finite float), written as serde_json writes the `Value`.
    fn number(self, v: Value) -> Written {
        match v {
            Value::Number(n) => {
                self.out.extend_from_slice(&[NUMBER, 0]);
                let at = self.out.len() - 1;
                // Writing to a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *self.out, &n);
                self.out[at] = u8::try_from(self.out.len() - at - 1).map_err(|_| GiveUp)?;
            }
            _ => self.out.push(NULL),
        }
        Ok(())
    }

    fn container(self, tag: u8) -> Result<Container<'a>, GiveUp> {
        if self.depth >= MAX_VALUE_DEPTH {
            return Err(GiveUp);
        }
        let at = put_header_open(self.out, tag);
        let skip = if self.depth == 0 { self.skip } else { None };
        Ok(Container {
            out: self.out,
            at,
            count: 0,
            depth: self.depth + 1,
            limit: self.limit,
            skip,
            skipping: false,
            unique: self.unique,
            keys: [0; KEYS_CHECKED],
        })
    }

    /// `{variant: …}` around what `f` writes.
    fn variant(self, variant: &'static str, f: impl FnOnce(Ser<'_>) -> Written) -> Written {
        let mut c = self.container(OBJECT)?;
        c.key_str(variant)?;
        f(c.child())?;
        c.count += 1;
        c.end()
    }
}

/// An array or object being written.
struct Container<'a> {
    out: &'a mut Vec<u8>,
    /// Where its header is.
    at: usize,
    count: usize,
    /// Depth of its items.
    depth: usize,
    limit: usize,
    skip: Option<&'static str>,
    /// The current entry is the skipped one.
    skipping: bool,
    unique: bool,
    /// Where the first [`KEYS_CHECKED`] keys were written (their length), each checked against
    /// those before it as it is written: a `Value` has each key once.
    keys: [u32; KEYS_CHECKED],
}

/// Objects with up to this many entries are checked for a key twice as their keys are written,
/// larger ones by [`patch_header`] at their end (collecting and sorting their keys: an
/// allocation per object, which small objects, the common ones, are spared).
const KEYS_CHECKED: usize = 8;

/// Completes the header of a container of `count` items or entries at `at`; false when an object
/// has a key twice. Objects of up to [`KEYS_CHECKED`] entries were checked as they were written.
fn close(out: &mut [u8], at: usize, count: usize) -> bool {
    if count <= KEYS_CHECKED {
        patch_counted(out, at, count);
        return true;
    }
    patch_header(out, at, count)
}

impl Container<'_> {
    fn child(&mut self) -> Ser<'_> {
        Ser { out: self.out, depth: self.depth, limit: self.limit, skip: None, unique: self.unique }
    }

    fn key_str(&mut self, key: &str) -> Written {
        if self.skip == Some(key) {
            self.skipping = true;
            return Ok(());
        }
        let at = self.out.len();
        if !put_str(self.out, key, self.limit) {
            return Err(GiveUp);
        }
        if self.count < KEYS_CHECKED && !self.unique {
            let out = &self.out[..];
            let written = &out[at..];
            for &before in &self.keys[..self.count] {
                let before = before as usize;
                // The length prefix, then the bytes.
                if out.get(before..before + written.len()) == Some(written) {
                    return Err(GiveUp);
                }
            }
            // Below the limit, itself below u32::MAX.
            self.keys[self.count] = at as u32;
        }
        Ok(())
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        if std::mem::take(&mut self.skipping) {
            return Ok(());
        }
        value.serialize(self.child())?;
        self.count += 1;
        Ok(())
    }

    fn end(self) -> Written {
        if self.unique {
            patch_counted(self.out, self.at, self.count);
        } else if !close(self.out, self.at, self.count) {
            // A key twice: serde_json keeps one entry.
            return Err(GiveUp);
        }
        if self.out.len() > self.limit {
            return Err(GiveUp);
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for Ser<'a> {
    type Ok = ();
    type Error = GiveUp;
    type SerializeSeq = Container<'a>;
    type SerializeTuple = Container<'a>;
    type SerializeTupleStruct = Container<'a>;
    type SerializeTupleVariant = Variant<'a>;
    type SerializeMap = Container<'a>;
    type SerializeStruct = Container<'a>;
    type SerializeStructVariant = Variant<'a>;

    fn serialize_bool(self, v: bool) -> Written {
        self.out.push(if v { TRUE } else { FALSE });
        self.check()
    }
    fn serialize_i8(self, v: i8) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_i128(self, v: i128) -> Written {
        self.number(Value::from(i64::try_from(v).map_err(|_| GiveUp)?))
    }
    fn serialize_u8(self, v: u8) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_u128(self, v: u128) -> Written {
        self.number(Value::from(u64::try_from(v).map_err(|_| GiveUp)?))
    }
    fn serialize_f32(self, v: f32) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_f64(self, v: f64) -> Written {
        self.number(Value::from(v))
    }
    fn serialize_char(self, v: char) -> Written {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Written {
        if put_tagged_str(self.out, v, self.limit) {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }
    fn serialize_bytes(self, v: &[u8]) -> Written {
        let mut c = self.container(ARRAY)?;
        for b in v {
            ser::SerializeSeq::serialize_element(&mut c, b)?;
        }
        c.end()
    }
    fn serialize_none(self) -> Written {
        self.out.push(NULL);
        self.check()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Written {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Written {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Written {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Written {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Written {
        // serde_json gives these names a meaning of their own (raw values, big numbers).
        if name.starts_with("$serde_json") {
            return Err(GiveUp);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Written {
        self.variant(variant, |s| value.serialize(s))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Container<'a>, GiveUp> {
        self.container(ARRAY)
    }
    fn serialize_tuple(self, _: usize) -> Result<Container<'a>, GiveUp> {
        self.container(ARRAY)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Container<'a>, GiveUp> {
        self.container(ARRAY)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Variant<'a>, GiveUp> {
        Variant::open(self, variant, ARRAY)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Container<'a>, GiveUp> {
        self.container(OBJECT)
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Container<'a>, GiveUp> {
        if name.starts_with("$serde_json") {
            return Err(GiveUp);
        }
        self.container(OBJECT)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Variant<'a>, GiveUp> {
        Variant::open(self, variant, OBJECT)
    }
}

impl ser::SerializeSeq for Container<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        value.serialize(self.child())?;
        self.count += 1;
        Ok(())
    }
    fn end(self) -> Written {
        Container::end(self)
    }
}

impl ser::SerializeTuple for Container<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Written {
        Container::end(self)
    }
}

impl ser::SerializeTupleStruct for Container<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Written {
        Container::end(self)
    }
}

impl ser::SerializeMap for Container<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Written {
        key.serialize(KeySer(self))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        self.value(value)
    }
    fn end(self) -> Written {
        Container::end(self)
    }
}

impl ser::SerializeStruct for Container<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Written {
        self.key_str(key)?;
        self.value(value)
    }
    fn end(self) -> Written {
        Container::end(self)
    }
}

/// `{variant: [..]}` or `{variant: {..}}` being written.
pub(crate) struct Variant<'a> {
    outer_at: usize,
    inner: Container<'a>,
}

impl<'a> Variant<'a> {
    fn open(ser: Ser<'a>, variant: &'static str, tag: u8) -> Result<Self, GiveUp> {
        let Ser { out, depth, limit, .. } = ser;
        if depth + 1 >= MAX_VALUE_DEPTH {
            return Err(GiveUp);
        }
        let outer_at = put_header_open(out, OBJECT);
        if !put_str(out, variant, limit) {
            return Err(GiveUp);
        }
        let at = put_header_open(out, tag);
        Ok(Variant {
            outer_at,
            inner: Container {
                out,
                at,
                count: 0,
                depth: depth + 2,
                limit,
                skip: None,
                skipping: false,
                // A `Value` has no variants: only derived types reach here.
                unique: false,
                keys: [0; KEYS_CHECKED],
            },
        })
    }

    fn end(self) -> Written {
        let Variant { outer_at, inner: Container { out, at, count, limit, .. } } = self;
        if !close(out, at, count) || !close(out, outer_at, 1) || out.len() > limit {
            return Err(GiveUp);
        }
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Variant<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Written {
        ser::SerializeSeq::serialize_element(&mut self.inner, value)
    }
    fn end(self) -> Written {
        Variant::end(self)
    }
}

impl ser::SerializeStructVariant for Variant<'_> {
    type Ok = ();
    type Error = GiveUp;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Written {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Written {
        Variant::end(self)
    }
}

/// Map keys as serde_json's `Value` serializer takes them: strings, characters and integers (as
/// their decimal text); anything else gives up.
struct KeySer<'c, 'a>(&'c mut Container<'a>);

impl KeySer<'_, '_> {
    fn int(self, v: impl itoa_like::Int) -> Written {
        self.0.key_str(&v.text())
    }
}

mod itoa_like {
    pub(super) trait Int {
        fn text(self) -> String;
    }
    macro_rules! ints { ($($t:ty),*) => { $(impl Int for $t { fn text(self) -> String { self.to_string() } })* } }
    ints!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);
}

impl ser::Serializer for KeySer<'_, '_> {
    type Ok = ();
    type Error = GiveUp;
    type SerializeSeq = ser::Impossible<(), GiveUp>;
    type SerializeTuple = ser::Impossible<(), GiveUp>;
    type SerializeTupleStruct = ser::Impossible<(), GiveUp>;
    type SerializeTupleVariant = ser::Impossible<(), GiveUp>;
    type SerializeMap = ser::Impossible<(), GiveUp>;
    type SerializeStruct = ser::Impossible<(), GiveUp>;
    type SerializeStructVariant = ser::Impossible<(), GiveUp>;

    fn serialize_str(self, v: &str) -> Written {
        self.0.key_str(v)
    }
    fn serialize_char(self, v: char) -> Written {
        self.0.key_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_i8(self, v: i8) -> Written {
        self.int(v)
    }
    fn serialize_i16(self, v: i16) -> Written {
        self.int(v)
    }
    fn serialize_i32(self, v: i32) -> Written {
        self.int(v)
    }
    fn serialize_i64(self, v: i64) -> Written {
        self.int(v)
    }
    fn serialize_i128(self, v: i128) -> Written {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Written {
        self.int(v)
    }
    fn serialize_u16(self, v: u16) -> Written {
        self.int(v)
    }
    fn serialize_u32(self, v: u32) -> Written {
        self.int(v)
    }
    fn serialize_u64(self, v: u64) -> Written {
        self.int(v)
    }
    fn serialize_u128(self, v: u128) -> Written {
        self.int(v)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Written {
        self.0.key_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Written {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> Written {
        Err(GiveUp)
    }
    fn serialize_f32(self, _: f32) -> Written {
        Err(GiveUp)
    }
    fn serialize_f64(self, _: f64) -> Written {
        Err(GiveUp)
    }
    fn serialize_bytes(self, _: &[u8]) -> Written {
        Err(GiveUp)
    }
    fn serialize_none(self) -> Written {
        Err(GiveUp)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Written {
        Err(GiveUp)
    }
    fn serialize_unit(self) -> Written {
        Err(GiveUp)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Written {
        Err(GiveUp)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Written {
        Err(GiveUp)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, GiveUp> {
        Err(GiveUp)
    }
}

#[cfg(test)]
mod tests {
    use super::flatten;
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn same<T: Serialize>(v: &T) {
        let mut direct = b"x".to_vec();
        let fits = flatten_serialize(v, &mut direct, usize::MAX, None);
        let mut via_value = b"x".to_vec();
        let value = serde_json::to_value(v).unwrap();
        assert!(fits, "{value}");
        assert!(flatten(&value, &mut via_value, usize::MAX));
        assert_eq!(direct, via_value, "{value}");
    }

    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Sample {
        content: Vec<Item>,
        #[serde(skip_serializing_if = "Option::is_none")]
        structured_content: Option<Value>,
        is_error: Option<bool>,
        #[serde(flatten)]
        extra: BTreeMap<String, Value>,
        unit: (),
        tuple: (u8, char, f64),
        bytes: serde_bytes_like::Bytes,
    }

    mod serde_bytes_like {
        pub(super) struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[derive(serde::Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Item {
        Text { text: String },
        Image { data: String, mime_type: String },
    }

    #[derive(serde::Serialize)]
    enum Shapes {
        Unit,
        New(i32),
        Tuple(u8, u8),
        Struct { a: f32 },
    }

    #[test]
    fn writes_the_node_of_to_value() {
        let mut extra = BTreeMap::new();
        extra.insert("_meta".to_owned(), json!({"k": [1, 2.5, null]}));
        same(&Sample {
            content: vec![
                Item::Text { text: "3 invoices \"found\"\n".into() },
                Item::Image { data: "AAA".into(), mime_type: "image/png".into() },
            ],
            structured_content: Some(json!({"n": 1})),
            is_error: None,
            extra,
            unit: (),
            tuple: (7, 'é', f64::NAN),
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
        });
        same(&vec![Shapes::Unit, Shapes::New(-3), Shapes::Tuple(1, 2), Shapes::Struct { a: 0.1 }]);
        same(&BTreeMap::from([(1u64, "a"), (2, "b")]));
        same(&(u64::MAX, i64::MIN, 1e300, -0.0, 'x', "", Some(1u8), None::<u8>));
        same(&json!({"a": [[{"b": {}}]], "c": "d"}));
    }

    #[test]
    fn the_root_key_is_left_out() {
        let v = json!({"content": [], "resultType": "complete", "isError": true});
        let mut out = Vec::new();
        assert!(flatten_serialize(&v, &mut out, usize::MAX, Some("resultType")));
        let mut expected = Vec::new();
        assert!(flatten(&json!({"content": [], "isError": true}), &mut expected, usize::MAX));
        assert_eq!(out, expected);
        // Only at the root.
        let nested = json!({"a": {"resultType": 1}});
        let (mut out, mut expected) = (Vec::new(), Vec::new());
        assert!(flatten_serialize(&nested, &mut out, usize::MAX, Some("resultType")));
        assert!(flatten(&nested, &mut expected, usize::MAX));
        assert_eq!(out, expected);
    }

    #[test]
    fn a_key_twice_gives_up_in_objects_of_any_size() {
        /// `n` entries `k0`, `k1`…, the one at `twice.1` named as the one at `twice.0`.
        struct Keys(usize, Option<(usize, usize)>);
        impl Serialize for Keys {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                for i in 0..self.0 {
                    let k = match self.1 {
                        Some((a, b)) if i == b => a,
                        _ => i,
                    };
                    m.serialize_entry(&format!("k{k}é"), &[i])?;
                }
                m.end()
            }
        }
        for n in [0, 1, 2, 3, KEYS_CHECKED - 1, KEYS_CHECKED, KEYS_CHECKED + 1, 30] {
            let mut pairs = vec![None];
            if n >= 2 {
                pairs.extend([Some((0, 1)), Some((0, n - 1)), Some((n - 2, n - 1)), Some((n / 2, n - 1))]);
            }
            for twice in pairs.into_iter().filter(|p| p.is_none_or(|(a, b)| a != b)) {
                for nested in [false, true] {
                    let mut out = b"keep".to_vec();
                    let fits = if nested {
                        flatten_serialize(&[Keys(n, twice)], &mut out, usize::MAX, None)
                    } else {
                        flatten_serialize(&Keys(n, twice), &mut out, usize::MAX, Some("k0é"))
                    };
                    // A key twice that is the one left out leaves nothing twice.
                    assert_eq!(fits, twice.is_none_or(|(a, _)| !nested && a == 0), "{n} {twice:?}");
                    if fits {
                        let mut v = serde_json::to_value(Keys(n, twice)).unwrap();
                        if nested {
                            v = json!([v]);
                        } else if let Value::Object(m) = &mut v {
                            m.shift_remove("k0é");
                        }
                        let mut via_value = b"keep".to_vec();
                        assert!(super::flatten(&v, &mut via_value, usize::MAX));
                        assert_eq!(out, via_value, "{n}");
                    } else {
                        assert_eq!(out, b"keep");
                    }
                }
            }
        }
    }

    #[test]
    fn gives_up_where_to_value_differs_or_fails() {
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("a", &1)?;
                m.serialize_entry("a", &2)?;
                m.end()
            }
        }
        let mut out = b"keep".to_vec();
        assert!(!flatten_serialize(&Twice, &mut out, usize::MAX, None));
        assert!(!flatten_serialize(&BTreeMap::from([(true, 1)]), &mut out, usize::MAX, None));
        assert!(!flatten_serialize(&u128::MAX, &mut out, usize::MAX, None));
        assert!(!flatten_serialize(&"y".repeat(100), &mut out, 64, None));
        let deep = (0..70).fold(json!(1), |v, _| json!([v]));
        assert!(!flatten_serialize(&deep, &mut out, usize::MAX, None));
        assert_eq!(out, b"keep");
    }
}
