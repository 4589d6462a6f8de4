//! The calling thread's side of a call: route it, strip the intent, run the handler and build
//! its one [`CallRecord`](record::CallRecord). Nothing here serialises, redacts or waits on the
//! network; the record is moved to the [`delivery`](crate::delivery) side.

// Only the rmcp integration answers `input_required`; without it no round is ever opened.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) mod ask;
pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod dispatch;
pub(crate) mod manifest;
pub(crate) mod record;
pub(crate) mod result;
pub(crate) mod schema;
pub(crate) mod telemetry;
pub(crate) mod tool;
