//! The rules every mcpeye tool must follow, in one place: `#[mcpeye::tool]` checks them at
//! compile time (`mcpeye-macros`) and `Manifest::build()` checks them again at start-up
//! (`mcpeye-runtime`), for what the macro cannot see (hand-written `ToolDef`s, `Args<T>`
//! structs, manual `JsonSchema` impls).
//!
//! Each rule is a function that returns `None` when the input is fine, or a typed problem whose
//! `Display` says what is wrong and how to fix it, so that a compile error and a manifest error
//! explain the same mistake in the same words:
//!
//! - [`tool_name_problem`]: 1 to [`MAX_TOOL_NAME_CHARS`] characters of `A-Za-z0-9_.-`, not
//!   one of mcpeye's own tools ([`RESERVED_TOOL_NAMES`]);
//! - [`property_name_problem`] / [`argument_name_problem`]: 1 to [`MAX_PROPERTY_NAME_CHARS`]
//!   characters of `A-Za-z0-9_.-`; a tool's own arguments may not use a
//!   [reserved name](RESERVED_PROPERTY_NAMES);
//! - [`tool_description_problem`]: not blank, at most [`MAX_DESCRIPTION_CHARS`] characters;
//! - [`pattern_problem`]: a `pattern` parses, and cannot backtrack exponentially;
//! - [`tool_title_problem`]: a title is not blank;
//! - [`timeout_problem`]: a per-call timeout is 1 to [`MAX_TIMEOUT_MS`] milliseconds, on an
//!   async tool;
//! - [`icon_problem`]: an icon comes from an `https://` URL or a `data:image/…` URI, with an
//!   image MIME type and a `light` or `dark` theme.
//!
//! ```
//! use mcpeye_contract::{tool_name_problem, Rule};
//!
//! assert!(tool_name_problem("search_issues").is_none());
//! let problem = tool_name_problem("search issues").unwrap();
//! assert_eq!(problem.rule(), Rule::InvalidToolName);
//! assert!(problem.to_string().contains("use only `A-Za-z0-9_.-`"));
//! ```
//!
//! Internal to mcpeye: use it through the `mcpeye` crate (`mcpeye::contract`, `mcpeye::schema`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod attrs;
mod description;
mod names;
mod pattern;

#[doc(hidden)]
pub mod cases;

pub use attrs::{icon_problem, timeout_problem, tool_title_problem, IconProblem, TimeoutProblem, TitleProblem};
pub use description::{tool_description_problem, DescriptionProblem};
pub use names::{
    argument_name_problem, property_name_problem, tool_name_problem, PropertyNameProblem, ToolNameProblem,
};
pub use pattern::{pattern_problem, PatternProblem};

/// Name of the optional argument in which an agent explains why it calls a tool.
pub const INTENT_PARAM_NAME: &str = "mcpeyeIntent";

/// Name of the reserved tool through which an agent reports a missing capability.
pub const RESERVED_TOOL_NAME: &str = "mcpeye_request_capability";

/// Name of mcpeye's opt-in tool through which an agent sends feedback about a server's tools.
pub const FEEDBACK_TOOL_NAME: &str = "mcpeye_send_feedback";

/// The names of mcpeye's own tools, which a server's tools may not take: answered by mcpeye
/// wherever it lists them, they would hide the server's tool of that name.
pub const RESERVED_TOOL_NAMES: &[&str] = &[RESERVED_TOOL_NAME, FEEDBACK_TOOL_NAME];

/// Property names a tool's own arguments may not use: [`INTENT_PARAM_NAME`], which mcpeye adds
/// to every tool and strips before the call, and its snake-case spelling, which serde would
/// turn into the same field of a Rust struct.
pub const RESERVED_PROPERTY_NAMES: &[&str] = &[INTENT_PARAM_NAME, "mcpeye_intent"];

/// Longest tool name, in characters.
pub const MAX_TOOL_NAME_CHARS: usize = 128;
/// Longest property name, in characters.
pub const MAX_PROPERTY_NAME_CHARS: usize = 64;
/// Longest tool description (and property description), in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 8192;
/// Largest accepted input (or output) schema, in bytes of compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Longest per-call timeout (`timeout_ms`), in milliseconds: one day.
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// The rule a problem breaks. Its [`id`](Rule::id) is the stable rule id of a
/// `ManifestProblem` (`invalid-tool-name`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The tool name is empty, too long or has a character outside `A-Za-z0-9_.-`.
    InvalidToolName,
    /// The tool name is one of [`RESERVED_TOOL_NAMES`].
    ReservedToolName,
    /// A property name is empty, too long or has a character outside `A-Za-z0-9_.-`.
    PropertyName,
    /// An argument uses one of the [`RESERVED_PROPERTY_NAMES`].
    ReservedProperty,
    /// The tool description is blank.
    MissingDescription,
    /// The tool description is over [`MAX_DESCRIPTION_CHARS`].
    DescriptionTooLong,
    /// A `pattern` does not parse.
    InvalidPattern,
    /// A `pattern` may backtrack exponentially.
    BacktrackingPattern,
    /// The title is blank.
    EmptyTitle,
    /// A per-call timeout is zero, too long, or on a synchronous tool.
    InvalidTimeout,
    /// An icon's source, MIME type or theme is not one MCP clients accept.
    InvalidIcon,
}

impl Rule {
    /// The stable rule id, as in `ManifestProblem::rule`.
    pub const fn id(self) -> &'static str {
        match self {
            Rule::InvalidToolName => "invalid-tool-name",
            Rule::ReservedToolName => "reserved-name",
            Rule::PropertyName => "property-name",
            Rule::ReservedProperty => "reserved-property",
            Rule::MissingDescription => "missing-description",
            Rule::DescriptionTooLong => "description-too-long",
            Rule::InvalidPattern => "invalid-pattern",
            Rule::BacktrackingPattern => "backtracking-pattern",
            Rule::EmptyTitle => "empty-title",
            Rule::InvalidTimeout => "invalid-timeout",
            Rule::InvalidIcon => "invalid-icon",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}
