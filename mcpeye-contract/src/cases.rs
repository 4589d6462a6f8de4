//! One table of inputs with the verdict of each, run by `mcpeye-macros` (through the code of
//! `#[mcpeye::tool]`) and by the runtime's manifest build (`tests/contract_rules.rs`), so that
//! both are proved to apply the same rules. Not public API.

use crate::Rule;

/// What the rules say about one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted.
    Ok,
    /// Refused for breaking this rule.
    Refused(Rule),
}

use Rule::*;
use Verdict::{Ok, Refused};

/// Tool names (`name = "…"`, `ToolDef::name`).
pub const TOOL_NAME_CASES: &[(&str, Verdict)] = &[
    ("search_products", Ok),
    ("a.b-c_D9", Ok),
    ("a", Ok),
    ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Ok),
    ("mcpeye_request_capability_v2", Ok),
    ("", Refused(InvalidToolName)),
    ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Refused(InvalidToolName)),
    ("get user", Refused(InvalidToolName)),
    ("café", Refused(InvalidToolName)),
    ("a/b", Refused(InvalidToolName)),
    ("mcpeye_request_capability", Refused(ReservedToolName)),
    ("mcpeye_send_feedback", Refused(ReservedToolName)),
    ("mcpeye_send_feedback_v2", Ok),
];

/// Names of tool arguments: the parameters of a `#[mcpeye::tool]` function, the root
/// properties of an input schema.
pub const ARGUMENT_NAME_CASES: &[(&str, Verdict)] = &[
    ("query", Ok),
    ("max_results", Ok),
    ("a.b-c_D9", Ok),
    ("pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", Ok),
    ("mcpeyeintent", Ok),
    ("", Refused(PropertyName)),
    ("ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", Refused(PropertyName)),
    ("user id", Refused(PropertyName)),
    ("$ref", Refused(PropertyName)),
    ("naïve", Refused(PropertyName)),
    ("mcpeyeIntent", Refused(ReservedProperty)),
    ("mcpeye_intent", Refused(ReservedProperty)),
];

/// Tool descriptions (`description = "…"`, `ToolDef::description`).
pub const DESCRIPTION_CASES: &[(&str, Verdict)] = &[
    ("Search the catalogue.", Ok),
    ("", Refused(MissingDescription)),
    (" \n\t ", Refused(MissingDescription)),
    (as_str(&E_ACUTE_8192), Ok),
    (as_str(&X_8193), Refused(DescriptionTooLong)),
];

/// `pattern`s (`#[schemars(regex(pattern = "…"))]`, `"pattern"` in an input schema).
pub const PATTERN_CASES: &[(&str, Verdict)] = &[
    ("^[a-z]+$", Ok),
    (r"\d{2,}", Ok),
    ("^([a-z]+-)*[a-z]+$", Ok),
    (r"^\d+(\.\d+)*$", Ok),
    ("^(foo|bar)+$", Ok),
    ("(a|a)*", Refused(BacktrackingPattern)),
    ("(a+)+", Refused(BacktrackingPattern)),
    ("(a*)*b", Refused(BacktrackingPattern)),
    ("([a-z]+)*$", Refused(BacktrackingPattern)),
    (r"^(\w*)*$", Refused(BacktrackingPattern)),
    (r"(\w|\d)+$", Refused(BacktrackingPattern)),
    ("(?:x+x+)+y", Refused(BacktrackingPattern)),
    ("((a?)*)*", Refused(BacktrackingPattern)),
    ("(", Refused(InvalidPattern)),
    ("[a-z", Refused(InvalidPattern)),
    (r"\p{NoSuchClass}", Refused(InvalidPattern)),
    ("(?<=a)b", Refused(InvalidPattern)),
];

/// Per-call timeouts (`timeout_ms = …`, `ToolDef::timeout`) with whether the tool is async.
pub const TIMEOUT_CASES: &[((u64, bool), Verdict)] = &[
    ((1, true), Ok),
    ((5_000, true), Ok),
    ((86_400_000, true), Ok),
    ((0, true), Refused(InvalidTimeout)),
    ((86_400_001, true), Refused(InvalidTimeout)),
    ((5_000, false), Refused(InvalidTimeout)),
];

