//! The flusher thread: the [`Tracker`](crate::Tracker) hands each record over a channel to one
//! background thread, which screens it (sampling, `before_send`), caps, redacts and encodes it,
//! logs it (with the intent `infer_intent` gives a call without one), batches events and POSTs
//! them to the ingest API with retries, keeping what it could not send in an outbox.

pub(crate) mod call_id;
pub(crate) mod encode;
pub(crate) mod event_log;
pub(crate) mod flusher;
pub(crate) mod infer;
pub(crate) mod outbox;
pub(crate) mod queues;
pub(crate) mod screen;
pub(crate) mod transport;
