//! A call's record on the calling thread: the call from its start to its end ([`TrackedCall`]), then
//! the record that crosses to the flusher thread ([`Queued`]), its values flattened into one
//! buffer taken from a pool the flusher refills.

mod call;
mod flat_result;
mod queued;

pub(crate) use call::{Arguments, TrackedCall};
pub(crate) use flat_result::flatten_result;
#[cfg(feature = "rmcp")]
pub(crate) use flat_result::flatten_texts;
pub(crate) use queued::*;
