//! Tool descriptions.

use crate::{Rule, MAX_DESCRIPTION_CHARS};
use std::fmt;

/// Why a tool description is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptionProblem {
    /// The description is empty or only whitespace.
    Empty,
    /// The description has more than [`MAX_DESCRIPTION_CHARS`] characters.
    TooLong {
        /// Its length, in characters.
        chars: usize,
    },
}

impl DescriptionProblem {
    /// The rule broken: [`Rule::MissingDescription`] or [`Rule::DescriptionTooLong`].
    pub fn rule(&self) -> Rule {
        match self {
            DescriptionProblem::Empty => Rule::MissingDescription,
            DescriptionProblem::TooLong { .. } => Rule::DescriptionTooLong,
        }
    }
}

impl fmt::Display for DescriptionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptionProblem::Empty => f.write_str(
                "the tool description is empty: the agent reads it to decide when to call the tool; say what the \
                 tool does and when to use it in a `///` doc comment or `description = \"…\"`",
            ),
            DescriptionProblem::TooLong { chars } => write!(
                f,
                "the tool description is {chars} characters long; keep it under {MAX_DESCRIPTION_CHARS} (every \
                 agent reads it on each `tools/list`): move details to `description = \"…\"` and keep the long doc \
                 for rustdoc"
            ),
        }
    }
}

impl std::error::Error for DescriptionProblem {}

/// Checks a tool description: not blank, at most [`MAX_DESCRIPTION_CHARS`] characters.
///
/// ```
/// use mcpeye_contract::{tool_description_problem, DescriptionProblem};
///
/// assert_eq!(tool_description_problem("Search the catalogue."), None);
/// assert_eq!(tool_description_problem("  "), Some(DescriptionProblem::Empty));
/// ```
pub fn tool_description_problem(text: &str) -> Option<DescriptionProblem> {
    if text.trim().is_empty() {
        return Some(DescriptionProblem::Empty);
    }
    let chars = text.chars().count();
    (chars > MAX_DESCRIPTION_CHARS).then_some(DescriptionProblem::TooLong { chars })
}
