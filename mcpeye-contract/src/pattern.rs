//! `pattern` keywords: they must parse, and must not invite catastrophic backtracking in the
//! (backtracking, ECMAScript) regex engines of MCP clients.
//!
//! The backtracking check is a heuristic over the parsed pattern. Inside a repetition without
//! an upper bound (`*`, `+`, `{n,}`) it refuses:
//! - another unbounded repetition that can match text (`(a+)+`, `(\w*)*`, `(a?)*` inside
//!   `(…)*`, `(\w+\s?)*`, `(a+a)*`, `(x+x+)+`), unless a sibling in the repeated body needs a
//!   character the inner repetition cannot match, which pins every iteration (`(\.\d+)*` and
//!   `([a-z]+-)*` are fine);
//! - an alternation with two branches that match the same text (`(a|a)*`, `(\w|\d)+`).
//!
//! Character classes are computed without inline flags (`(?i)`), which ECMAScript does not
//! accept anyway.

use crate::Rule;
use regex_syntax::ast::{self, Ast, RepetitionKind, RepetitionRange};
use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};
use std::fmt;
use std::ops::Range;

/// Why a `pattern` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternProblem {
    /// The pattern does not parse (or names something that does not exist, like `\p{Nope}`).
    Unparseable {
        /// The pattern.
        pattern: String,
        /// The parser's explanation.
        reason: String,
        /// The part of the pattern the parser points at (may be empty).
        at: String,
    },
    /// An unbounded repetition can make up a whole iteration of an enclosing unbounded one:
    /// the iterations can split the input in exponentially many ways.
    NestedRepetition {
        /// The pattern.
        pattern: String,
        /// The inner repetition.
        inner: String,
    },
    /// An alternation inside an unbounded repetition has two branches that match the same text.
    AmbiguousAlternation {
        /// The pattern.
        pattern: String,
        /// The alternation.
        alternation: String,
    },
}

impl PatternProblem {
    /// The rule broken: [`Rule::InvalidPattern`] or [`Rule::BacktrackingPattern`].
    pub fn rule(&self) -> Rule {
        match self {
            PatternProblem::Unparseable { .. } => Rule::InvalidPattern,
            _ => Rule::BacktrackingPattern,
        }
    }
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SLOW: &str = "backtracking regex engines in MCP clients take exponential time on it";
        match self {
            PatternProblem::Unparseable { pattern, reason, at } => {
                write!(f, "the pattern `{pattern}` does not parse: {reason}")?;
                if !at.is_empty() {
                    write!(f, " (at `{at}`)")?;
                }
                f.write_str(
                    "; patterns must be valid in both ECMA-262 and Rust regex syntax (no look-around, no \
                     back-references)",
                )
            }
            PatternProblem::NestedRepetition { pattern, inner } => write!(
                f,
                "the pattern `{pattern}` nests unbounded repetition (`{inner}` inside a repeated group): {SLOW}; \
                 remove the inner or outer quantifier (`(a+)+` → `a+`), or end each iteration with a character the \
                 inner repetition cannot match (`([a-z]+-)*`)"
            ),
            PatternProblem::AmbiguousAlternation { pattern, alternation } => write!(
                f,
                "the pattern `{pattern}` repeats an alternation whose branches match the same text (`{alternation}` \
                 inside an unbounded repetition): {SLOW}; make the branches match different text or merge them \
                 (`(a|a)*` → `a*`, `(\\w|\\d)+` → `\\w+`)"
            ),
        }
    }
}

impl std::error::Error for PatternProblem {}

/// Checks a `pattern`: it parses (in Rust's `regex` syntax, which shares its core with
/// ECMA-262), and it cannot backtrack exponentially (see the module documentation).
///
/// ```
/// use mcpeye_contract::{pattern_problem, Rule};
///
/// assert_eq!(pattern_problem("^[a-z]+(-[a-z]+)*$"), None);
/// assert_eq!(pattern_problem("(a+)+").unwrap().rule(), Rule::BacktrackingPattern);
/// assert_eq!(pattern_problem("(a|a)*").unwrap().rule(), Rule::BacktrackingPattern);
/// assert_eq!(pattern_problem("[a-z").unwrap().rule(), Rule::InvalidPattern);
/// ```
pub fn pattern_problem(pattern: &str) -> Option<PatternProblem> {
    let ast = match ast::parse::Parser::new().parse(pattern) {
        Ok(ast) => ast,
        Err(e) => return Some(unparseable(pattern, e.kind(), e.span())),
    };
    if let Err(e) = hir::translate::Translator::new().translate(pattern, &ast) {
        return Some(unparseable(pattern, e.kind(), e.span()));
    }
    let text = |r: Range<usize>| pattern.get(r).unwrap_or_default().to_owned();
    if let Some(r) = nested_unbounded(pattern, &ast) {
        return Some(PatternProblem::NestedRepetition { pattern: pattern.to_owned(), inner: text(r) });
    }
    if let Some(r) = ambiguous_alternation(pattern, &ast, false) {
        return Some(PatternProblem::AmbiguousAlternation { pattern: pattern.to_owned(), alternation: text(r) });
    }
    None
}

