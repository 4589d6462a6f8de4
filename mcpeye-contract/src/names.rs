//! Tool and property names.

use crate::{Rule, INTENT_PARAM_NAME, MAX_PROPERTY_NAME_CHARS, MAX_TOOL_NAME_CHARS, RESERVED_PROPERTY_NAMES};
use crate::{FEEDBACK_TOOL_NAME, RESERVED_TOOL_NAMES};
use std::fmt;

/// Why a tool name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolNameProblem {
    /// The name is empty.
    Empty,
    /// The name has more than [`MAX_TOOL_NAME_CHARS`] characters.
    TooLong {
        /// Its length, in characters.
        chars: usize,
    },
    /// The name has characters outside `A-Za-z0-9_.-`.
    InvalidChars {
        /// The name.
        name: String,
        /// Every character outside the set, once each, in the order they first appear.
        found: Vec<char>,
    },
    /// The name is one of mcpeye's own tools ([`RESERVED_TOOL_NAMES`]).
    Reserved {
        /// The name.
        name: &'static str,
    },
}

impl ToolNameProblem {
    /// The rule broken: [`Rule::ReservedToolName`] or [`Rule::InvalidToolName`].
    pub fn rule(&self) -> Rule {
        match self {
            ToolNameProblem::Reserved { .. } => Rule::ReservedToolName,
            _ => Rule::InvalidToolName,
        }
    }
}

const TOOL_NAME_FIX: &str = "rename the function or set the name with `#[mcpeye::tool(name = \"…\")]`";
/// The fix when the name was given with `name = "…"`: pointing there again would not help.
const TOOL_NAME_VALUE_FIX: &str = "change the `name` value";

impl ToolNameProblem {
    /// The message for a name given as `#[mcpeye::tool(name = "…")]`: the same as `Display`'s
    /// but for the fix, which is to change that value.
    ///
    /// ```
    /// let problem = mcpeye_contract::tool_name_problem("get user").unwrap();
    /// assert!(problem.to_string().contains("name = "));
    /// assert!(problem.message_for_name_value().ends_with("change the `name` value"));
    /// ```
    pub fn message_for_name_value(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, TOOL_NAME_VALUE_FIX);
        out
    }

    fn write(&self, f: &mut impl fmt::Write, fix: &str) -> fmt::Result {
        match self {
            ToolNameProblem::Empty => write!(
                f,
                "the tool name is empty: MCP tool names are 1 to {MAX_TOOL_NAME_CHARS} characters from \
                 `A-Za-z0-9_.-`; {fix}"
            ),
            ToolNameProblem::TooLong { chars } => {
                write!(f, "the tool name is {chars} characters long; MCP allows at most {MAX_TOOL_NAME_CHARS}: {fix}")
            }
            ToolNameProblem::InvalidChars { name, found } => write!(
                f,
                "the tool name `{name}` contains {}; MCP tool names use only `A-Za-z0-9_.-`: {fix}",
                listed(found)
            ),
            ToolNameProblem::Reserved { name } => {
                let what = match *name {
                    FEEDBACK_TOOL_NAME => "agents send feedback through it",
                    _ => "agents report missing capabilities through it",
                };
                write!(f, "`{name}` is reserved for mcpeye's own tool ({what}): {fix}")
            }
        }
    }
}

impl fmt::Display for ToolNameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, TOOL_NAME_FIX)
    }
}

/// `' '`, `' ' and 'é'`, `' ', '/' and 'é'`.
fn listed(chars: &[char]) -> String {
    let quoted: Vec<String> = chars.iter().map(|c| format!("{c:?}")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Every character of `name` outside `A-Za-z0-9_.-`, once each, in order.
fn bad_chars(name: &str) -> Vec<char> {
    let mut found = Vec::new();
    for c in name.chars().filter(|c| !is_name_char(*c)) {
        if !found.contains(&c) {
            found.push(c);
        }
    }
    found
}

impl std::error::Error for ToolNameProblem {}

/// Checks a tool name: 1 to [`MAX_TOOL_NAME_CHARS`] characters of `A-Za-z0-9_.-`, and not
/// one of [`RESERVED_TOOL_NAMES`].
///
/// ```
/// use mcpeye_contract::{tool_name_problem, ToolNameProblem};
///
/// assert_eq!(tool_name_problem("search-issues_v2.1"), None);
/// assert_eq!(tool_name_problem(""), Some(ToolNameProblem::Empty));
/// assert_eq!(
///     tool_name_problem("mcpeye_send_feedback"),
///     Some(ToolNameProblem::Reserved { name: "mcpeye_send_feedback" })
/// );
/// ```
pub fn tool_name_problem(name: &str) -> Option<ToolNameProblem> {
    if name.is_empty() {
        return Some(ToolNameProblem::Empty);
    }
    let chars = name.chars().count();
    if chars > MAX_TOOL_NAME_CHARS {
        return Some(ToolNameProblem::TooLong { chars });
    }
    let found = bad_chars(name);
    if !found.is_empty() {
        return Some(ToolNameProblem::InvalidChars { name: name.to_owned(), found });
    }
    if let Some(name) = RESERVED_TOOL_NAMES.iter().find(|r| **r == name) {
        return Some(ToolNameProblem::Reserved { name });
    }
    None
}

/// Why a property name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyNameProblem {
    /// The name is empty.
    Empty,
    /// The name has more than [`MAX_PROPERTY_NAME_CHARS`] characters.
    TooLong {
        /// The name.
        name: String,
        /// Its length, in characters.
        chars: usize,
    },
    /// The name has characters outside `A-Za-z0-9_.-`.
    InvalidChars {
        /// The name.
        name: String,
        /// Every character outside the set, once each, in the order they first appear.
        found: Vec<char>,
    },
    /// A tool argument uses one of the [`RESERVED_PROPERTY_NAMES`].
    Reserved {
        /// The name.
        name: String,
    },
}

impl PropertyNameProblem {
    /// The rule broken: [`Rule::ReservedProperty`] or [`Rule::PropertyName`].
    pub fn rule(&self) -> Rule {
        match self {
            PropertyNameProblem::Reserved { .. } => Rule::ReservedProperty,
            _ => Rule::PropertyName,
        }
    }
}

const PROPERTY_NAME_FIX: &str = "rename the parameter or field, or give it another JSON name with \
                                 `#[serde(rename = \"…\")]`";

impl fmt::Display for PropertyNameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = format!("MCP clients accept 1 to {MAX_PROPERTY_NAME_CHARS} characters from `A-Za-z0-9_.-`");
        match self {
            PropertyNameProblem::Empty => write!(f, "the property name is empty: {rule}; {PROPERTY_NAME_FIX}"),
            PropertyNameProblem::TooLong { name, chars } => {
                write!(f, "the property name `{name}` is {chars} characters long: {rule}; {PROPERTY_NAME_FIX}")
            }
            PropertyNameProblem::InvalidChars { name, found } => {
                write!(f, "the property name `{name}` contains {}: {rule}; {PROPERTY_NAME_FIX}", listed(found))
            }
            PropertyNameProblem::Reserved { name } => write!(
                f,
                "`{name}` is reserved: mcpeye adds the `{INTENT_PARAM_NAME}` property to every tool and strips it \
                 before the call; {PROPERTY_NAME_FIX}"
            ),
        }
    }
}

