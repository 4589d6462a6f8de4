//! The credential layer's text forms at the ingest (docs/wire-format.md#credentials): the name
//! of an unknown tool, secret keys written as text (`password: x`, `--password=x`, headers, a
//! JSON text inside a string) and line-wrapped base64, in arguments, results, error messages and
//! intents. Each secret is seeded through the public API and looked for in the events the
//! in-memory sink received; `Config::redact_credentials(false)` is the siblings' redaction.

use mcpeye::contract::markers;
use mcpeye::testing::MemorySink;
use mcpeye::{CallOutcome, CallRecord, Config, IntentSource, Manifest, Tracker};
use serde_json::{json, Value};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

/// Echo a text back.
#[mcpeye::tool]
fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

fn manifest(tracker: &Tracker) -> Manifest {
    Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build()
}

/// The events of `calls` made on a manifest with a tracker of `config`.
fn events_of(config: Config, calls: impl FnOnce(&Manifest)) -> Vec<Value> {
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    calls(&manifest(&tracker));
    assert!(tracker.flush(PATIENCE).completed);
    sink.events()
}

fn config() -> Config {
    Config::new("proj_forms")
}

/// A base64 blob of `lines` lines of `width` characters and a last line of `last` (with `==`),
/// from a fixed pseudo-random sequence.
fn wrapped_base64(lines: usize, width: usize, last: usize, newline: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char::from(ALPHABET[(x % 64) as usize])
    };
    let mut out: Vec<String> = (0..lines).map(|_| (0..width).map(|_| next()).collect()).collect();
    out.push((0..last).map(|_| next()).chain("==".chars()).collect());
    out.join(newline)
}