fn unparseable(pattern: &str, reason: &dyn fmt::Display, span: &ast::Span) -> PatternProblem {
    PatternProblem::Unparseable {
        pattern: pattern.to_owned(),
        reason: reason.to_string(),
        at: pattern.get(range(span)).unwrap_or_default().to_owned(),
    }
}

fn range(span: &ast::Span) -> Range<usize> {
    span.start.offset..span.end.offset
}

fn unbounded(kind: &RepetitionKind) -> bool {
    matches!(
        kind,
        RepetitionKind::ZeroOrMore | RepetitionKind::OneOrMore | RepetitionKind::Range(RepetitionRange::AtLeast(_))
    )
}

/// `ast` on its own, as the matcher sees it (`None` if it does not translate alone).
fn translate(pattern: &str, ast: &Ast) -> Option<Hir> {
    hir::translate::Translator::new().translate(pattern, ast).ok()
}

/// The first unbounded repetition that can make up a whole iteration of an enclosing
/// unbounded repetition, as a byte range of the pattern.
fn nested_unbounded(pattern: &str, ast: &Ast) -> Option<Range<usize>> {
    match ast {
        Ast::Repetition(rep) => {
            if unbounded(&rep.op.kind) {
                if let Some(inner) = ambiguous_body(pattern, &rep.ast) {
                    return Some(inner);
                }
            }
            nested_unbounded(pattern, &rep.ast)
        }
        Ast::Group(group) => nested_unbounded(pattern, &group.ast),
        Ast::Alternation(alt) => alt.asts.iter().find_map(|a| nested_unbounded(pattern, a)),
        Ast::Concat(concat) => concat.asts.iter().find_map(|a| nested_unbounded(pattern, a)),
        _ => None,
    }
}

/// In the body of an unbounded repetition: an unbounded repetition that can match text and is
/// not pinned by a sibling that needs a character it cannot match.
fn ambiguous_body(pattern: &str, body: &Ast) -> Option<Range<usize>> {
    match body {
        Ast::Group(group) => ambiguous_body(pattern, &group.ast),
        Ast::Repetition(rep) if unbounded(&rep.op.kind) => {
            let matches_text = translate(pattern, &rep.ast).is_none_or(|h| h.properties().maximum_len() != Some(0));
            matches_text.then(|| range(&rep.span))
        }
        Ast::Repetition(rep) => ambiguous_body(pattern, &rep.ast),
        Ast::Alternation(alt) => alt.asts.iter().find_map(|a| ambiguous_body(pattern, a)),
        Ast::Concat(concat) => {
            for (i, sub) in concat.asts.iter().enumerate() {
                let Some(inner) = unbounded_inside(sub) else { continue };
                let class = translate(pattern, &inner.ast).and_then(|h| single_class(&h));
                let pinned = class.is_some_and(|class| {
                    concat.asts.iter().enumerate().any(|(j, other)| {
                        j != i && translate(pattern, other).is_some_and(|h| needs_char_outside(&h, &class))
                    })
                });
                if !pinned {
                    return Some(range(&inner.span));
                }
            }
            None
        }
        _ => None,
    }
}

/// The first unbounded repetition in `ast`, looking through groups, bounded repetitions,
/// concatenations and alternations.
fn unbounded_inside(ast: &Ast) -> Option<&ast::Repetition> {
    match ast {
        Ast::Repetition(rep) if unbounded(&rep.op.kind) => Some(rep),
        Ast::Repetition(rep) => unbounded_inside(&rep.ast),
        Ast::Group(group) => unbounded_inside(&group.ast),
        Ast::Concat(concat) => concat.asts.iter().find_map(unbounded_inside),
        Ast::Alternation(alt) => alt.asts.iter().find_map(unbounded_inside),
        _ => None,
    }
}

/// Whether every match of `hir` contains a character outside `class`.
fn needs_char_outside(hir: &Hir, class: &ClassUnicode) -> bool {
    match hir.kind() {
        HirKind::Literal(lit) => std::str::from_utf8(&lit.0).is_ok_and(|s| s.chars().any(|c| !contains(class, c))),
        HirKind::Class(Class::Unicode(other)) => {
            let mut both = other.clone();
            both.intersect(class);
            both.ranges().is_empty() && !other.ranges().is_empty()
        }
        HirKind::Capture(cap) => needs_char_outside(&cap.sub, class),
        HirKind::Repetition(rep) => rep.min > 0 && needs_char_outside(&rep.sub, class),
        HirKind::Concat(subs) => subs.iter().any(|s| needs_char_outside(s, class)),
        HirKind::Alternation(subs) => subs.iter().all(|s| needs_char_outside(s, class)),
        _ => false,
    }
}