impl std::error::Error for PropertyNameProblem {}

/// Checks the name of a property at any depth of an input schema: 1 to
/// [`MAX_PROPERTY_NAME_CHARS`] characters of `A-Za-z0-9_.-`. See [`argument_name_problem`]
/// for the properties of the arguments object itself.
///
/// ```
/// use mcpeye_contract::property_name_problem;
///
/// assert_eq!(property_name_problem("max_results"), None);
/// assert!(property_name_problem("max results").is_some());
/// ```
pub fn property_name_problem(name: &str) -> Option<PropertyNameProblem> {
    if name.is_empty() {
        return Some(PropertyNameProblem::Empty);
    }
    let chars = name.chars().count();
    if chars > MAX_PROPERTY_NAME_CHARS {
        return Some(PropertyNameProblem::TooLong { name: name.to_owned(), chars });
    }
    let found = bad_chars(name);
    if !found.is_empty() {
        return Some(PropertyNameProblem::InvalidChars { name: name.to_owned(), found });
    }
    None
}

/// Checks the name of a tool argument (a property of the arguments object, the root of the
/// input schema): not one of the [`RESERVED_PROPERTY_NAMES`], then [`property_name_problem`].
///
/// ```
/// use mcpeye_contract::{argument_name_problem, Rule};
///
/// assert_eq!(argument_name_problem("query"), None);
/// assert_eq!(argument_name_problem("mcpeye_intent").unwrap().rule(), Rule::ReservedProperty);
/// ```
pub fn argument_name_problem(name: &str) -> Option<PropertyNameProblem> {
    if RESERVED_PROPERTY_NAMES.contains(&name) {
        return Some(PropertyNameProblem::Reserved { name: name.to_owned() });
    }
    property_name_problem(name)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_count_characters() {
        assert_eq!(tool_name_problem(&"a".repeat(128)), None);
        assert_eq!(tool_name_problem(&"a".repeat(129)), Some(ToolNameProblem::TooLong { chars: 129 }));
        assert_eq!(property_name_problem(&"p".repeat(64)), None);
        assert!(matches!(property_name_problem(&"p".repeat(65)), Some(PropertyNameProblem::TooLong { chars: 65, .. })));
        // Too long is reported before the character, in characters (not bytes).
        assert_eq!(tool_name_problem(&"é".repeat(100)).map(|p| p.rule()), Some(Rule::InvalidToolName));
        assert!(
            matches!(tool_name_problem("café"), Some(ToolNameProblem::InvalidChars { found, .. }) if found == ['é'])
        );
    }

    #[test]
    fn nested_properties_may_use_the_reserved_names() {
        for name in RESERVED_PROPERTY_NAMES {
            assert_eq!(property_name_problem(name), None);
            assert_eq!(argument_name_problem(name).map(|p| p.rule()), Some(Rule::ReservedProperty));
        }
    }

    #[test]
    fn every_bad_character_is_named_once() {
        let p = tool_name_problem("get user/by name").unwrap();
        assert!(matches!(&p, ToolNameProblem::InvalidChars { found, .. } if *found == [' ', '/']), "{p:?}");
        assert!(p.to_string().contains("contains ' ' and '/';"), "{p}");
        let p = property_name_problem("a b/c:d").unwrap();
        assert!(p.to_string().contains("contains ' ', '/' and ':':"), "{p}");
    }

    #[test]
    fn messages_say_how_to_fix() {
        assert!(tool_name_problem("a b").unwrap().to_string().contains("#[mcpeye::tool(name = \"…\")]"));
        assert!(property_name_problem("a b").unwrap().to_string().contains("#[serde(rename = \"…\")]"));
        assert!(argument_name_problem("mcpeyeIntent").unwrap().to_string().contains("#[serde(rename = \"…\")]"));
    }
}
