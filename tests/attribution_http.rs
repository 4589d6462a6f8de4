//! Attribution per call over Streamable HTTP: several clients with different `clientInfo` call
//! `examples/http_server` at the same time, hundreds of interleaved calls, through the official
//! clients. At the ingest: no event in a POST whose `identity.client` names another client, and
//! each client's events are exactly its calls (each once).
//!
//! Every call's intent carries a mark naming its client and its index, so each event says who
//! really made it. Without `python3` (or `node`, for the mixed test) the tests say so and pass.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Calls per client, and calls each client keeps in flight at once.
const CALLS: usize = 150;
const IN_FLIGHT: usize = 10;

/// The mark of call `i` of `client` (a client name: letters and dashes).
fn mark(client: &str, i: usize) -> String {
    format!("[{client} #{i}]")
}

/// `n` calls alternating the two tools, each marked with `client` and its index.
fn calls(client: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let intent = format!("{} The user compares the weather of their trip with a friend.", mark(client, i));
            if i % 2 == 0 {
                json!({"tool": "get_forecast", "arguments": {"city": "Porto", "days": 1 + i % 7, "mcpeyeIntent": intent}})
            } else {
                json!({"tool": "convert_temperature", "arguments": {"value": i, "unit": "C", "mcpeyeIntent": intent}})
            }
        })
        .collect()
}

/// A client of a job: its name (version "1.0.0") and its calls, optionally with its own mode.
fn client(name: &str, mode: Option<&str>) -> Value {
    let mut c = json!({"name": name, "version": "1.0.0", "calls": calls(name, CALLS)});
    if let Some(mode) = mode {
        c["mode"] = json!(mode);
    }
    c
}

/// The client name in an event's mark.
fn marked_client(event: &Value) -> String {
    let intent = event["intent"].as_str().unwrap_or_else(|| panic!("an event without intent: {event:#}"));
    let inner = intent.strip_prefix('[').and_then(|s| s.split(" #").next());
    inner.unwrap_or_else(|| panic!("an event without a mark: {event:#}")).to_owned()
}

/// Checks the ingest after every client of `clients` made its `CALLS` calls. A client is
/// `(name, known)`: `known` when the server can know who it is (its own `name/1.0.0` is then
/// expected on its events), not for a handshake-era client of a stateless server, which names
/// itself only in `initialize` (its events then carry no client, and never another's name).
fn assert_attributed(ingest: &IngestReceiver, clients: &[(&str, bool)], server_log: &str) {
    let posts = posts(ingest);
    let expected = |name: &str| -> Option<String> {
        let (_, known) = clients.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("unknown client {name}"));
        known.then(|| format!("{name}/1.0.0"))
    };
    let total: usize = posts.iter().map(|p| p.events.len()).sum();
    let (mut foreign, mut mixed_posts) = (0, 0);
    let mut per_client: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for p in &posts {
        let mut mixed = false;
        for e in &p.events {
            let real = marked_client(e);
            if expected(&real) != p.client {
                foreign += 1;
                mixed = true;
            }
            per_client.entry(real).or_default().push(e.clone());
        }
        mixed_posts += usize::from(mixed);
    }
    let summary = || {
        let by_identity: BTreeMap<String, usize> = posts.iter().fold(BTreeMap::new(), |mut m, p| {
            *m.entry(p.client.clone().unwrap_or_else(|| "(no client)".into())).or_default() += p.events.len();
            m
        });
        format!(
            "{foreign} of {total} events shipped under another identity.client than their own; {mixed_posts} of {} \
             POSTs affected; events per identity.client: {by_identity:?}\nserver stderr:\n{server_log}",
            posts.len()
        )
    };
    assert_eq!(foreign, 0, "{}", summary());
    for (name, _) in clients {
        let events = per_client.remove(*name).unwrap_or_default();
        let marks: HashSet<String> = events.iter().map(|e| e["intent"].as_str().unwrap().to_owned()).collect();
        assert_eq!(events.len(), CALLS, "events of {name} at the ingest; {}", summary());
        assert_eq!(marks.len(), CALLS, "distinct calls of {name}; {}", summary());
        for i in 0..CALLS {
            let m = mark(name, i);
            assert!(events.iter().any(|e| e["intent"].as_str().unwrap().starts_with(&m)), "{m} is missing");
        }
    }
    assert!(per_client.is_empty(), "events of unknown clients: {per_client:?}");
}

