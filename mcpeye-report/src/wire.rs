//! The lines of event logs and payloads, read straight into the few keys the report uses:
//! strings borrowed from the line, other keys passed over, a `result` measured without being
//! built, and every known key told apart as absent, null, of the expected type, or of another
//! (so that a wrong type is a reason to skip, not a default). About three times faster than
//! building a `serde_json::Value` of each line, and the same reading of it.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A known key as found: absent, null, of the expected type, or of another.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) enum Field<T> {
    #[default]
    Absent,
    Null,
    Wrong,
    Is(T),
}

impl<T> Field<T> {
    pub(crate) fn present(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    pub(crate) fn get(&self) -> Option<&T> {
        match self {
            Field::Is(v) => Some(v),
            _ => None,
        }
    }

    /// The value when of the expected type, `None` when absent or null, `Err` when of another.
    pub(crate) fn checked(&self) -> Result<Option<&T>, ()> {
        match self {
            Field::Is(v) => Ok(Some(v)),
            Field::Absent | Field::Null => Ok(None),
            Field::Wrong => Err(()),
        }
    }
}

/// A string field, borrowed from the line when it has no escapes.
pub(crate) type Str<'de> = Field<Cow<'de, str>>;

impl<'de> Field<Cow<'de, str>> {
    /// The string, owned (`None` when absent or not a string).
    pub(crate) fn text(&self) -> Option<String> {
        self.get().map(|s| s.to_string())
    }
}

/// The visits of a field's visitor for the types it does not take: each scalar type named is
/// `Wrong`, null is `Null`, and an object or array is skipped whole and `Wrong`.
macro_rules! wrong_types {
    ($($visit:ident: $t:ty),*) => {
        $(fn $visit<E: de::Error>(self, _: $t) -> Result<Self::Value, E> {
            Ok(Field::Wrong)
        })*
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Field::Null)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Field::Wrong)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Field::Wrong)
        }
    };
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Str<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Field::Is(Cow::Borrowed(v)))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Field::Is(Cow::Owned(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Field::Is(Cow::Owned(v.to_owned())))
    }

    wrong_types!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);
}

impl<'de> Deserialize<'de> for Field<Cow<'de, str>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor)
    }
}

struct U64Visitor;

impl<'de> Visitor<'de> for U64Visitor {
    type Value = Field<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Field::Is(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(u64::try_from(v).map_or(Field::Wrong, Field::Is))
    }

    wrong_types!(visit_bool: bool, visit_str: &str, visit_f64: f64);
}

impl<'de> Deserialize<'de> for Field<u64> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(U64Visitor)
    }
}

struct BoolVisitor;

impl<'de> Visitor<'de> for BoolVisitor {
    type Value = Field<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Field::Is(v))
    }

    wrong_types!(visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
}

impl<'de> Deserialize<'de> for Field<bool> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BoolVisitor)
    }
}

/// A map key, borrowed when it can be.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object of the input, with every key the report reads (of payloads, identities, events,
/// event log lines and tool lists alike; the last of a repeated key wins, as in JSON objects).
#[derive(Debug, Default)]
pub(crate) struct Obj<'de> {
    pub events: Field<Vec<Elem<'de>>>,
    pub identity: Field<Box<Obj<'de>>>,
    pub kind: Str<'de>,
    pub v: Field<u64>,
    pub ts: Field<u64>,
    pub call_id: Str<'de>,
    pub tool: Str<'de>,
    pub tool_name: Str<'de>,
    pub tool_hash: Str<'de>,
    pub session: Str<'de>,
    pub conversation: Str<'de>,
    pub turn: Str<'de>,
    pub model: Str<'de>,
    pub client: Str<'de>,
    pub server_version: Str<'de>,
    pub event: Field<Box<Obj<'de>>>,
    pub is_error: Field<bool>,
    pub duration_ms: Field<u64>,
    pub timestamp: Field<u64>,
    pub error_message: Str<'de>,
    pub intent: Str<'de>,
    /// An event log line's intent inferred by the user's hook (docs/event-log.md).
    pub inferred_intent: Str<'de>,
    /// The bytes of the `result`'s compact JSON, when there is one (null too).
    pub result: Option<u64>,
    pub arguments: Field<Args<'de>>,
    pub user_id: Str<'de>,
    pub user_email: Str<'de>,
    pub tools: Field<Vec<Elem<'de>>>,
    pub name: Str<'de>,
    pub hash: Str<'de>,
    pub description: Str<'de>,
}

struct ObjVisitor;

