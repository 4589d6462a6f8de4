//! The Intent Gap summary over events captured for real: through a `MemorySink`, through the
//! `IngestReceiver`, and from a JSON Lines file of the payloads it received.

use mcpeye::report::IntentGap;
use mcpeye::testing::{IngestReceiver, MemorySink};
use mcpeye::{Config, Manifest, Tracker};
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// Order a product by SKU.
#[mcpeye::tool]
fn order(
    /// The product's SKU.
    sku: String,
) -> Result<String, String> {
    if sku == "MUG-BLU" {
        return Err("MUG-BLU is out of stock".to_owned());
    }
    Ok(format!("ordered {sku}"))
}

fn session(tracker: &Tracker) {
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![order]).tracker(tracker.clone()).build();
    manifest.call("order", json!({"sku": "MUG-RED", "mcpeyeIntent": "The user orders a red mug."}));
    manifest.call("order", json!({"sku": "MUG-BLU", "mcpeyeIntent": "The user wants a blue mug for a gift."}));
    manifest.call("order", json!({"sku": "MUG-BLU"}));
    manifest.call("refund", json!({"order": 1}));
    for (capability, context) in [("Track my parcel", "waiting for a gift"), ("track my parcel.", "")] {
        manifest.call("mcpeye_request_capability", json!({"capability": capability, "context": context}));
    }
}

fn check(gap: &IntentGap) {
    assert_eq!(gap.calls, 6, "{gap}");
    assert_eq!(gap.capability_requests.len(), 1, "{gap}");
    assert_eq!(
        (gap.capability_requests[0].capability.as_str(), gap.capability_requests[0].count),
        ("Track my parcel", 2)
    );
    assert_eq!(gap.capability_requests[0].contexts, ["waiting for a gift"]);
    assert_eq!(gap.tools.len(), 1);
    let order = &gap.tools[0];
    assert_eq!((order.calls, order.errors, order.calls_with_intent()), (3, 2, 2));
    assert_eq!(gap.failed_intents.len(), 1);
    assert_eq!(gap.failed_intents[0].intent, "The user wants a blue mug for a gift.");
    assert_eq!(gap.failed_intents[0].error.as_deref(), Some("MUG-BLU is out of stock"));
    assert_eq!(gap.unknown_tools[0].name, "refund");
    let shown = gap.to_string();
    assert!(shown.contains("Track my parcel") && shown.contains("MUG-BLU is out of stock"), "{shown}");
}

#[test]
fn from_a_memory_sink() {
    let (tracker, sink) = MemorySink::new();
    session(&tracker);
    assert!(tracker.flush(Duration::from_secs(10)).completed);
    check(&IntentGap::from_events(&sink.events()));
    check(&IntentGap::from_payloads(&sink.payloads()));
}

#[test]
fn from_the_ingest_receiver_and_a_json_lines_file_read_twice() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(Config::new("gap").ingest_url(ingest.url())).unwrap();
    session(&tracker);
    assert!(tracker.shutdown(Duration::from_secs(10)).completed);
    check(&IntentGap::from_events(&ingest.events()));

    // A file holding every payload twice (as an at-least-once delivery may): each call counts once.
    let path = std::env::temp_dir().join(format!("mcpeye-gap-{}.jsonl", std::process::id()));
    let mut file = std::fs::File::create(&path).unwrap();
    for _ in 0..2 {
        for r in ingest.requests() {
            file.write_all(&r.body).unwrap();
            file.write_all(b"\n").unwrap();
        }
    }
    drop(file);
    let gap = IntentGap::from_json_lines(std::io::BufReader::new(std::fs::File::open(&path).unwrap())).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(gap.duplicates, 6);
    check(&gap);
    assert_eq!(gap.to_json()["capabilityRequests"][0]["count"], 2);
}
