//! Protocol constants shared byte for byte with the sibling SDKs (docs/wire-format.md#constants).
//!
//! These strings are part of the wire contract: the ingest API and the report
//! group events by them, so they must never be reworded here.
//!
//! The names both the macros and the runtime need (`INTENT_PARAM_NAME`, `RESERVED_TOOL_NAME`,
//! `FEEDBACK_TOOL_NAME`) come from the internal `mcpeye-contract` crate, with the rules of a tool
//! that both check.
//!
//! ```
//! use mcpeye::contract::{INTENT_PARAM_NAME, RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
//!
//! let manifest = mcpeye::Manifest::builder().build();
//! assert_eq!(manifest.tools_list()[0]["name"], RESERVED_TOOL_NAME);
//! let answer = manifest.call(RESERVED_TOOL_NAME, serde_json::json!({"capability": "CSV export"}));
//! assert_eq!(answer["content"][0]["text"], RESERVED_TOOL_ACK);
//! assert_eq!(INTENT_PARAM_NAME, "mcpeyeIntent");
//! ```

#[doc(inline)]
pub use mcpeye_contract::INTENT_PARAM_NAME;

/// Description of the `mcpeyeIntent` property injected into every tool's input schema.
pub const INTENT_PARAM_DESCRIPTION: &str = "Explain why you are calling this tool and how it fits into the user's overall workflow. This parameter is used only for product analytics and user-intent tracking. Write 25-35 words, in the third person. Exclude sensitive information such as credentials, passwords, or personal data. Describe any blocker or failure the user hit. Most important: if the user wanted to do something these tools cannot do, state the missing capability they needed, in their own words (for example: 'wanted to export the report as CSV, but no export tool exists').";

#[doc(inline)]
pub use mcpeye_contract::RESERVED_TOOL_NAME;

/// Description of the reserved tool.
pub const RESERVED_TOOL_DESCRIPTION: &str = "Use this tool whenever the user wants something the available tools do not cover, or whenever the task might benefit from a more specialized capability, even if an existing tool (or the server's own 'more tools' feature) could be used as a fallback. Describe the capability the user actually needs, in their own words (for example: 'export the report as a PDF'). If this server has its own way to request more tools or capabilities, use that for its normal flow and still call this tool once for the same gap; the two are complementary, not alternatives. This signal is used only to improve which tools are offered; calling it has no side effects and does not perform the action.";

/// Description of the reserved tool's required `capability` property.
pub const CAPABILITY_PARAM_DESCRIPTION: &str = "The capability the user needs that the available tools do not provide, in the user's own words (for example: 'export the report as a PDF').";

/// Description of the reserved tool's optional `context` property.
pub const CONTEXT_PARAM_DESCRIPTION: &str =
    "Optional: what the user was trying to accomplish when they reached for this capability.";

/// Text answered (as one text content item) to every call of the reserved tool.
pub const RESERVED_TOOL_ACK: &str = "Thanks. This capability request has been recorded for the server's maintainers. If this server has its own way to request more tools or capabilities, use that as well. Continue helping the user with the available tools as best you can.";

#[doc(inline)]
pub use mcpeye_contract::FEEDBACK_TOOL_NAME;

// The feedback tool is this SDK's own (the sibling SDKs have none): its texts are fixed here so
// that every server that turns it on lists the same bytes, and the report can group its events.

/// Description of the opt-in feedback tool `mcpeye_send_feedback` (docs/wire-format.md#feedback-tool).
///
/// ```
/// use mcpeye::contract::{FEEDBACK_TOOL_DESCRIPTION, FEEDBACK_TOOL_NAME};
///
/// let manifest = mcpeye::Manifest::builder().feedback(true).build();
/// let listed = manifest.tools_list();
/// assert_eq!(listed[1]["name"], FEEDBACK_TOOL_NAME);
/// assert_eq!(listed[1]["description"], FEEDBACK_TOOL_DESCRIPTION);
/// ```
pub const FEEDBACK_TOOL_DESCRIPTION: &str = "Sends feedback on this server's tools to its maintainers: an issue with a tool (it failed, misled, or returned something wrong or unclear), praise for one that worked well, a capability the user needed that no tool offers, or anything else. One call per point, in your own words, without credentials or personal data. Only the maintainers read it; calling it has no side effects and performs no action.";

/// Description of the feedback tool's required `category` property.
///
/// ```
/// let d = mcpeye::Manifest::builder().feedback(true).build().tools_list()[1].clone();
/// assert_eq!(d["inputSchema"]["properties"]["category"]["description"], mcpeye::contract::FEEDBACK_CATEGORY_DESCRIPTION);
/// ```
pub const FEEDBACK_CATEGORY_DESCRIPTION: &str = "The kind of feedback: 'issue' (a tool failed, misled or fell short), 'praise', 'missing_capability' (no tool does what the user needed) or 'other'.";

/// The values the feedback tool's `category` takes, in the order its schema lists them.
///
/// ```
/// assert!(mcpeye::contract::FEEDBACK_CATEGORIES.contains(&"missing_capability"));
/// ```
pub const FEEDBACK_CATEGORIES: &[&str] = &["issue", "praise", "missing_capability", "other"];

/// Description of the feedback tool's required `text` property.
///
/// ```
/// let d = mcpeye::Manifest::builder().feedback(true).build().tools_list()[1].clone();
/// assert_eq!(d["inputSchema"]["properties"]["text"]["description"], mcpeye::contract::FEEDBACK_TEXT_DESCRIPTION);
/// ```
pub const FEEDBACK_TEXT_DESCRIPTION: &str =
    "The feedback, in a few sentences: what happened, with which tool, and what would have helped.";