impl<'de> Visitor<'de> for ObjVisitor {
    /// Filled where it will stay (an object is large: built on the stack, it would be copied
    /// into its box).
    type Value = Box<Obj<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Box<Obj<'de>>, A::Error> {
        let mut o = Box::<Obj<'de>>::default();
        while let Some(Key(key)) = map.next_key()? {
            match &*key {
                "events" => o.events = map.next_value()?,
                "identity" => o.identity = map.next_value()?,
                "kind" => o.kind = map.next_value()?,
                "v" => o.v = map.next_value()?,
                "ts" => o.ts = map.next_value()?,
                "callId" => o.call_id = map.next_value()?,
                "tool" => o.tool = map.next_value()?,
                "toolName" => o.tool_name = map.next_value()?,
                "toolHash" => o.tool_hash = map.next_value()?,
                "session" => o.session = map.next_value()?,
                "conversation" => o.conversation = map.next_value()?,
                "turn" => o.turn = map.next_value()?,
                "model" => o.model = map.next_value()?,
                "client" => o.client = map.next_value()?,
                "serverVersion" => o.server_version = map.next_value()?,
                "event" => o.event = map.next_value()?,
                "isError" => o.is_error = map.next_value()?,
                "durationMs" => o.duration_ms = map.next_value()?,
                "timestamp" => o.timestamp = map.next_value()?,
                "errorMessage" => o.error_message = map.next_value()?,
                "intent" => o.intent = map.next_value()?,
                "inferredIntent" => o.inferred_intent = map.next_value()?,
                "result" => o.result = Some(map.next_value::<JsonLen>()?.0),
                "arguments" => o.arguments = map.next_value()?,
                "userId" => o.user_id = map.next_value()?,
                "userEmail" => o.user_email = map.next_value()?,
                "tools" => o.tools = map.next_value()?,
                "name" => o.name = map.next_value()?,
                "hash" => o.hash = map.next_value()?,
                "description" => o.description = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(o)
    }
}

impl<'de> Deserialize<'de> for Obj<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ObjVisitor).map(|o| *o)
    }
}

/// An event's `arguments`: only the capability request's two keys and the feedback tool's
/// three are read (the rest of the object is passed over, not built: most calls' arguments are
/// their tool's own).
#[derive(Debug, Default)]
pub(crate) struct Args<'de> {
    pub capability: Str<'de>,
    pub context: Str<'de>,
    pub category: Str<'de>,
    pub text: Str<'de>,
    pub task_completed: Field<bool>,
}

/// The arguments when an object, null, or of another type (as [`Field<Box<Obj>>`] reads it).
impl<'de> Deserialize<'de> for Field<Args<'de>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'de>(PhantomData<&'de ()>);
        impl<'de> Visitor<'de> for V<'de> {
            type Value = Field<Args<'de>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut a = Args::default();
                while let Some(Key(key)) = map.next_key()? {
                    match &*key {
                        "capability" => a.capability = map.next_value()?,
                        "context" => a.context = map.next_value()?,
                        "category" => a.category = map.next_value()?,
                        "text" => a.text = map.next_value()?,
                        "task_completed" => a.task_completed = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Field::Is(a))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Field::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Field::Wrong)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Field::Wrong)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Field::Wrong)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Field::Wrong)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Field::Wrong)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Field::Wrong)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A field holding an object: the object, or of another type.
impl<'de> Deserialize<'de> for Field<Box<Obj<'de>>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Elem::deserialize(d)? {
            Elem::Obj(o) => Ok(Field::Is(o)),
            Elem::Null => Ok(Field::Null),
            _ => Ok(Field::Wrong),
        }
    }
}

/// A field holding an array: its elements, or of another type.
impl<'de> Deserialize<'de> for Field<Vec<Elem<'de>>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Elem::deserialize(d)? {
            Elem::Arr(a) => Ok(Field::Is(a)),
            Elem::Null => Ok(Field::Null),
            _ => Ok(Field::Wrong),
        }
    }
}