fn contains(class: &ClassUnicode, c: char) -> bool {
    class.ranges().iter().any(|r| r.start() <= c && c <= r.end())
}

/// The character class of a one-character expression (`a`, `\d`, `[a-z]`, `.`).
fn single_class(hir: &Hir) -> Option<ClassUnicode> {
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            chars.next().is_none().then(|| ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
        }
        HirKind::Capture(cap) => single_class(&cap.sub),
        _ => None,
    }
}

/// An alternation inside an unbounded repetition with two branches matching the same text.
/// Done on the syntax tree: translation merges `a|a` into one class.
fn ambiguous_alternation(pattern: &str, ast: &Ast, inside: bool) -> Option<Range<usize>> {
    match ast {
        Ast::Repetition(rep) => ambiguous_alternation(pattern, &rep.ast, inside || unbounded(&rep.op.kind)),
        Ast::Group(group) => ambiguous_alternation(pattern, &group.ast, inside),
        Ast::Concat(concat) => concat.asts.iter().find_map(|a| ambiguous_alternation(pattern, a, inside)),
        Ast::Alternation(alt) => {
            if inside {
                let branches: Vec<Option<Hir>> = alt.asts.iter().map(|a| translate(pattern, a)).collect();
                for (i, a) in branches.iter().enumerate() {
                    for b in &branches[i + 1..] {
                        if let (Some(a), Some(b)) = (a, b) {
                            if overlap(a, b) {
                                return Some(range(&alt.span));
                            }
                        }
                    }
                }
            }
            alt.asts.iter().find_map(|a| ambiguous_alternation(pattern, a, inside))
        }
        _ => None,
    }
}

fn overlap(a: &Hir, b: &Hir) -> bool {
    if a == b && a.properties().minimum_len() != Some(0) {
        return true;
    }
    match (single_class(a), single_class(b)) {
        (Some(mut a), Some(b)) => {
            a.intersect(&b);
            !a.ranges().is_empty()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(p: &str) -> Option<Rule> {
        pattern_problem(p).map(|problem| problem.rule())
    }

    #[test]
    fn catastrophic_patterns_are_refused() {
        for p in [
            "(a+)+",
            "^(a+)+$",
            r"(\w*)*",
            r"^(\w*)*$",
            "(a|a)*",
            r"(\w|\d)+$",
            r"^(\w+\s?)*$",
            "(?:x+x+)+y",
            "(a+a)*",
            "((ab)*)+",
            "(a{2,})*",
            "(ab|ab)+",
            "(x|y+)*",
            "(a?b+)+",
            "((a?)*)*",
            "((a+){2})*",
            "(a*)*b",
            "([a-z]+)*$",
        ] {
            assert_eq!(rule(p), Some(Rule::BacktrackingPattern), "{p} should be refused");
        }
    }

    #[test]
    fn ordinary_patterns_pass() {
        for p in [
            "^[a-z0-9-]+$",
            r"^\d+(\.\d+)*$",
            "^([a-z]+-)*[a-z]+$",
            r"^[A-Z]{2}\d{4}$",
            "(a+b)*",
            "(ab+)*",
            "^(ab|cd)*$",
            r"^\S+@\S+\.\S+$",
            "^(foo|bar)+$",
            r"\d{2,}",
            "(a+){2}",
            r"(\b)*",
        ] {
            assert_eq!(pattern_problem(p), None, "{p} should pass");
        }
    }

    #[test]
    fn invalid_patterns() {
        for p in ["(", "[a-z", "[z-a]", r"\p{NoSuchClass}", "a{2,1}", "(?<=a)b", r"(a)\1"] {
            assert_eq!(rule(p), Some(Rule::InvalidPattern), "{p} should be invalid");
        }
    }

    #[test]
    fn messages_quote_the_culprit() {
        let m = pattern_problem("^(a+)+$").unwrap().to_string();
        assert!(m.contains("(`a+` inside a repeated group)"), "{m}");
        let m = pattern_problem("^(b|a|a)*$").unwrap().to_string();
        assert!(m.contains("(`b|a|a` inside an unbounded repetition)"), "{m}");
        let m = pattern_problem("[a-z").unwrap().to_string();
        assert!(m.contains("unclosed character class (at `[`)"), "{m}");
    }
}