/// An icon: source, MIME type, theme.
pub type Icon = (&'static str, Option<&'static str>, Option<&'static str>);

/// Tool icons.
pub const ICON_CASES: &[(Icon, Verdict)] = &[
    (("https://example.com/icon.png", None, None), Ok),
    (("https://example.com/icon.svg", Some("image/svg+xml"), Some("dark")), Ok),
    (("data:image/png;base64,iVBORw0KGgo=", Some("image/png"), Some("light")), Ok),
    (("http://example.com/icon.png", None, None), Refused(InvalidIcon)),
    (("https://", None, None), Refused(InvalidIcon)),
    (("icon.png", None, None), Refused(InvalidIcon)),
    (("data:text/html,<b>x</b>", None, None), Refused(InvalidIcon)),
    (("https://example.com/icon.png", Some("text/plain"), None), Refused(InvalidIcon)),
    (("https://example.com/icon.png", None, Some("blue")), Refused(InvalidIcon)),
];

/// Tool titles (`title = "…"`, `ToolDef::title`).
pub const TITLE_CASES: &[(&str, Verdict)] =
    &[("Search products", Ok), ("", Refused(EmptyTitle)), ("  ", Refused(EmptyTitle))];

const X_8193: [u8; 8193] = [b'x'; 8193];
/// `é` (two bytes in UTF-8) 8192 times: at the limit, which counts characters.
const E_ACUTE_8192: [u8; 2 * 8192] = {
    let mut out = [0u8; 2 * 8192];
    let mut i = 0;
    while i < out.len() {
        out[i] = 0xC3;
        out[i + 1] = 0xA9;
        i += 2;
    }
    out
};

const fn as_str(bytes: &'static [u8]) -> &'static str {
    match std::str::from_utf8(bytes) {
        Result::Ok(s) => s,
        Result::Err(_) => panic!("not UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        argument_name_problem, icon_problem, pattern_problem, timeout_problem, tool_description_problem,
        tool_name_problem, tool_title_problem,
    };

    fn verdict(rule: Option<Rule>) -> Verdict {
        rule.map_or(Ok, Refused)
    }

    #[test]
    fn the_contract_functions_agree_with_the_table() {
        for (name, expected) in TOOL_NAME_CASES {
            assert_eq!(verdict(tool_name_problem(name).map(|p| p.rule())), *expected, "tool name {name:?}");
        }
        for (name, expected) in ARGUMENT_NAME_CASES {
            assert_eq!(verdict(argument_name_problem(name).map(|p| p.rule())), *expected, "argument {name:?}");
        }
        for (text, expected) in DESCRIPTION_CASES {
            let chars = text.chars().count();
            assert_eq!(verdict(tool_description_problem(text).map(|p| p.rule())), *expected, "{chars} chars");
        }
        for (pattern, expected) in PATTERN_CASES {
            assert_eq!(verdict(pattern_problem(pattern).map(|p| p.rule())), *expected, "pattern {pattern:?}");
        }
        for ((ms, is_async), expected) in TIMEOUT_CASES {
            assert_eq!(verdict(timeout_problem(*ms, *is_async).map(|p| p.rule())), *expected, "timeout {ms}");
        }
        for ((src, mime, theme), expected) in ICON_CASES {
            assert_eq!(verdict(icon_problem(src, *mime, *theme).map(|p| p.rule())), *expected, "icon {src}");
        }
        for (title, expected) in TITLE_CASES {
            assert_eq!(verdict(tool_title_problem(title).map(|p| p.rule())), *expected, "title {title:?}");
        }
    }

    #[test]
    fn long_inputs_are_at_and_over_the_limits() {
        assert_eq!(DESCRIPTION_CASES[3].0.chars().count(), crate::MAX_DESCRIPTION_CHARS);
        assert_eq!(DESCRIPTION_CASES[4].0.chars().count(), crate::MAX_DESCRIPTION_CHARS + 1);
        assert_eq!(TOOL_NAME_CASES[3].0.len(), crate::MAX_TOOL_NAME_CHARS);
        assert_eq!(ARGUMENT_NAME_CASES[3].0.len(), crate::MAX_PROPERTY_NAME_CHARS);
    }
}
