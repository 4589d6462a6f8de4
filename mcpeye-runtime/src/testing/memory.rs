//! [`MemorySink`]: a transport that keeps payloads in memory.

use crate::config::Config;
use crate::flush::encode::Payload;
use crate::flush::transport::{IngestTransport, PostAnswer};
use crate::{ConfigError, Tracker};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The payloads a [`Tracker`] produced, kept in memory instead of being POSTed. Every payload
/// is accepted. Read it after [`Tracker::flush`].
///
/// [`MemorySink::new`] returns the tracker and its sink as a pair; give the tracker to a
/// manifest with [`ManifestBuilder::tracker`](crate::ManifestBuilder::tracker):
///
/// ```
/// use mcpeye::{testing::MemorySink, Manifest};
/// use std::time::Duration;
///
/// let (tracker, sink) = MemorySink::new();
/// let manifest = Manifest::builder().tracker(tracker.clone()).build();
/// let args = serde_json::json!({"capability": "export as CSV", "context": "yearly accounts"});
/// manifest.call("mcpeye_request_capability", args);
/// assert!(tracker.flush(Duration::from_secs(5)).completed);
///
/// let events = sink.events(); // every payload's `events`, in order
/// assert_eq!(events[0]["toolName"], "mcpeye_request_capability");
/// assert_eq!(events[0]["arguments"]["capability"], "export as CSV");
/// assert_eq!(sink.payloads()[0]["projectId"], "test-project"); // each payload, parsed
/// assert_eq!(sink.bodies().len(), 1); // each payload's bytes, as sent
/// sink.clear();
/// assert!(sink.events().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

struct MemoryTransport(MemorySink);

impl IngestTransport for MemoryTransport {
    fn send(&self, body: Payload<'_>, _timeout: Duration) -> PostAnswer {
        self.0.bodies.lock().unwrap_or_else(|e| e.into_inner()).push(body.to_vec());
        PostAnswer::Sent
    }
}

impl MemorySink {
    /// A tracker for project `test-project` with the default options, and the sink that
    /// receives its payloads: `(Tracker, MemorySink)`, not a sink alone.
    ///
    /// ```
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// assert!(tracker.flush(std::time::Duration::from_secs(1)).completed);
    /// assert!(sink.events().is_empty());
    /// ```
    #[allow(clippy::new_ret_no_self)]
    pub fn new() -> (Tracker, MemorySink) {
        match MemorySink::with_config(Config::new("test-project")) {
            Ok(pair) => pair,
            // Only a failure to start a thread gets here.
            Err(e) => panic!("{e}"),
        }
    }

    /// A tracker with this configuration (the ingest URL and secret are ignored), and its sink.
    ///
    /// ```
    /// use mcpeye::{testing::MemorySink, Config};
    ///
    /// let (_tracker, _sink) = MemorySink::with_config(Config::new("my-project").denylist_fields(["ssn"])).unwrap();
    /// assert!(MemorySink::with_config(Config::new("")).is_err()); // an empty project id
    /// ```
    pub fn with_config(config: Config) -> Result<(Tracker, MemorySink), ConfigError> {
        let mut resolved = config.resolve_with(|_| None)?;
        resolved.url_defaulted = false;
        resolved.insecure = false;
        let sink = MemorySink::default();
        let tracker = Tracker::with_transport(config, resolved, Box::new(MemoryTransport(sink.clone())))?;
        Ok((tracker, sink))
    }

    /// Each payload's body, as sent.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("export_csv", serde_json::json!({}));
    /// tracker.flush(Duration::from_secs(5));
    /// assert!(sink.bodies()[0].starts_with(b"{"));
    /// ```
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.bodies.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Each payload, parsed.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("export_csv", serde_json::json!({}));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(sink.payloads()[0]["events"][0]["toolName"], "export_csv");
    /// ```
    pub fn payloads(&self) -> Vec<Value> {
        self.bodies().iter().filter_map(|b| serde_json::from_slice(b).ok()).collect()
    }

    /// The events of every payload, in order.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("export_csv", serde_json::json!({}));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(sink.events()[0]["isError"], true);
    /// ```
    pub fn events(&self) -> Vec<Value> {
        events_of(self.payloads())
    }

    /// Forgets what was received so far.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("export_csv", serde_json::json!({}));
    /// tracker.flush(Duration::from_secs(5));
    /// sink.clear();
    /// assert!(sink.payloads().is_empty());
    /// ```
    pub fn clear(&self) {
        self.bodies.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

pub(crate) fn events_of(payloads: impl IntoIterator<Item = Value>) -> Vec<Value> {
    payloads
        .into_iter()
        .filter_map(|mut p| match p.get_mut("events").map(Value::take) {
            Some(Value::Array(events)) => Some(events),
            _ => None,
        })
        .flatten()
        .collect()
}
