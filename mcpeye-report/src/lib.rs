//! The report of `mcpeye report`: what agents did with an MCP server, read from mcpeye's event
//! logs (`Config::event_log`, docs/event-log.md) and ingest payload files (what any mcpeye SDK
//! POSTs). [`ReportInput`] reads them, [`Report`] holds the sections, opening with what to fix
//! first (each [`Finding`] with its evidence and action, ranked by impact), printed for a
//! terminal (`Display`), as JSON (`Serialize`) or as one self-contained page ([`Report::to_html`]).
//!
//! Every source is read once, as a stream, its lines parsed on every core; memory grows with
//! what is distinct in the input (tools, versions, conversations, wordings), not with its calls.
//! A bad line or file costs only itself and is counted and named ([`Report::input`]). Text from
//! the input cannot act on a terminal ([`terminal_safe`]) or reorder the page.
//!
//! A crate of its own so that a server, which links `mcpeye-runtime`, does not compile it; the
//! `mcpeye` command (crate `mcpeye-cli`) is its user.
//!
//! ```
//! use mcpeye::{testing::MemorySink, Manifest};
//! use mcpeye_report::ReportInput;
//! use std::time::Duration;
//!
//! let (tracker, sink) = MemorySink::new();
//! let manifest = Manifest::builder().tracker(tracker.clone()).build();
//! manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "export as CSV"}));
//! manifest.call("export_csv", serde_json::json!({})); // a tool the server does not have
//! tracker.flush(Duration::from_secs(5));
//!
//! let mut input = ReportInput::new();
//! for payload in sink.payloads() {
//!     input.add_value(&payload);
//! }
//! assert_eq!(input.calls(), 2);
//! let report = input.report();
//! assert_eq!(report.intent_gap.unknown_tools[0].name, "export_csv");
//! eprintln!("{report}");
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod asks;
mod findings;
mod fold;
mod html;
mod input;
mod render;
mod summary;
mod terminal;
mod wire;

pub use input::ReportInput;

pub use input::MAX_LINE_BYTES;
pub use summary::{
    Ask, Ending, Example, FailedAsk, FeedbackCategory, FeedbackSection, Finding, FindingKind, GapSection, InputSection,
    Loop, ModelRow, ModelsSection, Overview, PathsSection, Place, Recovery, Report, Sequence, ToolIntents, ToolRow,
    ToolsSection, Turns, Unknown, VersionRow, VersionsSection,
};
pub use terminal::terminal_safe;
