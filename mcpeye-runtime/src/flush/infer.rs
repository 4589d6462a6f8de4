//! Inferred intents ([`Config::infer_intent`](crate::Config::infer_intent)), on the flusher
//! thread: the user's callback is shown an encoded event without an intent, and what it returns
//! is capped and redacted as an intent is, for the event log only.
//!
//! The callback reads the encoded event rather than the queued record: that is the one place
//! where the arguments exist after redaction (the encoder redacts them as it writes them), and
//! it is what `before_send` let through.

use crate::config::Config;
use crate::model::diagnostics::{DiagnosticKind, Diagnostics};
use crate::model::inferred::{InferCall, InferIntentFn};
use crate::model::record::is_blank;
use crate::model::stats::Counters;
use crate::redact::Redactor;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// The parts of an encoded event (docs/wire-format.md#event) the callback is shown, borrowed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EncodedCall<'a> {
    #[serde(borrow)]
    tool_name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: &'a RawValue,
    is_error: bool,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error_message: Option<Cow<'a, str>>,
}

/// The configured callback, with what it needs to run.
pub(crate) struct IntentInference {
    hook: Arc<InferIntentFn>,
}

impl IntentInference {
    /// The callback of `config`, when it has one and its answers have somewhere to go (an event
    /// log).
    pub(crate) fn new(config: &Config, logged: bool) -> Option<Self> {
        let hook = config.infer_intent.clone().filter(|_| logged)?;
        Some(IntentInference { hook })
    }

    /// The intent the callback infers for `event` (an encoded event without an intent): capped
    /// and redacted by `redactor`; `None` when it gives none, a blank one, or panics (counted).
    pub(crate) fn infer(
        &self,
        event: &[u8],
        redactor: &Redactor,
        counters: &Counters,
        diagnostics: &Diagnostics,
    ) -> Option<String> {
        // The encoder wrote it: it parses.
        let EncodedCall { tool_name, arguments, is_error, result, error_message } =
            serde_json::from_slice(event).ok()?;
        let call = InferCall::new(tool_name, arguments, result, error_message, is_error);
        match catch_unwind(AssertUnwindSafe(|| (self.hook)(&call))) {
            Ok(Some(text)) if !is_blank(&text) => Some(redactor.text(text)),
            Ok(_) => None,
            Err(_) => {
                Counters::add(&counters.infer_intent_panicked, 1);
                diagnostics.report(DiagnosticKind::InferIntentPanicked, || {
                    "the infer_intent callback panicked; those calls have no inferred intent (Stats::infer_intent_panicked)"
                        .to_string()
                });
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{MAX_TEXT_BYTES, TRUNCATED_SUFFIX};
    use crate::flush::encode::encode;
    use crate::model::record::{CallOutcome, CallRecord};
    use crate::record::Queued;
    use serde_json::json;
    use std::sync::Mutex;

    fn encoded(record: CallRecord, redactor: &Redactor) -> Vec<u8> {
        let mut out = Vec::new();
        let mut queued = Queued::new(record, None, None, Vec::new());
        encode(queued.parts(), uuid::Uuid::from_u128(1), redactor, &mut out).unwrap();
        out
    }

    fn inference(f: impl Fn(&InferCall<'_>) -> Option<String> + Send + Sync + 'static) -> IntentInference {
        IntentInference::new(&Config::new("p").infer_intent(f), true).unwrap()
    }

    fn infer(i: &IntentInference, event: &[u8], counters: &Counters) -> Option<String> {
        i.infer(event, &Redactor::new(true, &[]), counters, &Diagnostics::new(Some(Arc::new(|_: &_| {}))))
    }

    #[test]
    fn the_callback_sees_the_event_as_sent_redacted() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let i = inference(move |call| {
            s.lock().unwrap().push((
                call.tool().to_owned(),
                call.arguments().clone(),
                call.is_error(),
                call.error().map(str::to_owned),
                call.result_bytes(),
            ));
            None
        });
        let redactor = Redactor::new(true, &[]);
        let ok = CallRecord::new(
            "search",
            json!({"q": "mugs for ada@example.com", "password": "hunter2"}),
            CallOutcome::Success { result: json!({"content": []}) },
        );
        let failed = CallRecord::new("lookup", json!({}), CallOutcome::error("no \"row\" for ada@example.com"));
        let counters = Counters::default();
        assert_eq!(infer(&i, &encoded(ok, &redactor), &counters), None);
        assert_eq!(infer(&i, &encoded(failed, &redactor), &counters), None);
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].0, "search");
        assert_eq!(seen[0].1, json!({"q": "mugs for [REDACTED_EMAIL]", "password": "[REDACTED_FIELD]"}));
        assert_eq!((seen[0].2, seen[0].3.as_deref(), seen[0].4), (false, None, Some(r#"{"content":[]}"#.len())));
        assert_eq!((seen[1].2, seen[1].3.as_deref(), seen[1].4), (true, Some("no \"row\" for [REDACTED_EMAIL]"), None));
    }

    #[test]
    fn what_it_returns_is_redacted_capped_and_blank_is_none() {
        let event = encoded(
            CallRecord::new("t", json!({}), CallOutcome::Success { result: json!(1) }),
            &Redactor::new(true, &[]),
        );
        let counters = Counters::default();
        let said = |text: &'static str| inference(move |_| Some(text.to_owned()));
        assert_eq!(
            infer(&said("mail sk-ant-api03-ABCDEFGHIJKLMNOP_qrs"), &event, &counters).unwrap(),
            "mail [REDACTED_KEY]"
        );
        assert_eq!(infer(&said("  keep  "), &event, &counters).unwrap(), "  keep  ");
        assert_eq!(infer(&said(""), &event, &counters), None);
        assert_eq!(infer(&said(" \n\t "), &event, &counters), None);
        let long = inference(|_| Some("é".repeat(40_000)));
        let capped = infer(&long, &event, &counters).unwrap();
        assert!(capped.len() <= MAX_TEXT_BYTES && capped.ends_with(TRUNCATED_SUFFIX), "{}", capped.len());
    }

    #[test]
    fn a_panicking_callback_is_counted_and_gives_none() {
        let event = encoded(CallRecord::new("t", json!({}), CallOutcome::error("x")), &Redactor::new(true, &[]));
        let counters = Counters::default();
        let i = inference(|_| panic!("the user's bug"));
        assert_eq!(infer(&i, &event, &counters), None);
        assert_eq!(infer(&i, &event, &counters), None);
        assert_eq!(counters.snapshot().infer_intent_panicked, 2);
    }

    #[test]
    fn without_an_event_log_there_is_no_inference() {
        let config = Config::new("p").infer_intent(|_| Some("x".into()));
        assert!(IntentInference::new(&config, false).is_none());
        assert!(IntentInference::new(&Config::new("p"), true).is_none());
    }
}
