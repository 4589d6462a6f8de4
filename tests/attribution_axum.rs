//! Who asked, per call, behind an app's own auth: `examples/axum_server` mounts rmcp's Streamable
//! HTTP service in an axum app whose middleware maps a bearer token to a user in the request's
//! extensions, where `Config::identify` reads it (`RequestInfo::http`). Two official Python
//! clients with different tokens, one in each protocol era, call at the same time; at the ingest
//! every event carries the user of the client that made it. A request without a valid token is
//! refused before rmcp. Without `python3` the Python test says so and passes.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// Calls per client, and calls each client keeps in flight at once.
const CALLS: usize = 30;
const IN_FLIGHT: usize = 5;

/// The example's demo tokens (`DEMO_TOKENS` in examples/axum_server.rs) and their users.
const ADA: (&str, &str) = ("demo-token-ada", "ada");
const GRACE: (&str, &str) = ("demo-token-grace", "grace");

/// A client in `mode` sending `token` on every request, with `CALLS` calls marked with its name.
fn client(name: &str, mode: &str, token: &str) -> Value {
    let calls: Vec<Value> = (0..CALLS)
        .map(|i| {
            let intent = format!("[{name} #{i}] The user plans a weekend trip.");
            json!({"tool": "get_forecast", "arguments": {"city": "Porto", "days": 1 + i % 7, "mcpeyeIntent": intent}})
        })
        .collect();
    let headers = json!({"authorization": format!("Bearer {token}")});
    json!({"name": name, "version": "1.0.0", "mode": mode, "headers": headers, "calls": calls})
}

#[test]
fn each_call_is_attributed_to_the_user_of_its_own_bearer_token() {
    let python = or_skip!(python_with_mcp("each_call_is_attributed_to_the_user_of_its_own_bearer_token"));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start_example("axum_server", &ingest, &[]);
    let job = json!({
        "server": {"url": server.url},
        "mode": "auto",
        "concurrency": IN_FLIGHT,
        "clients": [client("py-ada", "legacy", ADA.0), client("py-grace", "auto", GRACE.0)],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    server.terminate();
    let eras: Vec<&Value> =
        report["clients"].as_array().expect("clients").iter().map(|c| &c["protocolVersion"]).collect();
    assert_ne!(eras[0], eras[1], "one client per era: {report}");
    for c in report["clients"].as_array().unwrap() {
        let results = c["results"].as_array().expect("results");
        assert_eq!(results.len(), CALLS);
        assert!(results.iter().all(|r| r["isError"] == false), "a call failed: {c}");
    }

    let user_of = BTreeMap::from([("py-ada", ADA.1), ("py-grace", GRACE.1)]);
    let mut per_user: BTreeMap<String, usize> = BTreeMap::new();
    let mut foreign = Vec::new();
    for post in posts(&ingest) {
        for e in &post.events {
            let intent = e["intent"].as_str().unwrap_or_else(|| panic!("an event without intent: {e:#}"));
            let client = intent.strip_prefix('[').and_then(|s| s.split(" #").next()).expect("a marked intent");
            let user = e["userId"].as_str().unwrap_or("(none)").to_owned();
            if Some(&user.as_str()) != user_of.get(client) {
                foreign.push(format!("{client}: {user}"));
            }
            *per_user.entry(user).or_default() += 1;
        }
    }
    assert!(foreign.is_empty(), "events under another user: {foreign:?}; per userId: {per_user:?}\n{log}");
    assert_eq!(per_user, BTreeMap::from([(ADA.1.to_owned(), CALLS), (GRACE.1.to_owned(), CALLS)]), "{log}");
}

#[test]
fn a_request_without_a_valid_token_is_refused_before_rmcp() {
    let ingest = IngestReceiver::start();
    let server = HttpServer::start_example("axum_server", &ingest, &[]);
    let address = server.url.strip_prefix("http://").and_then(|a| a.strip_suffix("/mcp")).expect("host:port");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    for authorization in ["", "authorization: Bearer not-a-demo-token\r\n"] {
        let mut stream = std::net::TcpStream::connect(address).expect("connect");
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\n{authorization}content-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read");
        assert!(answer.starts_with("HTTP/1.1 401"), "{authorization:?} got: {answer}");
        assert!(answer.to_ascii_lowercase().contains("www-authenticate: bearer"), "{answer}");
    }
    server.terminate();
    assert!(posts(&ingest).iter().all(|p| p.events.is_empty()), "a refused request reached a tool");
}
