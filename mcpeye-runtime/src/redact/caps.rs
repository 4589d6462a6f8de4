//! Size caps (docs/wire-format.md#caps): the compact-JSON cap on values and the byte cut of texts.

use crate::contract::{MAX_VALUE_BYTES, TRUNCATED_SUFFIX};
use crate::json::node::compact_len;
use serde_json::{Map, Value};

/// The marker that replaces a value whose compact JSON is `bytes` long:
/// `{"[truncated]":true,"bytes":N}`.
pub(crate) fn truncated_marker(bytes: usize) -> Value {
    let mut m = Map::new();
    m.insert("[truncated]".to_owned(), Value::Bool(true));
    m.insert("bytes".to_owned(), Value::from(bytes));
    Value::Object(m)
}

/// The marker that replaces a value that cannot be serialised: `{"[unserializable]":true}`.
#[cfg(test)]
pub(crate) fn unserializable_marker() -> Value {
    let mut m = Map::new();
    m.insert("[unserializable]".to_owned(), Value::Bool(true));
    Value::Object(m)
}

/// Returns whether `value` is one of the two cap markers (never redacted).
#[cfg(test)]
pub(crate) fn is_cap_marker(value: &Value) -> bool {
    match value {
        Value::Object(m) => match m.len() {
            1 => m.get("[unserializable]") == Some(&Value::Bool(true)),
            2 => m.get("[truncated]") == Some(&Value::Bool(true)) && m.get("bytes").is_some_and(Value::is_u64),
            _ => false,
        },
        _ => false,
    }
}

/// Length in bytes of the compact JSON of `value` (as `serde_json::to_vec` writes it), computed
/// without building it and without recursion, so any depth is safe.
pub(crate) fn compact_json_len(value: &Value) -> usize {
    compact_len(value)
}

/// The value cap alone (docs/wire-format.md#caps): `value` if its compact JSON is at most
/// [`MAX_VALUE_BYTES`](crate::contract::MAX_VALUE_BYTES) bytes, else
/// `{"[truncated]":true,"bytes":N}`.
#[cfg_attr(not(feature = "testing"), allow(dead_code))] // the redaction vectors test it alone
pub(crate) fn cap_value(value: Value) -> Value {
    let n = compact_json_len(&value);
    if n > MAX_VALUE_BYTES {
        drop_flat(value);
        truncated_marker(n)
    } else {
        value
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub(crate) fn cut_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Cuts an owned string in place to at most `max` bytes, on a char boundary.
pub(crate) fn truncate_at_char_boundary(s: &mut String, max: usize) {
    let end = cut_at_char_boundary(s, max).len();
    s.truncate(end);
}

/// The final step of the text cap (docs/wire-format.md#caps): `text` unchanged if it holds at most `max` bytes, else cut
/// to `max - 14` bytes (on a char boundary) with `…[truncated]` appended.
pub(crate) fn cap_text_after(mut text: String, max: usize) -> String {
    if text.len() > max {
        truncate_at_char_boundary(&mut text, max - TRUNCATED_SUFFIX.len());
        text.push_str(TRUNCATED_SUFFIX);
    }
    text
}

/// Drops `value` without recursion: serde_json's own drop recurses once per nesting level, and
/// a value built in code (not parsed) has no depth limit.
pub(crate) fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_len_matches_serde_json() {
        let cases = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-17),
            json!(u64::MAX),
            json!(1.5),
            json!(1e300),
            json!(-0.0001),
            json!(""),
            json!("quote \" backslash \\ tab \t nl \n bell \u{7} del \u{7f} é 界 🔑"),
            json!([]),
            json!({}),
            json!([1, [2, [3, {}]], {"k\"": "v", "e": []}]),
            json!({"a": {"b": {"c": [null, true, "x"]}}, "\u{1}": 2.25}),
        ];
        for v in cases {
            assert_eq!(compact_json_len(&v), serde_json::to_vec(&v).unwrap().len(), "{v}");
        }
    }

    #[test]
    fn deep_values_are_measured_and_dropped_without_recursion() {
        let mut v = json!("leaf");
        for _ in 0..200_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(compact_json_len(&v), 400_000 + 6);
        assert_eq!(cap_value(v), truncated_marker(400_006));
    }

    #[test]
    fn markers_are_recognised() {
        assert!(is_cap_marker(&truncated_marker(40_000)));
        assert!(is_cap_marker(&unserializable_marker()));
        assert!(!is_cap_marker(&json!({"[truncated]": true})));
        assert!(!is_cap_marker(&json!({"bytes": 1, "x": true})));
    }

    #[test]
    fn text_cap_cuts_on_char_boundary() {
        let s = "界".repeat(20);
        let capped = cap_text_after(s.clone(), 30);
        // 30 - 14 = 16 bytes allowed: five 3-byte chars
        assert_eq!(capped, format!("{}{}", "界".repeat(5), TRUNCATED_SUFFIX));
        assert_eq!(cap_text_after(s.clone(), 60), s);
    }
}
