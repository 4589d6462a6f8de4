//! Summaries for the developer of a server, printed as terminal tables (`Display`) or exported
//! as JSON (`Serialize`): what the tool list costs a model (`TokenReport`, feature `tokens`).

mod table;
#[cfg(feature = "tokens")]
mod tokens;

#[cfg(feature = "tokens")]
pub use tokens::{count_tokens, TokenReport, ToolTokens, ENCODING};