/// Any value: an object, an array of values, null, or something else.
#[derive(Debug)]
pub(crate) enum Elem<'de> {
    Obj(Box<Obj<'de>>),
    Arr(Vec<Elem<'de>>),
    Null,
    Other,
}

impl<'de> Deserialize<'de> for Elem<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'de>(PhantomData<&'de ()>);
        impl<'de> Visitor<'de> for V<'de> {
            type Value = Elem<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Elem<'de>, A::Error> {
                Ok(Elem::Obj(ObjVisitor.visit_map(map)?))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Elem<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(e) = seq.next_element()? {
                    items.push(e);
                }
                Ok(Elem::Arr(items))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Elem<'de>, E> {
                Ok(Elem::Null)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Elem<'de>, E> {
                Ok(Elem::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Elem<'de>, E> {
                Ok(Elem::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Elem<'de>, E> {
                Ok(Elem::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Elem<'de>, E> {
                Ok(Elem::Other)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Elem<'de>, E> {
                Ok(Elem::Other)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The length of a value's compact JSON (`serde_json::to_string`), counted as it is read.
pub(crate) struct JsonLen(pub u64);

impl<'de> Deserialize<'de> for JsonLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonLen;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<JsonLen, E> {
                Ok(JsonLen(4))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<JsonLen, E> {
                Ok(JsonLen(if v { 4 } else { 5 }))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonLen, E> {
                Ok(JsonLen(v.checked_ilog10().map_or(1, |d| u64::from(d) + 1)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonLen, E> {
                let digits = v.unsigned_abs().checked_ilog10().map_or(1, |d| u64::from(d) + 1);
                Ok(JsonLen(digits + u64::from(v < 0)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonLen, E> {
                Ok(JsonLen(serde_json::to_string(&v).map_or(4, |s| s.len() as u64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonLen, E> {
                Ok(JsonLen(quoted_len(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonLen, A::Error> {
                let (mut len, mut n) = (2, 0);
                while let Some(JsonLen(l)) = seq.next_element()? {
                    len += l;
                    n += 1;
                }
                Ok(JsonLen(len + n.max(1) - 1))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonLen, A::Error> {
                let (mut len, mut n) = (2, 0);
                while let Some(Key(k)) = map.next_key()? {
                    len += quoted_len(&k) + 1 + map.next_value::<JsonLen>()?.0;
                    n += 1;
                }
                Ok(JsonLen(len + n.max(1) - 1))
            }
        }
        d.deserialize_any(V)
    }
}

/// The length of a string as serde_json writes it: quoted, with its escapes.
fn quoted_len(s: &str) -> u64 {
    // Most strings need no escape: told without a branch a byte (which the compiler does 16
    // bytes at a time), and only those that do are counted byte by byte.
    let escaped = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
    if !s.as_bytes().chunks(16).fold(false, |any, c| any | c.iter().fold(false, |a, &b| a | escaped(b))) {
        return s.len() as u64 + 2;
    }
    let escapes: u64 = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    s.len() as u64 + escapes + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn the_length_of_a_result_is_that_of_its_compact_json() {
        for v in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(7),
            json!(10),
            json!(-1),
            json!(-120),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1.5),
            json!(1e300),
            json!(-0.25),
            json!("é\"\\\n\t\u{1}\u{1f}\u{7f}日本"),
            json!([]),
            json!({}),
            json!([1, "a", null, {"k": [true]}]),
            json!({"content": [{"type": "text", "text": "[{\"sku\":\"MUG\"}]"}], "a\nb": 1}),
        ] {
            let text = v.to_string();
            let len = serde_json::from_str::<JsonLen>(&text).unwrap().0;
            assert_eq!(len, text.len() as u64, "{text}");
            // Pretty-printed input: the compact length still.
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            assert_eq!(serde_json::from_str::<JsonLen>(&pretty).unwrap().0, text.len() as u64, "{pretty}");
        }
    }

    #[test]
    fn known_keys_are_absent_null_of_their_type_or_wrong() {
        let o: Obj<'_> =
            serde_json::from_str(r#"{"toolName":"a","durationMs":"12","isError":null,"timestamp":-3,"x":{"y":[1]}}"#)
                .unwrap();
        assert_eq!(o.tool_name, Field::Is(Cow::Borrowed("a")));
        assert_eq!((o.duration_ms, o.is_error, o.timestamp), (Field::Wrong, Field::Null, Field::Wrong));
        assert_eq!(o.intent, Field::Absent);
        // From a Value too, and the last of a repeated key wins.
        let v: Value = serde_json::from_str(r#"{"kind":1,"session":"s\"1","ts":5}"#).unwrap();
        let o = Obj::deserialize(&v).unwrap();
        assert_eq!((o.kind, o.session.text(), o.ts), (Field::Wrong, Some("s\"1".to_owned()), Field::Is(5)));
        let o: Obj<'_> = serde_json::from_str(r#"{"model":"a","model":"b"}"#).unwrap();
        assert_eq!(o.model.text().as_deref(), Some("b"));
    }
}
