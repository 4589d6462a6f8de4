//! Summaries for the developer of a server, printed as terminal tables (`Display`) or exported
//! as JSON (`Serialize`): what the tool list costs a model (`TokenReport`, feature `tokens`) and
//! what users asked for that the tools could not give ([`IntentGap`]). The report of
//! `mcpeye report`, read from event logs and ingest payload files, is the `mcpeye-report` crate:
//! a server does not compile it.
//!
//! None runs on a call's path: the token report reads a manifest's `tools/list`, the Intent Gap
//! reads events already captured (from `testing::MemorySink` or the `testing::IngestReceiver`).
//!
//! ```
//! use mcpeye::report::IntentGap;
//! use mcpeye::{testing::MemorySink, Manifest};
//! use std::time::Duration;
//!
//! let (tracker, sink) = MemorySink::new();
//! let manifest = Manifest::builder().tracker(tracker.clone()).build();
//! manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "export as CSV"}));
//! manifest.call("export_csv", serde_json::json!({})); // a tool the server does not have
//! tracker.flush(Duration::from_secs(5));
//!
//! // What users asked for that the tools could not give.
//! let gap = IntentGap::from_events(&sink.events());
//! assert_eq!(gap.capability_requests[0].capability, "export as CSV");
//! assert_eq!(gap.unknown_tools[0].name, "export_csv");
//! eprintln!("{gap}");
//! ```

mod intent_gap;
// Public for `mcpeye-report`, which draws its terminal tables the same way; not an API.
#[doc(hidden)]
pub mod table;
#[cfg(feature = "tokens")]
mod tokens;

pub use crate::flush::event_log::descriptor_hash;
// The event log's format as the writer spells it, for `mcpeye-report` to read it; not an API.
#[doc(hidden)]
pub use crate::flush::event_log::{FORMAT_VERSION, KIND_CALL, KIND_LOG, KIND_METHOD, KIND_TOOLS};
pub use intent_gap::{
    CapabilityCount, CapabilityRequest, Conversation, FailedIntent, IntentCount, IntentGap, MethodRequests,
    ModelActivity, ReadCount, Reads, ToolActivity, UnknownTool,
};
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub use tokens::{count_tokens, TokenReport, ToolTokens, ENCODING};
