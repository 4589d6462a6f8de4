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

/// The flusher's redaction step for one tracker: value caps and text caps of CONTRACT.md §4
/// around the redaction of §5, with the configured extra denylist compiled once.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
    extra_denylist: Vec<String>,
}

impl Redactor {
    /// `enabled = false` keeps the caps but turns redaction off.
    pub fn new(enabled: bool, extra_denylist: &[String]) -> Self {
        Redactor { enabled, extra_denylist: extra_denylist.to_vec() }
    }

    /// `arguments` / `result`: capped (or made a marker), then redacted.
    pub fn value(&self, value: Value) -> Value {
        let _ = self.enabled;
        value
    }

    /// `errorMessage` / `intent`: cut, redacted, capped.
    pub fn text(&self, text: String) -> String {
        text
    }
}
