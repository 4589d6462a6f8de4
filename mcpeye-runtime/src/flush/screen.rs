//! The user's last word on each event ([`Config::before_send`](crate::Config::before_send)) and
//! sampling ([`Config::sample_rate`](crate::Config::sample_rate)), on the flusher thread: the
//! screen every record passes between the hand-off channel and the encoder.

use crate::config::Config;
use crate::model::diagnostics::{DiagnosticKind, Diagnostics};
use crate::model::event::{BeforeSendFn, Event};
use crate::model::record::CallOutcome;
use crate::model::stats::Counters;
use crate::record::Queued;
use crate::redact::Redactor;
use mcpeye_contract::RESERVED_TOOL_NAMES;
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// The event `before_send` sees is built here, from the queued record, because only the flusher
/// holds both the record and the redactor.
impl Event {
    /// The event of a queued record: capped and redacted as the encoder would.
    fn of(queued: Queued, redactor: &Redactor) -> Event {
        let (record, user_id, user_email) = queued.into_record();
        // An unknown tool's name is the agent's text: cleaned and redacted as the encoder does.
        let unknown = matches!(&record.outcome, CallOutcome::Error { reason: Some(r), .. } if r == crate::model::record::UNKNOWN_TOOL);
        let tool_name =
            if unknown { redactor.unknown_tool_name(&record.tool_name).into_owned().into() } else { record.tool_name };
        let outcome = match record.outcome {
            CallOutcome::Success { result } => CallOutcome::Success { result: redactor.value(result) },
            CallOutcome::Error { message, reason } => {
                CallOutcome::Error { message: message.map(|m| redactor.text(m)), reason }
            }
            CallOutcome::Cancelled { message } => CallOutcome::Cancelled { message: redactor.text(message) },
            CallOutcome::TimedOut { after, message } => {
                CallOutcome::TimedOut { after, message: redactor.text(message) }
            }
        };
        let arguments = match record.arguments {
            v @ Value::Object(_) => redactor.value(v),
            _ => Value::Object(serde_json::Map::new()),
        };
        Event {
            tool_name,
            arguments,
            outcome,
            intent: record.intent.map(|(text, source)| (redactor.text(text), source)),
            user_id,
            user_email,
            timestamp_ms: record.timestamp_ms,
            duration_ms: u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
            client: record.client,
            session_id: record.session_id,
            model: record.model,
        }
    }
}

/// Sampling, error-reason counts and `before_send`, as configured for one tracker.
pub(crate) struct Screen {
    /// Keep a session when the hash of its id is below this (`None`: keep everything).
    threshold: Option<u64>,
    before_send: Option<Arc<BeforeSendFn>>,
}

impl Screen {
    pub(crate) fn new(config: &Config) -> Self {
        let rate = config.sample_rate;
        // `rate` is checked to be within 0..=1 by `init`.
        let threshold = (rate < 1.0).then_some((rate * u64::MAX as f64) as u64);
        Screen { threshold, before_send: config.before_send.clone() }
    }

    /// The first part of the screen: counts the record's error reason and samples it. False:
    /// sampled out (counted). The record is only borrowed: it is large, and most records go on
    /// to the encoder as they are, and moving one in and out would be paid for every event.
    pub(crate) fn passes(&self, queued: &Queued, counters: &Counters) -> bool {
        if let Some(reason) = queued.error_type() {
            counters.count_error(&queued.tool_name, reason);
        }
        if let Some(model) = queued.model() {
            counters.count_model(model);
        }
        // Without sampling, every record is kept: no draw.
        if let Some(threshold) = self.threshold {
            if !keeps(threshold, queued.tool_name.as_ref(), queued.session_id.as_deref()) {
                Counters::add(&counters.sampled_out, 1);
                return false;
            }
        }
        true
    }

    /// Whether `before_send` is set: records that [`passes`](Self::passes) let through then go
    /// to [`edit`](Self::edit).
    pub(crate) fn edits(&self) -> bool {
        self.before_send.is_some()
    }

    /// The second part of the screen: what `before_send` makes of the record's event (without
    /// one, the event as it is); `None`: dropped, and counted.
    pub(crate) fn edit(
        &self,
        queued: Queued,
        redactor: &Redactor,
        counters: &Counters,
        diagnostics: &Diagnostics,
    ) -> Option<Event> {
        let event = Event::of(queued, redactor);
        let Some(hook) = &self.before_send else { return Some(event) };
        match catch_unwind(AssertUnwindSafe(|| hook(event))) {
            Ok(Some(event)) => Some(event),
            Ok(None) => {
                Counters::add(&counters.before_send, 1);
                None
            }
            Err(_) => {
                Counters::add(&counters.before_send_panicked, 1);
                diagnostics.report(DiagnosticKind::BeforeSendPanicked, || {
                    "the before_send callback panicked; those events were dropped".to_string()
                });
                None
            }
        }
    }
}

