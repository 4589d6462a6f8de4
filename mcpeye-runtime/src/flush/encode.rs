//! The wire format (docs/wire-format.md#payload, #event), written on the flusher thread: an
//! event from a queued record or from what `before_send` returned, with its keys in the
//! contract's order, optional keys omitted, compact, non-ASCII as UTF-8; and the payload of a
//! batch of events.

use crate::config::Identity;
use crate::json::node::Str;
use crate::json::{hyphenated_lower, needs_escape, write_escaped, write_number, write_parts, write_str};
use crate::model::event::Event;
use crate::model::record::{is_blank, CallOutcome, ClientInfo, UNKNOWN_TOOL};
use crate::record::{Body, Ended, EventParts};
use crate::redact::Redactor;
use serde::Serialize;
use serde_json::Value;

/// Why an event cannot be sent (docs/wire-format.md#payload).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    EmptyToolName,
}

/// Serialises an event that [`Config::before_send`](crate::Config::before_send) returned: it
/// is already redacted, so only the caps are applied (again). The same bytes as
/// [`encode`] of the queued record, for an event returned unchanged.
pub(crate) fn encode_edited(event: Event, call_id: uuid::Uuid, out: &mut Vec<u8>) -> Result<(), Invalid> {
    static CAPS_ONLY: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
    let caps = CAPS_ONLY.get_or_init(|| Redactor::new(false, &[]));
    let outcome = match event.outcome {
        CallOutcome::Success { result } => Ended::Success(Body::Value(result)),
        failed => Ended::Failed(failed),
    };
    let parts = EventParts {
        tool_name: &event.tool_name,
        arguments: Body::Value(event.arguments),
        outcome,
        timestamp_ms: event.timestamp_ms,
        duration_ms: event.duration_ms,
        intent: event.intent.as_ref().map(|(t, source)| (Str::of(t), *source)),
        user_id: event.user_id.as_deref(),
        user_email: event.user_email.as_deref(),
    };
    encode(parts, call_id, caps, out)
}

fn write_body(body: Body<'_>, object_only: bool, redactor: &Redactor, out: &mut Vec<u8>) {
    match body {
        Body::Flat(f) => redactor.write_flat(f, out),
        Body::Value(v @ Value::Object(_)) => redactor.write_value(v, out),
        Body::Value(v) if !object_only => redactor.write_value(v, out),
        Body::Value(_) | Body::Empty => out.extend_from_slice(b"{}"),
    }
}

