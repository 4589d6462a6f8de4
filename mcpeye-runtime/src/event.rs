//! The wire format (CONTRACT.md §2): events and payloads serialised with their keys in the
//! contract's order, optional keys omitted, compact, non-ASCII as UTF-8.

use crate::capture::CallRecord;
use crate::config::Identity;
use crate::contract::markers;
use crate::redact::{Redactor, MAX_DEPTH};
use serde::Serialize;
use serde_json::{Map, Value};

/// A record as it leaves the calling thread: moved, not yet capped, redacted or serialised.
#[derive(Debug)]
pub(crate) struct Pending {
    pub record: CallRecord,
    pub call_id: uuid::Uuid,
    pub user_id: Option<String>,
    pub user_email: Option<String>,
}

/// One event on the wire. Field order is the contract's key order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireEvent<'a> {
    call_id: &'a str,
    tool_name: &'a str,
    arguments: Value,
    is_error: bool,
    timestamp: u64,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent_source: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_email: Option<String>,
}

/// Why an event cannot be sent (CONTRACT.md §2).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    EmptyToolName,
    Unserializable,
}

/// Caps and redacts a record's values, then serialises it as one compact event object.
pub(crate) fn encode_event(p: Pending, redactor: &Redactor) -> Result<Vec<u8>, Invalid> {
    let Pending { record, call_id, user_id, user_email } = p;
    if record.tool_name.trim().is_empty() {
        return Err(Invalid::EmptyToolName);
    }
    // With redaction on, the redactor has already replaced containers past the depth cap.
    let capped = |v: Value| if redactor.enabled() { redactor.value(v) } else { cap_depth(redactor.value(v)) };
    let arguments = match record.arguments {
        Value::Object(_) => capped(record.arguments),
        _ => Value::Object(Map::new()),
    };
    // `result` belongs to successful calls only; `intentSource` only travels with an intent.
    let result = if record.is_error { None } else { record.result.map(capped) };
    let (intent, intent_source) = match record.intent {
        Some((text, source)) => (Some(redactor.text(text)), Some(source.as_str())),
        None => (None, None),
    };
    let mut id = uuid::Uuid::encode_buffer();
    let event = WireEvent {
        call_id: call_id.hyphenated().encode_lower(&mut id),
        tool_name: &record.tool_name,
        arguments,
        is_error: record.is_error,
        timestamp: record.timestamp_ms,
        duration_ms: u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
        result,
        error_message: record.error_message.map(|m| redactor.text(m)),
        intent,
        intent_source,
        user_id,
        user_email,
    };
    serde_json::to_vec(&event).map_err(|_| Invalid::Unserializable)
}

/// Replaces containers at [`MAX_DEPTH`] or deeper with the too-deep marker, without recursion.
/// The redactor does so when redaction is on; this does it with redaction off, because
/// serde_json serialises (and `Value` drops) recursively: a value nested thousands deep would
/// overflow the flusher's stack and abort the host.
fn cap_depth(mut value: Value) -> Value {
    let mut stack: Vec<(&mut Value, usize)> = vec![(&mut value, 0)];
    while let Some((v, depth)) = stack.pop() {
        if depth >= MAX_DEPTH && matches!(v, Value::Array(_) | Value::Object(_)) {
            drop_flat(std::mem::replace(v, Value::String(markers::TOO_DEEP.to_owned())));
            continue;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter_mut().map(|c| (c, depth + 1))),
            Value::Object(m) => stack.extend(m.values_mut().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    value
}

/// Drops a value without recursion.
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
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

/// `{"projectId":…,"identity":{…},"events":[` — the part of a payload before its events.
pub(crate) fn payload_head(project_id: &str, identity: &Identity) -> Vec<u8> {
    let mut head = b"{\"projectId\":".to_vec();
    // Serialising a &str or this struct into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut head, project_id);
    head.extend_from_slice(b",\"identity\":");
    let wire = WireIdentity {
        user_id: identity.user_id.as_deref(),
        user_email: identity.user_email.as_deref(),
        client: identity.client.as_deref(),
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
    use crate::capture::IntentSource;
    use serde_json::json;
    use std::time::Duration;

    fn record() -> CallRecord {
        CallRecord {
            tool_name: "search".into(),
            arguments: json!({"q": "café"}),
            is_error: false,
            result: Some(json!({"content": [{"type": "text", "text": "ok"}]})),
            error_message: None,
            intent: Some(("Planning a trip.".into(), IntentSource::Mcpeye)),
            timestamp_ms: 1_796_032_847_292,
            duration: Duration::from_micros(2_900),
        }
    }

    fn encode(record: CallRecord) -> Result<String, Invalid> {
        let call_id = uuid::Uuid::from_u128(0xABCD_EF00_0000_4000_8000_0000_0000_0001);
        let p = Pending { record, call_id, user_id: None, user_email: Some("c@x.io".into()) };
        encode_event(p, &Redactor::new(false, &[])).map(|b| String::from_utf8(b).unwrap())
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
        r.is_error = true;
        r.error_message = Some("boom".into());
        r.intent = None;
        r.arguments = json!([1, 2]);
        let s = encode(r).unwrap();
        assert!(s.contains("\"arguments\":{},\"isError\":true"), "{s}");
        assert!(s.contains("\"errorMessage\":\"boom\""));
        assert!(!s.contains("result") && !s.contains("intent") && !s.contains("null"), "{s}");
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
        for _ in 1..MAX_DEPTH {
            v = &v[0];
        }
        assert_eq!(v, &json!(markers::TOO_DEEP));
        let shallow = json!({"a": [[{"b": [1]}]]});
        assert_eq!(cap_depth(shallow.clone()), shallow);
    }

    #[test]
    fn empty_tool_name_is_invalid() {
        let mut r = record();
        r.tool_name = "".into();
        assert_eq!(encode(r), Err(Invalid::EmptyToolName));
    }

    #[test]
    fn payload_wraps_events() {
        let head = payload_head("proj", &Identity::new().client("c/1").server_version(3));
        let body = payload(&head, [&b"{}"[..], &b"{\"a\":1}"[..]]);
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"projectId\":\"proj\",\"identity\":{\"client\":\"c/1\",\"serverVersion\":\"3\"},\"events\":[{},{\"a\":1}]}"
        );
        let empty = payload_head("p", &Identity::new());
        assert_eq!(String::from_utf8(empty).unwrap(), "{\"projectId\":\"p\",\"identity\":{},\"events\":[");
    }
}
