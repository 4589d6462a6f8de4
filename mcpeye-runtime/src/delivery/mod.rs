//! The flusher's side: the [`Tracker`](tracker::Tracker) hands each record over a channel to
//! one background thread, which caps, redacts and encodes it, batches events and POSTs them
//! to the ingest API with retries. Stats and diagnostics report what happened to every event.

pub(crate) mod before_send;
pub(crate) mod call_id;
pub(crate) mod diagnostics;
pub(crate) mod flusher;
pub(crate) mod outbox;
pub(crate) mod redact;
pub(crate) mod stats;
pub(crate) mod tracker;
pub(crate) mod transport;
pub(crate) mod wire;
