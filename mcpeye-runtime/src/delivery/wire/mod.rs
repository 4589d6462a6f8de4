//! The wire format (docs/wire-format.md#payload, #event): events and payloads serialised with their keys in the
//! contract's order, optional keys omitted, compact, non-ASCII as UTF-8.

use crate::capture::record::{CallOutcome, CallRecord, ClientInfo};
use crate::config::Identity;
use crate::delivery::redact::Redactor;
use json::{write_number, write_str};

pub(crate) mod json;
use serde::Serialize;
use serde_json::Value;

/// A record as it leaves the calling thread: moved, not yet capped, redacted or serialised.
#[derive(Debug)]
pub(crate) struct Queued {
    pub record: CallRecord,
    pub user_id: Option<String>,
    pub user_email: Option<String>,
}

/// Why an event cannot be sent (docs/wire-format.md#payload).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    EmptyToolName,
}

/// Caps, redacts and serialises a record as one compact event object, appended to `out`.
///
/// Written by hand rather than through a `Serialize` struct: the values are measured, redacted
/// and written in one walk ([`Redactor::write_value`]), and strings without escapes are copied
/// whole. Keys follow the contract's order; optional keys are omitted.
///
/// The call id is drawn here, on the flusher, rather than on the calling thread: it only has to
/// be unique, and an event is encoded once (a retry resends the same bytes).
pub(crate) fn encode_event(
    queued: Queued,
    call_id: uuid::Uuid,
    redactor: &Redactor,
    out: &mut Vec<u8>,
) -> Result<(), Invalid> {
    let Queued { record, user_id, user_email } = queued;
    if record.tool_name.trim().is_empty() {
        return Err(Invalid::EmptyToolName);
    }
    let mut id = uuid::Uuid::encode_buffer();
    out.extend_from_slice(b"{\"callId\":");
    write_str(out, call_id.hyphenated().encode_lower(&mut id));
    out.extend_from_slice(b",\"toolName\":");
    write_str(out, &record.tool_name);
    out.extend_from_slice(b",\"arguments\":");
    match record.arguments {
        Value::Object(_) => redactor.write_value(record.arguments, out),
        _ => out.extend_from_slice(b"{}"),
    }
    out.extend_from_slice(if record.outcome.is_error() { b",\"isError\":true" } else { b",\"isError\":false" });
    out.extend_from_slice(b",\"timestamp\":");
    write_number(out, record.timestamp_ms);
    out.extend_from_slice(b",\"durationMs\":");
    write_number(out, u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX));
    // `intentSource` only travels with an intent.
    match record.outcome {
        CallOutcome::Success { result } => {
            out.extend_from_slice(b",\"result\":");
            redactor.write_value(result, out);
        }
        CallOutcome::Error { message: Some(message) } => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
        CallOutcome::Error { message: None } => {}
        // A cancelled or timed-out call is an error event whose message says so
        // (docs/wire-format.md#errors).
        CallOutcome::Cancelled { message } | CallOutcome::TimedOut { message, .. } => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
    }
    if let Some((text, source)) = record.intent {
        out.extend_from_slice(b",\"intent\":");
        write_str(out, &redactor.text(text));
        out.extend_from_slice(b",\"intentSource\":");
        write_str(out, source.as_str());
    }
    if let Some(user_id) = user_id {
        out.extend_from_slice(b",\"userId\":");
        write_str(out, &user_id);
    }
    if let Some(user_email) = user_email {
        out.extend_from_slice(b",\"userEmail\":");
        write_str(out, &user_email);
    }
    out.push(b'}');
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireIdentity<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<&'a str>,
}

/// `{"projectId":…,"identity":{…},"events":[` — the part of a payload before its events. The
/// events' own `client` (the label of their [`ClientInfo`]) replaces the configured one.
pub(crate) fn payload_head(project_id: &str, identity: &Identity, client: Option<&ClientInfo>) -> Vec<u8> {
    let mut head = b"{\"projectId\":".to_vec();
    // Serialising a &str or this struct into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut head, project_id);
    head.extend_from_slice(b",\"identity\":");
    let wire = WireIdentity {
        user_id: identity.user_id.as_deref(),
        user_email: identity.user_email.as_deref(),
        client: client.and_then(ClientInfo::label).or(identity.client.as_deref()),
        server_version: identity.server_version.as_deref(),
    };
    let _ = serde_json::to_writer(&mut head, &wire);
    head.extend_from_slice(b",\"events\":[");
    head
}

/// Bytes that close a payload after its events.
pub(crate) const PAYLOAD_TAIL: &[u8] = b"]}";

