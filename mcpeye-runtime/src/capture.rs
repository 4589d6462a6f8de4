//! The capture point: one [`CallRecord`] per tool call, handed by the dispatcher to a tracker.
//!
//! Everything here runs on the calling thread, so a record is only moved, never serialised
//! or redacted: that work belongs to the flusher.

use serde_json::Value;
use std::borrow::Cow;
use std::time::Duration;

/// Where a call's intent came from (`intentSource` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentSource {
    /// From the `mcpeyeIntent` argument injected by mcpeye.
    Mcpeye,
    /// Harvested from a host-specific field.
    Native,
}

impl IntentSource {
    /// The wire spelling: `"mcpeye"` or `"native"`.
    pub fn as_str(self) -> &'static str {
        match self {
            IntentSource::Mcpeye => "mcpeye",
            IntentSource::Native => "native",
        }
    }
}

/// What a call produced, as the runtime records it (CONTRACT.md §3). Not yet capped or redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// The tool's registered name.
    pub tool_name: Cow<'static, str>,
    /// The arguments without `mcpeyeIntent`; `{}` when the call's arguments were not an object.
    pub arguments: Value,
    /// Whether the call failed (handler error, panic, invalid input, result-level error).
    pub is_error: bool,
    /// The result as sent to the client; only when `is_error` is false.
    pub result: Option<Value>,
    /// The error's text, when one exists.
    pub error_message: Option<String>,
    /// The agent's stated intent, untrimmed, and where it came from.
    pub intent: Option<(String, IntentSource)>,
    /// Epoch milliseconds at the end of the call.
    pub timestamp_ms: u64,
    /// How long the call took.
    pub duration: Duration,
}

/// Milliseconds since the Unix epoch now (0 if the clock is before 1970).
pub fn now_epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
