//! Summaries for the developer of a server, printed as terminal tables (`Display`) or exported
//! as JSON (`Serialize`): what the tool list costs a model (`TokenReport`, feature `tokens`),
//! what users asked for that the tools could not give ([`IntentGap`]), and the report of
//! `mcpeye report` ([`Report`], also as a page: [`Report::to_html`]) read from event logs and
//! ingest payloads ([`ReportInput`]).
//!
//! None runs on a call's path: the token report reads a manifest's `tools/list`, the others
//! read events already captured (from `testing::MemorySink`, the `testing::IngestReceiver`, a
//! JSON Lines file of payloads, or the event log of `Config::event_log`).
//!
//! ```
//! use mcpeye::report::{IntentGap, ReportInput};
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
//!
//! // The report of `mcpeye report`, from the same payloads.
//! let mut input = ReportInput::new();
//! for payload in sink.payloads() {
//!     input.add_value(&payload);
//! }
//! assert_eq!(input.calls(), 2);
//! eprintln!("{}", input.report());
//! ```

mod asks;
mod html;
mod input;
mod intent_gap;
mod render;
mod summary;
mod table;
#[cfg(feature = "tokens")]
mod tokens;

pub use crate::flush::event_log::descriptor_hash;
pub use input::ReportInput;
pub use intent_gap::{
    CapabilityCount, CapabilityRequest, Conversation, FailedIntent, IntentCount, IntentGap, MethodRequests,
    ModelActivity, ReadCount, Reads, ToolActivity, UnknownTool,
};
pub use summary::{
    Ask, Ending, FailedAsk, GapSection, Loop, ModelRow, ModelsSection, Overview, PathsSection, Recovery, Report,
    Sequence, ToolIntents, ToolRow, ToolsSection, Turns, Unknown, VersionRow, VersionsSection,
};
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub use tokens::{count_tokens, TokenReport, ToolTokens, ENCODING};