/// A whole payload from its head and encoded events.
pub(crate) fn payload<'a>(head: &[u8], events: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut body = head.to_vec();
    for (i, e) in events.into_iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(e);
    }
    body.extend_from_slice(PAYLOAD_TAIL);
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::record::IntentSource;
    use crate::contract::markers;
    use crate::contract::MAX_VALUE_DEPTH;
    use serde_json::{json, Map};
    use std::time::Duration;

    fn record() -> CallRecord {
        let mut r = CallRecord::new(
            "search",
            json!({"q": "café"}),
            CallOutcome::Success { result: json!({"content": [{"type": "text", "text": "ok"}]}) },
        );
        r.intent = Some(("Planning a trip.".into(), IntentSource::Mcpeye));
        r.timestamp_ms = 1_796_032_847_292;
        r.duration = Duration::from_micros(2_900);
        r
    }

    fn encode(record: CallRecord) -> Result<String, Invalid> {
        let call_id = uuid::Uuid::from_u128(0xABCD_EF00_0000_4000_8000_0000_0000_0001);
        let p = Queued { record, user_id: None, user_email: Some("c@x.io".into()) };
        let mut out = Vec::new();
        encode_event(p, call_id, &Redactor::new(false, &[]), &mut out).map(|()| String::from_utf8(out).unwrap())
    }

    #[test]
    fn event_keys_follow_the_contract() {
        assert_eq!(
            encode(record()).unwrap(),
            "{\"callId\":\"abcdef00-0000-4000-8000-000000000001\",\"toolName\":\"search\",\
             \"arguments\":{\"q\":\"café\"},\"isError\":false,\"timestamp\":1796032847292,\"durationMs\":2,\
             \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]},\"intent\":\"Planning a trip.\",\
             \"intentSource\":\"mcpeye\",\"userEmail\":\"c@x.io\"}"
        );
    }

    #[test]
    fn errors_carry_no_result_and_non_objects_become_empty() {
        let mut r = record();
        r.outcome = CallOutcome::error("boom");
        r.intent = None;
        r.arguments = json!([1, 2]);
        let s = encode(r).unwrap();
        assert!(s.contains("\"arguments\":{},\"isError\":true"), "{s}");
        assert!(s.contains("\"errorMessage\":\"boom\""));
        assert!(!s.contains("result") && !s.contains("intent") && !s.contains("null"), "{s}");
    }

    #[test]
    fn cancelled_and_timed_out_calls_are_error_events_that_say_so() {
        for (outcome, text) in [
            (CallOutcome::cancelled(Some("user pressed stop")), "the client cancelled the call: user pressed stop"),
            (CallOutcome::cancelled(None), "the client cancelled the call"),
            (CallOutcome::timed_out(Duration::from_millis(250)), "the call timed out after 250 ms and was cancelled"),
        ] {
            let mut r = record();
            r.outcome = outcome;
            let s = encode(r).unwrap();
            assert!(s.contains("\"isError\":true,"), "{s}");
            assert!(s.contains(&format!("\"errorMessage\":\"{text}\"")), "{s}");
            assert!(!s.contains("\"result\""), "{s}");
        }
    }

    #[test]
    fn deep_values_are_capped_even_without_redaction() {
        let deep = (0..10_000).fold(json!("leaf"), |v, _| Value::Array(vec![v]));
        let mut r = record();
        // Not `json!`: it would serialise `deep`, recursively.
        r.arguments = Value::Object(Map::from_iter([("a".to_owned(), deep)]));
        let s = encode(r).unwrap();
        let event: Value = serde_json::from_str(&s).unwrap();
        let mut v = &event["arguments"]["a"];
        for _ in 1..MAX_VALUE_DEPTH {
            v = &v[0];
        }
        assert_eq!(v, &json!(markers::TOO_DEEP));
        let mut r = record();
        r.arguments = json!({"a": [[{"b": [1]}]]});
        assert!(encode(r).unwrap().contains("\"arguments\":{\"a\":[[{\"b\":[1]}]]}"));
    }

    #[test]
    fn empty_tool_name_is_invalid() {
        let mut r = record();
        r.tool_name = "".into();
        assert_eq!(encode(r), Err(Invalid::EmptyToolName));
    }

    #[test]
    fn payload_wraps_events() {
        let head = payload_head("proj", &Identity::new().client("c/1").server_version(3), None);
        let body = payload(&head, [&b"{}"[..], &b"{\"a\":1}"[..]]);
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"projectId\":\"proj\",\"identity\":{\"client\":\"c/1\",\"serverVersion\":\"3\"},\"events\":[{},{\"a\":1}]}"
        );
        let empty = payload_head("p", &Identity::new(), None);
        assert_eq!(String::from_utf8(empty).unwrap(), "{\"projectId\":\"p\",\"identity\":{},\"events\":[");
    }

    #[test]
    fn the_events_client_replaces_the_configured_one() {
        let identity = Identity::new().user_id(7).client("configured/1");
        let cursor = ClientInfo::new(" cursor ", "");
        let head = String::from_utf8(payload_head("p", &identity, Some(&cursor))).unwrap();
        assert_eq!(head, "{\"projectId\":\"p\",\"identity\":{\"userId\":\"7\",\"client\":\"cursor\"},\"events\":[");
        let blank = ClientInfo::new("  ", "2.0");
        let head = String::from_utf8(payload_head("p", &identity, Some(&blank))).unwrap();
        assert!(head.contains("\"client\":\"configured/1\""), "{head}");
    }
}
