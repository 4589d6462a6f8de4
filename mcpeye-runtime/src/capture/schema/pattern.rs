//! Checks of `pattern` keywords: they must parse, and must not invite catastrophic
//! backtracking in the (backtracking, ECMAScript) regex engines of MCP clients.
//!
//! The backtracking check is a heuristic over the parsed pattern. Inside a repetition without
//! an upper bound (`*`, `+`, `{n,}`) it refuses:
//! - another unbounded repetition (`(a+)+`, `(\w*)*`, `(\w+\s?)*`), unless the outer body also
//!   needs a character the inner repetition cannot match, which pins every iteration
//!   (`(\.\d+)*` and `([a-z]+-)*` are fine);
//! - an alternation with two branches that match the same text (`(a|a)*`, `(\w|\d)+`).

use regex_syntax::ast::{self, Ast};
use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// Why a pattern is refused.
pub(crate) enum PatternIssue {
    /// It does not parse; the parser's message.
    Invalid(String),
    /// It may backtrack catastrophically; which construct.
    Backtracking(&'static str),
}

pub(crate) fn check(pattern: &str) -> Option<PatternIssue> {
    let ast = match ast::parse::Parser::new().parse(pattern) {
        Ok(ast) => ast,
        Err(e) => return Some(PatternIssue::Invalid(e.kind().to_string())),
    };
    let hir = match hir::translate::Translator::new().translate(pattern, &ast) {
        Ok(hir) => hir,
        Err(e) => return Some(PatternIssue::Invalid(e.kind().to_string())),
    };
    if nested_unbounded(&hir) {
        return Some(PatternIssue::Backtracking("an unbounded repetition nested inside another one"));
    }
    if ambiguous_alternation(pattern, &ast, false) {
        return Some(PatternIssue::Backtracking(
            "an alternation whose branches match the same text, inside an unbounded repetition",
        ));
    }
    None
}

fn is_unbounded(rep: &hir::Repetition) -> bool {
    rep.max.is_none()
}

fn nested_unbounded(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Repetition(rep) if is_unbounded(rep) => body_is_ambiguous(&rep.sub) || nested_unbounded(&rep.sub),
        HirKind::Repetition(rep) => nested_unbounded(&rep.sub),
        HirKind::Capture(cap) => nested_unbounded(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(nested_unbounded),
        _ => false,
    }
}

/// Whether the body of an unbounded repetition holds an unbounded repetition that is not
/// pinned by a separator the inner repetition cannot match.
fn body_is_ambiguous(body: &Hir) -> bool {
    match body.kind() {
        HirKind::Capture(cap) => body_is_ambiguous(&cap.sub),
        HirKind::Repetition(rep) if is_unbounded(rep) => rep.sub.properties().minimum_len() != Some(0),
        HirKind::Repetition(rep) => body_is_ambiguous(&rep.sub),
        HirKind::Alternation(subs) => subs.iter().any(body_is_ambiguous),
        HirKind::Concat(subs) => {
            for (i, sub) in subs.iter().enumerate() {
                let Some(inner) = unbounded_inside(sub) else { continue };
                let class = single_class(&inner.sub);
                let pinned = subs
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && class.as_ref().is_some_and(|c| needs_char_outside(other, c)));
                if !pinned {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// The first unbounded repetition in `hir`, looking through groups and bounded repetitions.
fn unbounded_inside(hir: &Hir) -> Option<&hir::Repetition> {
    match hir.kind() {
        HirKind::Repetition(rep) if is_unbounded(rep) => Some(rep),
        HirKind::Repetition(rep) => unbounded_inside(&rep.sub),
        HirKind::Capture(cap) => unbounded_inside(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().find_map(unbounded_inside),
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

/// Looks for an alternation inside an unbounded repetition with two branches matching the
/// same text. Done on the syntax tree: translation merges `a|a` into one class.
fn ambiguous_alternation(pattern: &str, ast: &Ast, inside: bool) -> bool {
    match ast {
        Ast::Repetition(rep) => {
            let unbounded = matches!(
                rep.op.kind,
                ast::RepetitionKind::ZeroOrMore
                    | ast::RepetitionKind::OneOrMore
                    | ast::RepetitionKind::Range(ast::RepetitionRange::AtLeast(_))
            );
            ambiguous_alternation(pattern, &rep.ast, inside || unbounded)
        }
        Ast::Group(group) => ambiguous_alternation(pattern, &group.ast, inside),
        Ast::Concat(concat) => concat.asts.iter().any(|a| ambiguous_alternation(pattern, a, inside)),
        Ast::Alternation(alt) => {
            if inside {
                let branches: Vec<Option<Hir>> =
                    alt.asts.iter().map(|a| hir::translate::Translator::new().translate(pattern, a).ok()).collect();
                for (i, a) in branches.iter().enumerate() {
                    for b in &branches[i + 1..] {
                        if let (Some(a), Some(b)) = (a, b) {
                            if overlap(a, b) {
                                return true;
                            }
                        }
                    }
                }
            }
            alt.asts.iter().any(|a| ambiguous_alternation(pattern, a, inside))
        }
        _ => false,
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

    fn refused(p: &str) -> bool {
        matches!(check(p), Some(PatternIssue::Backtracking(_)))
    }

    #[test]
    fn catastrophic_patterns_are_refused() {
        for p in [
            "(a+)+",
            "^(a+)+$",
            r"(\w*)*",
            "(a|a)*",
            r"(\w|\d)+$",
            r"^(\w+\s?)*$",
            "(?:x+x+)+y",
            "(a+a)*",
            "((ab)*)+",
            "(a{2,})*",
            "(ab|ab)+",
        ] {
            assert!(refused(p), "{p} should be refused");
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
            "^(ab|cd)*$",
            r"^\S+@\S+\.\S+$",
            "^(foo|bar)+$",
        ] {
            assert!(check(p).is_none(), "{p} should pass");
        }
    }

    #[test]
    fn invalid_patterns() {
        for p in ["(", "[z-a]", r"\p{NoSuchClass}", "a{2,1}"] {
            assert!(matches!(check(p), Some(PatternIssue::Invalid(_))), "{p} should be invalid");
        }
    }
}
