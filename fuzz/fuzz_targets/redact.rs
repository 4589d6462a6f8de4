//! Redaction never panics, and redacting twice gives what redacting once gave, for strings
//! (`redact_string`), JSON values (`redact_value`) and the flusher's step (`Redactor`) while
//! its output stays within the caps (docs/wire-format.md#caps) (beyond them a second pass may cut or truncate anew:
//! see GUARANTEES.md).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpeye::contract::{MAX_TEXT_BYTES, MAX_VALUE_BYTES};
use mcpeye::redact::{redact_string, redact_value, Redactor};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let once = redact_string(&text).into_owned();
    assert_eq!(redact_string(&once), once, "redact_string is not idempotent on {text:?}");

    let redactor = Redactor::new(true, &["ssn".to_owned()]);
    let t1 = redactor.text(text.clone().into_owned());
    if t1.len() < MAX_TEXT_BYTES {
        assert_eq!(redactor.text(t1.clone()), t1);
    }

    // Bytes that parse as JSON (serde_json limits the nesting to 128) also go through the
    // value paths; others are wrapped as a string in an object.
    let value = serde_json::from_slice::<Value>(data).unwrap_or_else(|_| serde_json::json!({ "s": text }));
    let v1 = redact_value(&value, &["ssn"]);
    assert_eq!(redact_value(&v1, &["ssn"]), v1);
    let r1 = redactor.value(value);
    if serde_json::to_vec(&r1).map(|b| b.len()).unwrap_or(usize::MAX) <= MAX_VALUE_BYTES {
        assert_eq!(redactor.value(r1.clone()), r1);
    }
});
