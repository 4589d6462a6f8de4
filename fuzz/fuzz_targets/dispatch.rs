//! Arbitrary bytes as a tool call: the dispatcher never panics (the tools here do not), always
//! answers a `CallToolResult` object and records exactly one event per call. (JSON-RPC framing
//! is rmcp's: mcpeye no longer has a JSON-RPC core of its own to fuzz.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpeye::{Manifest, Tracker};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Look products up by free text.
#[mcpeye::tool(read_only)]
fn search(
    /// Words to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
) -> Result<String, String> {
    if query.is_empty() {
        return Err("empty query".to_owned());
    }
    Ok(format!("{} result(s)", limit.unwrap_or(3)))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    /// Street and number.
    street: String,
    /// Postal code.
    zip: u32,
}

/// Save a contact.
#[mcpeye::tool]
fn save_contact(
    /// The contact's name.
    name: String,
    /// Where they live.
    address: Address,
    /// Labels.
    tags: Vec<String>,
) -> String {
    format!("saved {} tag(s), {} chars of street, zip {}", tags.len(), address.street.len() + name.len(), address.zip)
}

/// Store a JSON document.
#[mcpeye::tool]
fn store(
    /// Any JSON.
    doc: Value,
) -> Value {
    serde_json::json!({"kind": if doc.is_object() { "object" } else { "other" }})
}

/// Ping, without arguments.
#[mcpeye::tool]
fn ping() -> &'static str {
    "pong"
}

static RECORDS: AtomicUsize = AtomicUsize::new(0);

fn manifest() -> &'static Arc<Manifest> {
    static M: OnceLock<Arc<Manifest>> = OnceLock::new();
    M.get_or_init(|| {
        let tracker = Tracker::from_fn(|_| {
            RECORDS.fetch_add(1, Ordering::SeqCst);
        });
        Arc::new(
            Manifest::builder().tools(mcpeye::tool_defs![search, save_contact, store, ping]).tracker(tracker).build(),
        )
    })
}

const TOOLS: [&str; 6] = ["search", "save_contact", "store", "ping", "mcpeye_request_capability", "nope"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let arguments = serde_json::from_slice::<Value>(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let before = RECORDS.load(Ordering::SeqCst);
    let out = manifest().call(TOOLS[pick as usize % TOOLS.len()], arguments);
    assert_eq!(RECORDS.load(Ordering::SeqCst), before + 1, "one record per call");
    assert!(out.get("content").is_some_and(Value::is_array), "not a CallToolResult: {out}");
});
