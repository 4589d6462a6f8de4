//! Test helpers: see what a call produced, with or without HTTP.
//!
//! - [`MemorySink::new`]: a [`Tracker`](crate::Tracker) and the [`MemorySink`] that keeps its
//!   payloads in memory, after the same caps, redaction and serialisation as the real ones.
//! - [`IngestReceiver`]: a loopback HTTP/1.1 ingest (std only) that records every request and
//!   answers as scripted: status codes, `Retry-After`, delays, silence, slow or broken answers.
//! - [`RecordingClient`]: an MCP client for handlers that take a [`Context`](crate::Context):
//!   records their progress and log messages, answers their sampling and elicitation requests.
//! - [`block_on`]: drive an async tool's call to completion on the current thread, for tools
//!   that need no tokio reactor or timer.
//!
//! Turn the `testing` feature on for tests only:
//!
//! ```toml
//! [dev-dependencies]
//! mcpeye = { path = "../mcpeye-rs", features = ["testing"] }
//! ```
//!
//! ```
//! use mcpeye::testing::MemorySink;
//! use std::time::Duration;
//!
//! let (tracker, sink) = MemorySink::new();
//! let result = serde_json::json!({"content": [{"type": "text", "text": "sunny"}]});
//! let outcome = mcpeye::CallOutcome::Success { result };
//! tracker.record(mcpeye::CallRecord::new("search", serde_json::json!({"q": "weather"}), outcome));
//! assert!(tracker.flush(Duration::from_secs(5)).completed);
//! assert_eq!(sink.events()[0]["toolName"], "search");
//! ```

mod client;
mod memory;
mod receiver;
pub mod redact;

use crate::tool::manifest::{Manifest, ManifestBuilder};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// Drops a JSON value without recursion. serde_json's own drop recurses once per nesting
/// level, so a value built in code 10 000 levels deep (parsed text stops at 128) would
/// overflow a test's stack when it goes out of scope.
///
/// ```
/// let mut v = serde_json::json!(1);
/// for _ in 0..100_000 {
///     v = serde_json::Value::Array(vec![v]);
/// }
/// mcpeye::testing::drop_deep(v);
/// ```
pub fn drop_deep(value: Value) {
    crate::redact::drop_flat(value);
}

/// Builds the manifest or fails the test with every problem listed, one per line (tool, where
/// it is defined, JSON path, rule, how to fix it). Call it from a `#[test]` of your own:
///
/// ```
/// use mcpeye::{testing::assert_manifest_valid, Manifest};
/// let manifest = assert_manifest_valid(Manifest::builder().registered());
/// assert!(manifest.captures_missing_capabilities());
/// ```
#[track_caller]
pub fn assert_manifest_valid(builder: ManifestBuilder) -> Manifest {
    match builder.try_build() {
        Ok(manifest) => manifest,
        Err(e) => panic!("{e}"),
    }
}

/// Fails the test when the manifest's `tools/list` costs more than `max_tokens` (`o200k_base`),
/// printing the per-tool table; returns the report otherwise. Features `testing` and `tokens`.
///
/// ```
/// use mcpeye::{testing::assert_token_budget, Manifest};
/// let report = assert_token_budget(&Manifest::builder().registered().build(), 20_000);
/// assert!(report.total() <= 20_000);
/// ```
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
#[track_caller]
pub fn assert_token_budget(manifest: &Manifest, max_tokens: usize) -> crate::report::TokenReport {
    let report = manifest.token_report();
    let total = report.total();
    if total > max_tokens {
        panic!(
            "the tool list costs {total} tokens, over the budget of {max_tokens} by {}:\n{report}",
            total - max_tokens
        );
    }
    report
}

pub use client::{RecordingClient, Sent};
/// Drives a future to completion on the current thread, for tests: the thread polls it and
/// parks until its waker is called.
///
/// It runs `Manifest::call_async` of tools that await only futures woken without a runtime:
/// a [`Context`](crate::Context)'s sampling and elicitation answered by a [`RecordingClient`],
/// `timeout_ms` (mcpeye times it on a thread of its own), `std`-based or `futures` channels.
/// It is not a tokio runtime: a future that needs tokio's timer or reactor
/// (`tokio::time::sleep`, tokio I/O, `tokio::spawn`) panics when polled here, with tokio's
/// "must be called from the context of a Tokio 1.x runtime". Test those tools under
/// `#[tokio::test]` with `.await` instead.
///
/// ```
/// use mcpeye::{testing::block_on, Manifest};
///
/// assert_eq!(block_on(async { 1 + 1 }), 2);
/// // An async call of the reserved tool, answered without any runtime.
/// let manifest = Manifest::builder().build();
/// let args = serde_json::json!({"capability": "export as CSV"});
/// let out = block_on(manifest.call_async("mcpeye_request_capability", args));
/// assert_eq!(out.get("isError"), None);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct UnparkOnWake(std::thread::Thread);
    impl Wake for UnparkOnWake {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(UnparkOnWake(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

pub use memory::MemorySink;
pub use receiver::{IngestReceiver, RecordedRequest, Reply};