/// Caps, redacts and serialises an event (a queued record's [`parts`](crate::record::Queued::parts), or what
/// `before_send` returned) as one compact event object, appended to `out`.
///
/// Written by hand rather than through a `Serialize` struct: the values are measured, redacted
/// and written in one walk ([`Redactor::write_value`]), and strings without escapes are copied
/// whole. Keys follow the contract's order; optional keys are omitted.
///
/// The call id is drawn here, on the flusher, rather than on the calling thread: it only has to
/// be unique, and an event is encoded once (a retry resends the same bytes).
pub(crate) fn encode(
    parts: EventParts<'_>,
    call_id: uuid::Uuid,
    redactor: &Redactor,
    out: &mut Vec<u8>,
) -> Result<(), Invalid> {
    let EventParts { tool_name, arguments, outcome, timestamp_ms, duration_ms, intent, user_id, user_email } = parts;
    // A registered tool's name is a validated name; an unknown one (a call of a tool the server
    // does not have) is whatever the agent sent.
    let is_unknown = matches!(&outcome, Ended::Failed(CallOutcome::Error { reason: Some(r), .. }) if r == UNKNOWN_TOOL);
    let unknown;
    let tool_name = if is_unknown {
        unknown = redactor.unknown_tool_name(tool_name);
        &*unknown
    } else {
        tool_name
    };
    // Settled by its first byte unless that is whitespace or not ASCII (`is_blank`).
    if is_blank(tool_name) {
        return Err(Invalid::EmptyToolName);
    }
    // Hex digits and hyphens: nothing to escape.
    let id = &hyphenated_lower(&call_id);
    if needs_escape(tool_name.as_bytes()) {
        write_parts(out, [b"{\"callId\":\"", id, b"\",\"toolName\":"]);
        write_escaped(out, tool_name);
        out.extend_from_slice(b",\"arguments\":");
    } else {
        write_parts(out, [b"{\"callId\":\"", id, b"\",\"toolName\":\"", tool_name.as_bytes(), b"\",\"arguments\":"]);
    }
    write_body(arguments, true, redactor, out);
    let is_error = matches!(&outcome, Ended::Failed(o) if o.is_error());
    out.extend_from_slice(if is_error {
        b",\"isError\":true,\"timestamp\":"
    } else {
        b",\"isError\":false,\"timestamp\":"
    });
    write_number(out, timestamp_ms);
    out.extend_from_slice(b",\"durationMs\":");
    write_number(out, duration_ms);
    // `intentSource` only travels with an intent; an error's reason never travels.
    match outcome {
        Ended::Success(result) => {
            out.extend_from_slice(b",\"result\":");
            write_body(result, false, redactor, out);
        }
        Ended::Failed(CallOutcome::Success { .. }) | Ended::Failed(CallOutcome::Error { message: None, .. }) => {}
        Ended::Failed(CallOutcome::Error { message: Some(message), .. }) => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
        // A cancelled or timed-out call is an error event whose message says so
        // (docs/wire-format.md#errors).
        Ended::Failed(CallOutcome::Cancelled { message } | CallOutcome::TimedOut { message, .. }) => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
    }
    if let Some((text, source)) = intent {
        out.extend_from_slice(b",\"intent\":");
        redactor.write_text(text, out);
        // A fixed word: nothing to escape.
        write_parts(out, [b",\"intentSource\":\"", source.as_str().as_bytes(), b"\""]);
    }
    if let Some(user_id) = user_id {
        out.extend_from_slice(b",\"userId\":");
        write_str(out, user_id);
    }
    if let Some(user_email) = user_email {
        out.extend_from_slice(b",\"userEmail\":");
        write_str(out, user_email);
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

/// A payload as its parts (head, events, commas, tail), read in order rather than joined first:
/// the transport copies it once, into its send buffer, instead of twice plus a payload-sized
/// allocation.
pub(crate) struct Payload<'a> {
    parts: Vec<&'a [u8]>,
    len: usize,
    /// Read position: the part, and the offset in it.
    next: usize,
    offset: usize,
}

impl<'a> Payload<'a> {
    pub(crate) fn new(head: &'a [u8], events: impl ExactSizeIterator<Item = &'a [u8]>) -> Self {
        let mut parts = Vec::with_capacity(2 * events.len() + 1);
        parts.push(head);
        // Measured as the parts are laid out, rather than in a second pass over them.
        let mut len = head.len() + PAYLOAD_TAIL.len();
        for (i, e) in events.enumerate() {
            if i > 0 {
                parts.push(&b","[..]);
                len += 1;
            }
            parts.push(e);
            len += e.len();
        }
        parts.push(PAYLOAD_TAIL);
        Payload { parts, len, next: 0, offset: 0 }
    }

    /// The whole payload's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole payload, joined.
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.len);
        for p in &self.parts {
            body.extend_from_slice(p);
        }
        body
    }
}