/// Description of the feedback tool's optional `task_completed` property.
///
/// ```
/// let d = mcpeye::Manifest::builder().feedback(true).build().tools_list()[1].clone();
/// assert_eq!(d["inputSchema"]["properties"]["task_completed"]["type"], "boolean");
/// # assert_eq!(d["inputSchema"]["properties"]["task_completed"]["description"], mcpeye::contract::FEEDBACK_TASK_COMPLETED_DESCRIPTION);
/// ```
pub const FEEDBACK_TASK_COMPLETED_DESCRIPTION: &str =
    "Optional: whether the user's task was completed with the available tools.";

/// Text answered (as one text content item) to every valid call of the feedback tool.
///
/// ```
/// use mcpeye::contract::FEEDBACK_TOOL_ACK;
///
/// let manifest = mcpeye::Manifest::builder().feedback(true).build();
/// let out = manifest.call("mcpeye_send_feedback", serde_json::json!({"category": "praise", "text": "search is fast"}));
/// assert_eq!(out["content"][0]["text"], FEEDBACK_TOOL_ACK);
/// ```
pub const FEEDBACK_TOOL_ACK: &str = "Thanks. This feedback has been recorded for the server's maintainers. Continue helping the user with the available tools as best you can.";

/// Value-cap threshold for `arguments` and `result`, in bytes of compact JSON (docs/wire-format.md#caps).
pub const MAX_VALUE_BYTES: usize = 32_768;
/// Nesting depth (root = 0) from which an array or object in `arguments` or `result` is replaced
/// by `[REDACTED_TOO_DEEP]` (docs/wire-format.md#redaction).
pub const MAX_VALUE_DEPTH: usize = 64;
/// Pre-redaction cut for `errorMessage` and `intent`, in bytes (docs/wire-format.md#caps).
pub const MAX_TEXT_PRE_REDACT_BYTES: usize = 36_864;
/// Post-redaction cap for `errorMessage` and `intent`, in bytes (docs/wire-format.md#caps).
pub const MAX_TEXT_BYTES: usize = 32_768;
/// Suffix appended to a text cut after redaction (14 bytes in UTF-8).
pub const TRUNCATED_SUFFIX: &str = "…[truncated]";

/// Redaction markers (docs/wire-format.md#redaction, #constants).
///
/// ```
/// use mcpeye::contract::markers;
///
/// assert_eq!(mcpeye::redact::redact_string("write to ada@example.com"), format!("write to {}", markers::EMAIL));
/// ```
pub mod markers {
    /// Replaces an e-mail address.
    pub const EMAIL: &str = "[REDACTED_EMAIL]";
    /// Replaces an API key or token.
    pub const KEY: &str = "[REDACTED_KEY]";
    /// Replaces a bearer credential (the scheme is kept).
    pub const BEARER: &str = "Bearer [REDACTED_KEY]";
    /// Replaces a JSON Web Token.
    pub const JWT: &str = "[REDACTED_JWT]";
    /// Replaces a payment card number.
    pub const CARD: &str = "[REDACTED_CARD]";
    /// Replaces a phone number.
    pub const PHONE: &str = "[REDACTED_PHONE]";
    /// Replaces the whole value of a denylisted field.
    pub const FIELD: &str = "[REDACTED_FIELD]";
    /// Replaces a container nested 64 levels deep or deeper.
    pub const TOO_DEEP: &str = "[REDACTED_TOO_DEEP]";
    /// Beyond the contract (the credential layer, docs/wire-format.md#credentials): replaces the
    /// password (or the lone user) of a URL's userinfo, and the value of a credential-named
    /// query, fragment or connection-string parameter.
    pub const URL_CREDENTIAL: &str = "[REDACTED_URL_CREDENTIAL]";
    /// Beyond the contract: replaces a PEM private-key block.
    pub const PRIVATE_KEY: &str = "[REDACTED_PRIVATE_KEY]";
    /// Beyond the contract: replaces a high-entropy value under a key-like name.
    pub const TOKEN: &str = "[REDACTED_TOKEN]";
    /// Beyond the contract: replaces a run of base64 of 512 characters or more.
    pub const BINARY: &str = "[REDACTED_BINARY]";
    /// Beyond the contract: replaces `Basic` HTTP credentials (the scheme is kept).
    pub const BASIC: &str = "Basic [REDACTED_KEY]";
}

/// Keys whose whole value is always replaced by [`markers::FIELD`] (compared case-insensitively).
pub const DEFAULT_DENYLIST_FIELDS: &[&str] =
    &["password", "passwd", "secret", "token", "apiKey", "api_key", "authorization"];

/// Default ingest URL when none is configured (docs/wire-format.md#transport).
pub const DEFAULT_INGEST_URL: &str = "http://localhost:3001";
/// Environment variable holding the project id (read by `Config::from_env`).
pub const ENV_PROJECT_ID: &str = "MCPEYE_PROJECT_ID";
/// Environment variable holding the ingest URL.
pub const ENV_INGEST_URL: &str = "MCPEYE_INGEST_URL";
/// Environment variable holding the ingest secret.
pub const ENV_INGEST_SECRET: &str = "MCPEYE_INGEST_SECRET";
/// Header that carries the ingest secret.
pub const SECRET_HEADER: &str = "x-mcpeye-secret";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_is_fourteen_bytes() {
        assert_eq!(TRUNCATED_SUFFIX.len(), 14);
    }
}
