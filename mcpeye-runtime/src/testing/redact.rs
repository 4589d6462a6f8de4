//! The redaction steps that the project's own tests and benchmarks check one at a time: the
//! size caps alone and the patterns without their prefilter. A server redacts with
//! [`redact_string`](crate::redact::redact_string), [`redact_value`](crate::redact::redact_value)
//! or a [`Redactor`](crate::redact::Redactor).
//!
//! ```
//! use mcpeye::testing::redact::redact_string_unfiltered;
//!
//! assert_eq!(redact_string_unfiltered("mail ada@example.com"), mcpeye::redact::redact_string("mail ada@example.com"));
//! ```

use serde_json::Value;
use std::borrow::Cow;

/// [`redact_string`](crate::redact::redact_string) without its byte-scan prefilter: all nine
/// patterns always run. The same output, slower: the baseline the prefilter is measured and
/// differentially tested against.
///
/// ```
/// use mcpeye::redact::redact_string;
/// use mcpeye::testing::redact::redact_string_unfiltered;
/// let s = "mail a@b.com";
/// assert_eq!(redact_string_unfiltered(s), redact_string(s));
/// ```
pub fn redact_string_unfiltered(s: &str) -> Cow<'_, str> {
    crate::redact::redact_string_unfiltered(s)
}

/// The value cap alone (docs/wire-format.md#caps): `value` if its compact JSON is at most
/// [`MAX_VALUE_BYTES`](crate::contract::MAX_VALUE_BYTES) bytes, else
/// `{"[truncated]":true,"bytes":N}`.
///
/// ```
/// use mcpeye::testing::redact::cap_value;
/// let big = serde_json::json!({"b": "y".repeat(40_000)});
/// assert_eq!(cap_value(big), serde_json::json!({"[truncated]": true, "bytes": 40_008}));
/// ```
pub fn cap_value(value: Value) -> Value {
    crate::redact::cap_value(value)
}

/// Length in bytes of the compact JSON of `value` (as `serde_json::to_vec` writes it), computed
/// without building it and without recursion.
///
/// ```
/// use mcpeye::testing::redact::compact_json_len;
/// let v = serde_json::json!({"a": [1, "é\n"], "b": null});
/// assert_eq!(compact_json_len(&v), serde_json::to_vec(&v).unwrap().len());
/// ```
pub fn compact_json_len(value: &Value) -> usize {
    crate::redact::compact_json_len(value)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
///
/// ```
/// use mcpeye::testing::redact::cut_at_char_boundary;
/// assert_eq!(cut_at_char_boundary("a界", 3), "a");
/// assert_eq!(cut_at_char_boundary("a界", 4), "a界");
/// ```
pub fn cut_at_char_boundary(s: &str, max: usize) -> &str {
    crate::redact::cut_at_char_boundary(s, max)
}

/// The marker that replaces a value whose compact JSON is `bytes` long:
/// `{"[truncated]":true,"bytes":N}`.
///
/// ```
/// use mcpeye::testing::redact::truncated_marker;
/// assert_eq!(truncated_marker(9), serde_json::json!({"[truncated]": true, "bytes": 9}));
/// ```
pub fn truncated_marker(bytes: usize) -> Value {
    crate::redact::truncated_marker(bytes)
}

/// [`redact_string`](crate::redact::redact_string) with the credential layer of
/// [`Redactor::credentials`](crate::redact::Redactor::credentials), on a string of any length (a
/// redactor's `text` cuts at 36 KiB): what the benchmarks measure.
///
/// ```
/// use mcpeye::testing::redact::redact_string_with_credentials;
/// assert_eq!(redact_string_with_credentials("x?token=abc"), "x?token=[REDACTED_URL_CREDENTIAL]");
/// ```
pub fn redact_string_with_credentials(s: &str) -> Cow<'_, str> {
    crate::redact::redact_string_with_credentials(s)
}

/// The credential layer and then all nine patterns, without any prefilter: what a redactor with
/// the layer gives a string of 6 bytes or more (shorter ones are never looked at). The baseline
/// of the layer's differential tests and fuzz target.
///
/// ```
/// use mcpeye::redact::Redactor;
/// use mcpeye::testing::redact::redact_string_layered_unfiltered;
/// let s = "see https://u:pw@h.io and a@b.com";
/// assert_eq!(Redactor::new(true, &[]).credentials(true).text(s.to_owned()), redact_string_layered_unfiltered(s));
/// ```
pub fn redact_string_layered_unfiltered(s: &str) -> Cow<'_, str> {
    crate::redact::redact_string_layered_unfiltered(s)
}