/// `(case, text, secret)`: every form the layer replaces, with the part that must not arrive.
fn seeded() -> Vec<(&'static str, String, String)> {
    let mime = wrapped_base64(6, 76, 30, "\r\n");
    let pem = format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----", wrapped_base64(4, 64, 20, "\n"));
    let cases: [(&str, String, &str); 23] = [
        ("colon", "password: hunter2".into(), "hunter2"),
        ("spaced_equals", "password = Xq9-swordfish".into(), "swordfish"),
        ("quoted_param", "\"password=Xq9-swordfish\"".into(), "swordfish"),
        ("bracketed_param", "(password=Xq9-swordfish)".into(), "swordfish"),
        ("backticked_param", "run `password=Xq9-swordfish`".into(), "swordfish"),
        ("command_line_flag", "psql --password=Xq9-swordfish -h db".into(), "swordfish"),
        ("x_api_key_header", "x-api-key: k-9f8e7d6c5b4a".into(), "9f8e7d6c5b4a"),
        ("cookie_header", "GET / HTTP/1.1\nCookie: session=s3ss10n-v4lue; theme=dark\nHost: x".into(), "s3ss10n-v4lue"),
        ("set_cookie_header", "Set-Cookie: sid=s3ss10n-v4lue; Path=/; HttpOnly".into(), "s3ss10n-v4lue"),
        ("aws_secret_ini", "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n".into(), "wJalrXUtnFEMI"),
        ("aws_secret_yaml", "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG".into(), "wJalrXUtnFEMI"),
        ("token_colon_any_case", "TOKEN: tok-live-4242".into(), "tok-live-4242"),
        (
            "authorization_digest",
            "Authorization: Digest username=bob, response=6629fae49393a053".into(),
            "6629fae49393a053",
        ),
        ("json_text_string", r#"{"user": "bob", "password": "hunter2-json"}"#.into(), "hunter2-json"),
        ("json_text_nested", r#"{"config": {"token": {"value": "tok-nested-77"}}}"#.into(), "tok-nested-77"),
        ("json_text_number", r#"[{"apiKey": 982734982734}]"#.into(), "982734982734"),
        ("json_text_escaped", r#"{\"secret\": \"s3cr3t-escaped\"}"#.into(), "s3cr3t-escaped"),
        // Compound key-like names, as the same object given as a JSON value is redacted.
        (
            "json_text_client_secret",
            r#"{"client_id": "app", "client_secret": "Zx8Qp2Lm9Rt4Vw7Yb1Nc"}"#.into(),
            "Zx8Qp2Lm9Rt4Vw7Yb1Nc",
        ),
        ("json_text_db_password", r#"{"db_password":"Xk29fLq8Zp0Rw7Vt3"}"#.into(), "Xk29fLq8Zp0Rw7Vt3"),
        ("json_text_camel_case", r#"{\"githubToken\": \"q8Zr2Kx9Lp4Wm7Vn3Bt6\"}"#.into(), "q8Zr2Kx9Lp4Wm7Vn3Bt6"),
        ("mime_wrapped_base64", format!("attachment:\r\n{mime}\r\n--boundary--"), ""),
        ("pem_wrapped_base64", pem, ""),
        ("yaml_indented_base64", format!("data:\n  blob: |\n    {}", wrapped_base64(3, 64, 10, "\n    ")), ""),
    ];
    cases
        .into_iter()
        .map(|(name, text, secret)| {
            // A blob's secret is its second line (the first may share a prefix with the header).
            let secret = if secret.is_empty() {
                text.lines().find(|l| l.trim().len() >= 64).expect("a blob line").trim().to_owned()
            } else {
                secret.to_owned()
            };
            (name, text, secret)
        })
        .collect()
}

/// Every form, as a string argument, a text result, an error message and an intent, reaches the
/// ingest without its secret; with the layer off the same text arrives as the siblings send it.
#[test]
fn text_forms_of_secret_keys_and_wrapped_base64_never_reach_the_ingest() {
    for (name, text, secret) in seeded() {
        let calls = |m: &Manifest| {
            let _ = m.call("echo", json!({ "text": text, "mcpeyeIntent": format!("checking {text}") }));
        };
        let events = events_of(config(), calls);
        assert_eq!(events.len(), 1, "{name}");
        let e = serde_json::to_string(&events[0]).unwrap();
        assert!(!e.contains(&secret), "{name}: {secret:?} reached the ingest: {e}");
        assert!(e.contains("[REDACTED_"), "{name}: no marker in {e}");
        let off = events_of(config().redact_credentials(false), calls);
        assert_eq!(off[0]["arguments"]["text"], *mcpeye::redact::redact_string(&text), "{name}");
    }
    // The error message and the failure's text, through a record.
    let (tracker, sink) = MemorySink::with_config(config()).unwrap();
    for (_, text, _) in seeded() {
        let mut r = CallRecord::new("echo", json!({ "text": text }), CallOutcome::error(text.clone()));
        r.intent = Some((text.clone(), IntentSource::Native));
        tracker.record(r);
    }
    assert!(tracker.flush(PATIENCE).completed);
    for ((name, _, secret), e) in seeded().into_iter().zip(sink.events()) {
        let e = serde_json::to_string(&e).unwrap();
        assert!(!e.contains(&secret), "{name}: {secret:?} reached the ingest: {e}");
    }
}

/// A JSON text inside a string keeps its shape: the denylisted key's value becomes the marker as
/// a JSON string, the rest stays, and the text still parses.
#[test]
fn json_text_in_a_string_keeps_its_shape() {
    let text = r#"{"user":"bob","password":"hunter2","nested":{"token":[1,2]},"n":3}"#;
    let events = events_of(config(), |m| {
        let _ = m.call("echo", json!({ "text": text }));
    });
    let arg = events[0]["arguments"]["text"].as_str().unwrap();
    let parsed: Value = serde_json::from_str(arg).unwrap_or_else(|e| panic!("{arg}: {e}"));
    assert_eq!(parsed, json!({"user": "bob", "password": markers::FIELD, "nested": {"token": markers::FIELD}, "n": 3}));
}

/// Ordinary text with the key words stays as it is.
#[test]
fn key_words_in_ordinary_text_stay() {
    let texts = [
        "max_tokens: 1024",
        "tokens: 12, passwords: none",
        "the secretary: Ann",
        "reset your password with the link",
        "see http://localhost:8080/health?id=3",
        r#"{"password_hint": "pet's name", "tokenizer": "bpe"}"#,
        "| name | value |\n|------|-------|\n| a    | b     |",
        "0123456789abcdef0123456789abcdef0123456789abcdef\n0123456789abcdef0123456789abcdef0123456789abcdef",
    ];
    for text in texts {
        let events = events_of(config(), |m| {
            let _ = m.call("echo", json!({ "text": text }));
        });
        assert_eq!(events[0]["arguments"]["text"], text, "{text}");
    }
}

/// `toolName` of a tool the server does not have is the agent's text: it is redacted like the
/// error message, and control and bidirectional formatting characters are removed; a registered
/// tool's name stays as it is.
#[test]
fn unknown_tool_names_are_redacted_and_cleaned() {
    let names = [
        ("sk_live_07elszGNU18fmtAHOV29gnuB", "07elszGNU18fmtAHOV29gnuB"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ", "0123456789abcdefghijABCDEFGHIJ"),
        ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
        ("postgres://admin:pw-Secret9@db.internal/x", "pw-Secret9"),
    ];
    let run = |config: Config| {
        events_of(config, |m| {
            for (name, _) in names {
                let _ = m.call(name, json!({}));
            }
            let _ = m.call("evil\u{0}\u{1b}[31m\u{202e}gnp.exe\u{2066}", json!({}));
            let _ = m.call("echo", json!({"text": "x"}));
        })
    };
    let events = run(config());
    assert_eq!(events.len(), names.len() + 2);
    for ((name, secret), e) in names.iter().zip(&events) {
        let tool = e["toolName"].as_str().unwrap();
        assert!(!tool.contains(secret), "{name}: toolName {tool}");
        assert!(tool.contains("[REDACTED_"), "{name}: toolName {tool}");
        let message = e["errorMessage"].as_str().unwrap();
        assert!(!message.contains(secret), "{name}: errorMessage {message}");
    }
    assert_eq!(events[names.len()]["toolName"], "evil[31mgnp.exe");
    assert_eq!(events[names.len() + 1]["toolName"], "echo");
    // With redaction off the names arrive as sent, but for the control characters.
    let off = run(config().redact(false));
    assert_eq!(off[0]["toolName"], names[0].0);
    assert_eq!(off[names.len()]["toolName"], "evil[31mgnp.exe");
}

/// What `before_send` sees of an unknown tool is already redacted, and an event it returns
/// unchanged is sent as it would have been.
#[test]
fn before_send_sees_the_redacted_unknown_tool_name() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let config = config().before_send(move |e| {
        s.lock().unwrap().push(e.tool_name.to_string());
        Some(e)
    });
    let events = events_of(config, |m| {
        let _ = m.call("sk_live_07elszGNU18fmtAHOV29gnuB\u{7}", json!({}));
    });
    assert_eq!(*seen.lock().unwrap(), [markers::KEY]);
    assert_eq!(events[0]["toolName"], markers::KEY);
}
