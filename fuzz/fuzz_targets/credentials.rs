//! The credential layer (docs/wire-format.md#credentials) never panics, is idempotent on texts
//! within the caps, and its prefilter never changes an output: a redactor with the layer (and
//! the Luhn check when the first byte is odd) gives what the layer and all nine patterns give
//! without any prefilter, for every text of 6 bytes or more.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpeye::contract::MAX_TEXT_BYTES;
use mcpeye::redact::Redactor;
use mcpeye::testing::redact::redact_string_layered_unfiltered;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let luhn = data.first().is_some_and(|b| b & 1 == 1);
    let text = String::from_utf8_lossy(data).into_owned();
    let redactor = Redactor::new(true, &[]).credentials(true).luhn_cards(luhn);
    let once = redactor.text(text.clone());
    if once.len() < MAX_TEXT_BYTES {
        assert_eq!(redactor.text(once.clone()), once, "not idempotent on {text:?}");
    }
    if !luhn && text.len() >= 6 && text.len() < MAX_TEXT_BYTES {
        assert_eq!(once, redact_string_layered_unfiltered(&text), "the prefilter changed the output of {text:?}");
    }
    // As a value: a string member, and a member whose key may be key-like.
    let (key, rest) = text.split_once(':').unwrap_or(("api_key", &text));
    let value = serde_json::from_slice::<Value>(data).unwrap_or_else(|_| serde_json::json!({ key: rest }));
    let _ = redactor.value(value);
});