/// The clients' own view: every call answered, in the expected era.
fn assert_answered(report: &Value, eras: &[Era]) {
    let clients = report["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), eras.len());
    for (c, era) in clients.iter().zip(eras) {
        let results = c["results"].as_array().expect("results");
        assert_eq!(results.len(), CALLS);
        assert!(results.iter().all(|r| r["isError"] == false), "a call failed: {c}");
        let version = c["protocolVersion"].as_str().unwrap_or_default();
        match era {
            Era::Modern => assert_eq!(version, MODERN, "negotiated protocol version"),
            Era::Handshake => {
                assert!(!version.is_empty() && version < MODERN, "a handshake-era version, got {version}")
            }
        }
    }
}

/// Three Python clients in one `mode`, all at once, against the server started with `args`.
fn three_python_clients(test: &str, server_args: &[&str], mode: &str, era: Era, prefix: &str) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, server_args);
    let names: Vec<String> = ["alpha", "bravo", "charlie"].iter().map(|n| format!("{prefix}-{n}")).collect();
    let job = json!({
        "server": {"url": server.url},
        "mode": mode,
        "concurrency": IN_FLIGHT,
        "clients": names.iter().map(|n| client(n, None)).collect::<Vec<_>>(),
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    server.terminate();
    assert_answered(&report, &[era; 3]);
    assert_attributed(&ingest, &names.iter().map(|n| (n.as_str(), true)).collect::<Vec<_>>(), &log);
}

#[test]
fn concurrent_clients_in_the_handshake_era_are_attributed_per_call() {
    three_python_clients(
        "concurrent_clients_in_the_handshake_era_are_attributed_per_call",
        &[],
        "legacy",
        Era::Handshake,
        "py-legacy",
    );
}

#[test]
fn concurrent_clients_in_2026_07_28_are_attributed_per_call() {
    three_python_clients(
        "concurrent_clients_in_2026_07_28_are_attributed_per_call",
        &[],
        "auto",
        Era::Modern,
        "py-auto",
    );
}

/// A stateless server (`--stateless`): two clients negotiating 2026-07-28 (each request names
/// its client) and one handshake-era client (which names itself only in `initialize`, answered by
/// a handler of its own: its calls carry no client), all at once.
#[test]
fn concurrent_clients_on_a_stateless_server_are_attributed_per_call() {
    let python = or_skip!(python_with_mcp("concurrent_clients_on_a_stateless_server_are_attributed_per_call"));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, &["--stateless"]);
    let job = json!({
        "server": {"url": server.url},
        "mode": "auto",
        "concurrency": IN_FLIGHT,
        "clients": [client("sl-auto-a", None), client("sl-auto-b", None), client("sl-legacy", Some("legacy"))],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    server.terminate();
    assert_answered(&report, &[Era::Modern, Era::Modern, Era::Handshake]);
    assert_attributed(&ingest, &[("sl-auto-a", true), ("sl-auto-b", true), ("sl-legacy", false)], &log);
}

/// Both eras and both SDKs on one server at once: two Python clients negotiating 2026-07-28, one
/// Python client with the handshake, and one TypeScript client (handshake).
#[test]
fn mixed_sdks_and_eras_at_once_are_attributed_per_call() {
    let test = "mixed_sdks_and_eras_at_once_are_attributed_per_call";
    let python = or_skip!(python_with_mcp(test));
    let (node, ts_driver) = or_skip!(node_with_sdk(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, &[]);
    let py_job = json!({
        "server": {"url": server.url},
        "mode": "auto",
        "concurrency": IN_FLIGHT,
        "clients": [client("mix-py-auto-a", None), client("mix-py-auto-b", None), client("mix-py-legacy", Some("legacy"))],
    });
    let ts_job = json!({
        "server": {"url": server.url},
        "concurrency": IN_FLIGHT,
        "clients": [client("mix-ts", None)],
    });
    let (py_report, ts_report) = std::thread::scope(|s| {
        let ts = s.spawn(|| drive(&node, &ts_driver, &ts_job, &[]));
        let py = drive(&python, &script("py_driver.py"), &py_job, &[]);
        (py, ts.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let log = server.stderr();
    server.terminate();
    assert_answered(&py_report, &[Era::Modern, Era::Modern, Era::Handshake]);
    assert_answered(&ts_report, &[Era::Handshake]);
    let clients = [("mix-py-auto-a", true), ("mix-py-auto-b", true), ("mix-py-legacy", true), ("mix-ts", true)];
    assert_attributed(&ingest, &clients, &log);
}
