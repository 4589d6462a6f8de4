//! Many identities against a slow ingest: the wall time to deliver 2 000 events when they come
//! from 200 clients (10 each, one payload per client on the wire), beside the same 2 000 events
//! from one client, both against a loopback ingest that takes 40 ms per POST and serves requests
//! concurrently (`IngestReceiver`, one thread per connection).
//!
//! `cargo bench --bench identities [-- REPS]`

mod common;

use common::{median, result};
use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{CallOutcome, CallRecord, ClientInfo, Config, Tracker};
use std::sync::Arc;
use std::time::{Duration, Instant};

const EVENTS: usize = 2_000;
const INGEST_DELAY: Duration = Duration::from_millis(40);

/// Wall time (ms) from the first record to the flush that delivered all `EVENTS`, spread over
/// `clients` identities.
fn deliver(clients: usize) -> f64 {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::ok().delay(INGEST_DELAY));
    let tracker = Tracker::new(Config::new("bench").ingest_url(ingest.url()).on_error(|_| {})).unwrap();
    let names: Vec<Arc<ClientInfo>> =
        (0..clients).map(|c| Arc::new(ClientInfo::new(format!("client-{c}"), "1.0"))).collect();
    let start = Instant::now();
    for i in 0..EVENTS {
        let mut record = CallRecord::new(
            "search",
            serde_json::json!({"i": i}),
            CallOutcome::Success { result: serde_json::json!({"content": []}) },
        );
        record.client = Some(names[i % clients].clone());
        tracker.record(record);
    }
    let report = tracker.flush(Duration::from_secs(120));
    let wall = start.elapsed().as_secs_f64() * 1e3;
    assert!(report.completed && report.stats.sent == EVENTS as u64, "{report:?}");
    let posts = ingest.requests().len();
    tracker.shutdown(Duration::from_secs(2));
    eprintln!("{clients:>4} identities: {EVENTS} events in {posts} POSTs, delivered in {wall:.0} ms");
    wall
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let reps = args.first().copied().unwrap_or(if common::full_run() { 5 } else { 1 });
    for clients in [1, 200] {
        let mut walls: Vec<f64> = (0..reps).map(|_| deliver(clients)).collect();
        let wall = median(&mut walls);
        let rate = EVENTS as f64 / (wall / 1e3);
        eprintln!("{clients:>4} identities: median {wall:.0} ms, {rate:.0} events/s");
        result(&format!("identities.{clients}.deliver_2k_ms"), format!("{wall:.0}"));
        result(&format!("identities.{clients}.events_per_s"), format!("{rate:.0}"));
    }
}
