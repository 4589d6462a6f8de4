//! The call's data, as the serving layer and the handler make it: where a request came from
//! ([`Origin`](record::Origin), its [`ClientInfo`](record::ClientInfo) and cancellation), the
//! channel back to the client, how the call ended and its [`CallRecord`](record::CallRecord),
//! the tool's result, the event `before_send` sees, the call `infer_intent` sees, the identity events are sent under, and
//! the stats and diagnostics a tracker reports. Nothing here runs a call or delivers one.

pub(crate) mod ask;
pub(crate) mod cancel;
pub(crate) mod client;
pub(crate) mod diagnostics;
pub(crate) mod event;
pub(crate) mod identity;
pub(crate) mod inferred;
pub(crate) mod meta;
pub(crate) mod record;
pub(crate) mod request;
pub(crate) mod result;
pub(crate) mod stats;