impl std::io::Read for Payload<'_> {
    /// Fills `buf` as far as the payload goes: the transport writes to the socket once per fill.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while let Some(part) = self.parts.get(self.next) {
            let rest = &part[self.offset..];
            let k = rest.len().min(buf.len() - n);
            if k == 1 {
                // Mostly a comma: not worth a call to memcpy.
                buf[n] = rest[0];
            } else {
                buf[n..n + k].copy_from_slice(&rest[..k]);
            }
            n += k;
            if k < rest.len() {
                self.offset += k;
                break;
            }
            self.next += 1;
            self.offset = 0;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::markers;
    use crate::contract::MAX_VALUE_DEPTH;
    use crate::model::record::{CallRecord, IntentSource};
    use crate::record::Queued;
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
        let mut p = Queued::new(record, None, Some("c@x.io".into()), Vec::new());
        let mut out = Vec::new();
        super::encode(p.parts(), call_id, &Redactor::new(false, &[]), &mut out)
            .map(|()| String::from_utf8(out).unwrap())
    }

    /// The padding read past a record's last value changes nothing: each record encodes the same
    /// with its buffer cut to its length (no padding) and with room to spare (padded).
    #[test]
    fn records_encode_the_same_padded_or_not() {
        let ends = [
            json!({"q": "x", "password": "hunter2"}),
            json!({"note": "mail a@b.co"}),
            json!({"card": "4111 1111 1111 1111"}),
            json!({"k": "line\nbreak \"quoted\""}),
            json!({"clé": "café", "TOKEN": 1}),
            json!({"a_key_longer_than_one_block_of_32_bytes": "v", "sk": "sk-abcdefghijklmnopqrstu"}),
            json!({"x": [1, 2.5, null, true, {"apiKey": ["s"]}], "bearer": "Bearer abcdefghijklmnop"}),
            json!({"s": "eyJhbGciOiJIUzI1NiJ9.e30.x", "g": "ghp_abcdefghijklmnop", "id": "AKIAABCDEFGHIJKLMNOP"}),
        ];
        let call_id = uuid::Uuid::from_u128(7);
        for redact in [false, true] {
            let redactor = Redactor::new(redact, &["note".to_owned()]);
            for end in &ends {
                let encoded = |spare: usize| {
                    let mut r = record();
                    r.arguments = end.clone();
                    r.outcome = CallOutcome::Success { result: end.clone() };
                    r.intent = None;
                    let mut q = Queued::new(r, None, None, Vec::new());
                    q.bytes_mut().shrink_to_fit();
                    q.bytes_mut().reserve_exact(spare);
                    let content = q.bytes_mut().len();
                    let mut out = Vec::new();
                    super::encode(q.parts(), call_id, &redactor, &mut out).unwrap();
                    let padding = if spare >= crate::json::BLOCK { crate::json::BLOCK } else { 0 };
                    assert_eq!(q.bytes_mut().len(), content + padding, "padded within the capacity only");
                    String::from_utf8(out).unwrap()
                };
                let (bare, padded) = (encoded(0), encoded(64));
                assert_eq!(padded, bare, "redact {redact}");
            }
        }
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

    /// A record crosses to the flusher by value (moved about 4 times on each thread): at most 256
    /// bytes are copied without memcpy's loop.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn records_are_moved_in_256_bytes() {
        assert!(std::mem::size_of::<Queued>() <= 256, "{}", std::mem::size_of::<Queued>());
        assert!(std::mem::size_of::<Result<Queued, crossbeam_channel::TryRecvError>>() <= 256);
    }

    #[test]
    fn empty_tool_name_is_invalid() {
        for blank in ["", " ", "\t\n", "\u{3000}\u{a0}"] {
            let mut r = record();
            r.tool_name = blank.into();
            assert_eq!(encode(r), Err(Invalid::EmptyToolName), "{blank:?}");
        }
        for name in [" search", "\u{3000}search", "é"] {
            let mut r = record();
            r.tool_name = name.into();
            assert!(encode(r).is_ok(), "{name:?}");
        }
    }

    #[test]
    fn payload_wraps_events() {
        let head = payload_head("proj", &Identity::new().client("c/1").server_version(3), None);
        let body = Payload::new(&head, [&b"{}"[..], &b"{\"a\":1}"[..]].into_iter()).to_vec();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"projectId\":\"proj\",\"identity\":{\"client\":\"c/1\",\"serverVersion\":\"3\"},\"events\":[{},{\"a\":1}]}"
        );
        let empty = payload_head("p", &Identity::new(), None);
        assert_eq!(String::from_utf8(empty).unwrap(), "{\"projectId\":\"p\",\"identity\":{},\"events\":[");
    }

    #[test]
    fn payload_reads_as_joined_whatever_the_buffer_size() {
        use std::io::Read;
        let head = payload_head("proj", &Identity::new().client("c/1"), None);
        let events: Vec<Vec<u8>> = (0..40).map(|i| format!("{{\"n\":{}}}", "7".repeat(i * 13)).into_bytes()).collect();
        for n in [0, 1, 2, 40] {
            // The body as it was built before it was streamed: head, events joined by commas, tail.
            let mut joined = head.clone();
            joined.extend_from_slice(&events[..n].join(&b","[..]));
            joined.extend_from_slice(PAYLOAD_TAIL);
            let whole = Payload::new(&head, events[..n].iter().map(Vec::as_slice));
            assert_eq!(whole.len(), joined.len());
            assert_eq!(whole.to_vec(), joined);
            for size in [1, 2, 3, 7, 64, 1000, 1 << 17] {
                let mut payload = Payload::new(&head, events[..n].iter().map(Vec::as_slice));
                let (mut read, mut buf) = (Vec::new(), vec![0; size]);
                loop {
                    let k = payload.read(&mut buf).unwrap();
                    if k == 0 {
                        break;
                    }
                    assert!(k == size || read.len() + k == joined.len(), "a read fills the buffer unless at the end");
                    read.extend_from_slice(&buf[..k]);
                }
                assert_eq!(read, joined, "{n} events, reads of {size}");
            }
        }
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