/// Whether a call of `tool` in `session` is sampled in below `threshold`: by the session's hash,
/// so a session is kept or dropped whole, the same way on every replica; by chance without a
/// session.
fn keeps(threshold: u64, tool: &str, session: Option<&str>) -> bool {
    // What agents report through mcpeye's own tools is rare and is the point: never sampled out.
    if RESERVED_TOOL_NAMES.contains(&tool) {
        return true;
    }
    let draw = match session {
        Some(id) => stable_hash(id),
        None => uuid::Uuid::new_v4().as_u64_pair().0,
    };
    draw < threshold
}

/// FNV-1a over the bytes, then the SplitMix64 finaliser to spread similar ids: stable across
/// processes, Rust versions and machines (unlike `DefaultHasher`).
fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flush::encode::{encode, encode_edited};
    use crate::model::record::{CallRecord, IntentSource};
    use serde_json::json;

    #[test]
    fn an_event_returned_unchanged_is_sent_byte_for_byte_as_without_before_send() {
        let deep = (0..200).fold(json!("leaf"), |v, _| Value::Array(vec![v]));
        let mut records = [
            CallRecord::new(
                "search",
                json!({"q": "mail a@b.com", "password": "x", "deep": deep}),
                CallOutcome::Success {
                    result: json!({"content": [{"type": "text", "text": "sk-ant-api03-ABCDEFGHIJKLMNOP_qrs"}]}),
                },
            ),
            CallRecord::new(
                "big",
                json!({"blob": "y".repeat(40_000)}),
                CallOutcome::error_with_reason("a@b.com ".repeat(9_000), "why"),
            ),
            CallRecord::new("nothing", json!([1, 2]), CallOutcome::Error { message: None, reason: None }),
        ];
        records[0].intent = Some(("call 415-555-0123".into(), IntentSource::Mcpeye));
        for (redact, record) in [true, false].into_iter().flat_map(|r| records.iter().map(move |rec| (r, rec.clone())))
        {
            let redactor = Redactor::new(redact, &["deep".to_owned()]);
            let id = uuid::Uuid::from_u128(7);
            let queued = || Queued::new(record.clone(), Some("u1".into()), None, Vec::new());
            let (mut direct, mut edited) = (Vec::new(), Vec::new());
            encode(queued().parts(), id, &redactor, &mut direct).unwrap();
            encode_edited(Event::of(queued(), &redactor), id, &mut edited).unwrap();
            assert_eq!(String::from_utf8(direct).unwrap(), String::from_utf8(edited).unwrap(), "redact={redact}");
        }
    }

    fn screen(rate: f64) -> Screen {
        Screen::new(&Config::new("p").sample_rate(rate))
    }

    /// Whether `s` keeps a call of `tool` in `session`, as [`Screen::passes`] decides.
    fn kept(s: &Screen, tool: &str, session: Option<&str>) -> bool {
        s.threshold.is_none_or(|threshold| keeps(threshold, tool, session))
    }

    #[test]
    fn sessions_are_kept_or_dropped_whole_and_the_rate_holds() {
        let s = screen(0.25);
        let count = (0..10_000).filter(|i| kept(&s, "search", Some(&format!("session-{i}")))).count();
        assert!((2_200..2_800).contains(&count), "{count}");
        for i in 0..100 {
            let id = format!("session-{i}");
            let first = kept(&s, "search", Some(&id));
            assert!((0..20).all(|_| kept(&s, "other_tool", Some(&id)) == first));
        }
    }

    #[test]
    fn the_reserved_tool_and_full_rates_are_always_kept() {
        assert!((0..1000).all(|i| kept(&screen(0.0), crate::contract::RESERVED_TOOL_NAME, Some(&i.to_string()))));
        assert!((0..1000).all(|i| kept(&screen(0.0), crate::contract::FEEDBACK_TOOL_NAME, Some(&i.to_string()))));
        assert!((0..1000).all(|i| !kept(&screen(0.0), "search", Some(&i.to_string()))));
        assert!((0..1000).all(|_| !kept(&screen(0.0), "search", None)));
        assert!((0..1000).all(|i| kept(&screen(1.0), "search", Some(&i.to_string()))));
    }

    #[test]
    fn the_hash_is_stable() {
        // Fixed values: a replica built by another compiler decides the same.
        assert_eq!(stable_hash(""), 0xf52a_15e9_a9b5_e89b);
        assert_eq!(stable_hash("8267461134f24305af708e66b8eda71a"), 0x2d6f_15de_687a_8106);
    }
}
