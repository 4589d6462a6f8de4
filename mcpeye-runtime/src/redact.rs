//! Redaction of secrets and personal data (CONTRACT.md §4–5).
//!
//! (Interface stub: the full implementation lands with the redaction work.)

use serde_json::Value;
use std::borrow::Cow;

/// Replaces secrets and PII in `s` with the contract's markers.
pub fn redact_string(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}

/// Redacts every string of `value`; keys in the default denylist or `extra_denylist` have
/// their whole value replaced.
pub fn redact_value(value: &Value, _extra_denylist: &[&str]) -> Value {
    value.clone()
}
