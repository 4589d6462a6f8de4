//! Who asked, per call, over stateless Streamable HTTP: `examples/http_server --stateless
//! --user-header x-demo-user` names each call's `userId` from that header of its own HTTP
//! request, through `Config::identify` and `RequestInfo`. Three official Python clients, each
//! sending its own user in the header, call at the same time in one era; at the ingest, no
//! event carries another client's user.
//!
//! Every call's intent carries a mark naming its client, so each event says who really made
//! it. Without `python3` the tests say so and pass.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Calls per client, and calls each client keeps in flight at once.
const CALLS: usize = 60;
const IN_FLIGHT: usize = 10;
const HEADER: &str = "x-demo-user";

/// The user a client sends in its header.
fn user_of(client: &str) -> String {
    format!("user-of-{client}")
}

/// A client that sends its user in every request's header, with `CALLS` marked calls.
fn client(name: &str) -> Value {
    let calls: Vec<Value> = (0..CALLS)
        .map(|i| {
            let intent = format!("[{name} #{i}] The user compares the weather of their trip with a friend.");
            json!({"tool": "get_forecast", "arguments": {"city": "Porto", "days": 1 + i % 7, "mcpeyeIntent": intent}})
        })
        .collect();
    json!({"name": name, "version": "1.0.0", "headers": {HEADER: user_of(name)}, "calls": calls})
}

/// Three clients in `mode` at once against a stateless server reading users from the header.
fn three_users(test: &str, mode: &str, prefix: &str) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, &["--stateless", "--user-header", HEADER]);
    let names: Vec<String> = ["alpha", "bravo", "charlie"].iter().map(|n| format!("{prefix}-{n}")).collect();
    let job = json!({
        "server": {"url": server.url},
        "mode": mode,
        "concurrency": IN_FLIGHT,
        "clients": names.iter().map(|n| client(n)).collect::<Vec<_>>(),
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    server.terminate();
    for c in report["clients"].as_array().expect("clients") {
        let results = c["results"].as_array().expect("results");
        assert_eq!(results.len(), CALLS);
        assert!(results.iter().all(|r| r["isError"] == false), "a call failed: {c}");
    }

    let (mut foreign, mut total) = (0, 0);
    let mut per_user: BTreeMap<String, usize> = BTreeMap::new();
    for post in posts(&ingest) {
        for e in &post.events {
            total += 1;
            let intent = e["intent"].as_str().unwrap_or_else(|| panic!("an event without intent: {e:#}"));
            let real = intent.strip_prefix('[').and_then(|s| s.split(" #").next()).expect("a marked intent");
            let user = e["userId"].as_str().unwrap_or("(none)").to_owned();
            if user != user_of(real) {
                foreign += 1;
            }
            *per_user.entry(user).or_default() += 1;
        }
    }
    assert_eq!(foreign, 0, "{foreign} of {total} events under another user; per userId: {per_user:?}\n{log}");
    for name in &names {
        assert_eq!(per_user.get(&user_of(name)), Some(&CALLS), "events of {name}: {per_user:?}\n{log}");
    }
    assert_eq!(total, CALLS * names.len(), "{per_user:?}");
}

#[test]
fn header_users_of_concurrent_2026_07_28_clients_are_theirs_per_call() {
    three_users("header_users_of_concurrent_2026_07_28_clients_are_theirs_per_call", "auto", "u-auto");
}

#[test]
fn header_users_of_concurrent_handshake_era_clients_are_theirs_per_call() {
    three_users("header_users_of_concurrent_handshake_era_clients_are_theirs_per_call", "legacy", "u-legacy");
}
