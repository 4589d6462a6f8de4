//! Summaries for the developer of a server, printed as terminal tables (`Display`) or exported
//! as JSON (`Serialize`): what the tool list costs a model (`TokenReport`, feature `tokens`)
//! and what users asked for that the tools could not give ([`IntentGap`]).
//!
//! Neither runs on a call's path: the token report reads a manifest's `tools/list`, the Intent
//! Gap reads events already captured (from `testing::MemorySink`, the
//! `testing::IngestReceiver`, or a JSON Lines file of payloads).

mod intent_gap;
mod table;
#[cfg(feature = "tokens")]
mod tokens;

pub use intent_gap::{
    CapabilityCount, CapabilityRequest, Conversation, FailedIntent, IntentCount, IntentGap, MethodRequests,
    ModelActivity, ReadCount, Reads, ToolActivity, UnknownTool,
};
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub use tokens::{count_tokens, TokenReport, ToolTokens, ENCODING};
