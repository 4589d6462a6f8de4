//! A call's record on the calling thread: the call in flight ([`InFlight`]), then the record
//! that crosses to the flusher thread ([`Queued`]), its values flattened into one buffer taken
//! from a pool the flusher refills.

mod flat_result;
mod in_flight;
mod queued;

#[cfg(feature = "rmcp")]
pub(crate) use flat_result::flatten_texts;
pub(crate) use in_flight::InFlight;
pub(crate) use queued::*;
