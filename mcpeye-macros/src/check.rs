//! The compile-time contract of a tool: everything wrong is reported, each on its own token.

use crate::errors::Errors;
use crate::parse::{doc_text, fn_docs, ParamKind, ToolAttr, ToolFn};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
use syn::spanned::Spanned;
use syn::Type;

/// Same values as the runtime's `contract.rs` (the macro crate cannot depend on it).
const RESERVED_TOOL_NAME: &str = "mcpeye_request_capability";
const INTENT_NAMES: &[&str] = &["mcpeyeIntent", "mcpeye_intent"];
const MAX_TOOL_NAME: usize = 128;
const MAX_PROPERTY_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 8192;

/// Checks one tool; problems go into `errors`.
pub fn check(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    check_name(attr, tool, errors);
    check_description(attr, tool, errors);
    check_annotations(attr, errors);
    check_signature(tool, errors);
    check_params(tool, errors);
}

/// The tool name as registered, with the span to blame.
pub fn tool_name(attr: &ToolAttr, tool: &ToolFn) -> (String, Span) {
    match &attr.name {
        Some(l) => (l.value(), l.span()),
        None => {
            let s = tool.item.sig.ident.to_string();
            (s.strip_prefix("r#").map(str::to_owned).unwrap_or(s), tool.item.sig.ident.span())
        }
    }
}

fn check_name(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    let (name, span) = tool_name(attr, tool);
    let from_fn = attr.name.is_none();
    let fix =
        if from_fn { "; rename the function or give the tool a name: `#[mcpeye::tool(name = \"…\")]`" } else { "" };
    if name.is_empty() {
        errors.at(span, "the tool name is empty: MCP tool names are 1 to 128 characters from `A-Za-z0-9_.-`");
    } else if name.len() > MAX_TOOL_NAME {
        errors.at(
            span,
            format!("the tool name is {} characters long; MCP allows at most {MAX_TOOL_NAME}{fix}", name.len()),
        );
    } else if let Some(c) = name.chars().find(|c| !valid_name_char(*c)) {
        errors.at(span, format!("the tool name `{name}` contains {c:?}; MCP tool names use only `A-Za-z0-9_.-`{fix}"));
    } else if name == RESERVED_TOOL_NAME {
        errors.at(
            span,
            format!("`{RESERVED_TOOL_NAME}` is reserved for mcpeye's own tool (agents report missing capabilities through it); choose another name"),
        );
    }
}

fn valid_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn check_description(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    let (text, span) = match &attr.description {
        Some(l) => (Some(l.value()), l.span()),
        None => {
            let docs = fn_docs(&tool.item);
            if docs.is_empty() {
                errors.at(
                    tool.item.sig.ident.span(),
                    "this tool has no description: the agent reads it to decide when to call the tool; add a `///` \
                     doc comment to the function or `#[mcpeye::tool(description = \"…\")]`",
                );
                return;
            }
            let span = docs.first().map(Spanned::span).unwrap_or_else(Span::call_site);
            (doc_text(&docs), span)
        }
    };
    // A doc built by a macro (`#[doc = include_str!(…)]`) cannot be measured here.
    let Some(text) = text else { return };
    if text.trim().is_empty() {
        errors.at(span, "the tool description is empty: say what the tool does and when to use it");
    } else if text.chars().count() > MAX_DESCRIPTION {
        errors.at(
            span,
            format!(
                "the tool description is {} characters long; keep it under {MAX_DESCRIPTION} (every agent reads it \
                 on each `tools/list`): move details to `description = \"…\"` and keep the long doc for rustdoc",
                text.chars().count()
            ),
        );
    }
}

fn check_annotations(attr: &ToolAttr, errors: &mut Errors) {
    if let (Some(r), Some(d)) = (attr.read_only, attr.destructive) {
        if r.value && d.value {
            errors.at(
                d.span,
                "a tool cannot be both `read_only` and `destructive`: remove one (MCP ignores `destructive` on a \
                 read-only tool)",
            );
        }
    }
    if let Some(t) = &attr.title {
        if t.value().trim().is_empty() {
            errors.at(t.span(), "the title is empty: give a short human-readable title or remove `title`");
        }
    }
}

fn check_signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    if let Some(lt) = &sig.generics.lt_token {
        errors.at(
            lt.span.join(sig.generics.gt_token.map(|g| g.span).unwrap_or(lt.span)).unwrap_or(lt.span),
            "a tool cannot be generic: its input schema is generated for concrete types; use concrete parameter types",
        );
    } else if let Some(w) = &sig.generics.where_clause {
        errors.spanned(w, "a tool cannot have a `where` clause: use concrete parameter types");
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.spanned(u, "a tool cannot be `unsafe fn`: the dispatcher calls it with no way to uphold its contract");
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, "a tool cannot be variadic");
    }
}

fn check_params(tool: &ToolFn, errors: &mut Errors) {
    let mut names: Vec<(String, Span)> = Vec::new();
    let mut args_form: Option<Span> = None;
    let mut first_field: Option<Span> = None;
    for p in &tool.params {
        check_type(&p.ty, errors);
        match &p.kind {
            ParamKind::State(_) => {}
            ParamKind::Args(_) => {
                if args_form.is_some() {
                    errors.at(p.span, "a tool takes at most one `mcpeye::Args<T>` parameter: put every field in `T`");
                } else if first_field.is_some() {
                    errors.at(p.span, mixed_forms());
                }
                args_form.get_or_insert(p.span);
            }
            ParamKind::Field(f) => {
                if first_field.is_none() && args_form.is_some() {
                    errors.at(p.span, mixed_forms());
                }
                first_field.get_or_insert(p.span);
                if p.docs.is_empty() {
                    errors.spanned(
                        &f.ident,
                        format!(
                            "parameter `{}` has no description: add a `///` doc comment above it (it becomes the \
                             property's description, which the agent reads to fill it in)",
                            f.ident
                        ),
                    );
                } else if doc_text(&p.docs).is_some_and(|t| t.trim().is_empty()) {
                    errors.spanned(&f.ident, format!("the doc comment of parameter `{}` is empty", f.ident));
                }
                let name = &f.json_name;
                if INTENT_NAMES.contains(&name.as_str()) {
                    errors.at(
                        f.json_name_span,
                        format!(
                            "`{name}` is reserved: mcpeye adds the `mcpeyeIntent` property to every tool and strips \
                             it before the call; rename this parameter (or use `#[mcpeye::tool(intent = false)]` \
                             to turn intent capture off)"
                        ),
                    );
                } else if name.is_empty() || name.len() > MAX_PROPERTY_NAME || !name.chars().all(valid_name_char) {
                    errors.at(
                        f.json_name_span,
                        format!(
                            "`{name}` is not a valid property name: MCP clients accept 1 to {MAX_PROPERTY_NAME} \
                             characters from `A-Za-z0-9_.-`; use `#[serde(rename = \"…\")]` to choose another"
                        ),
                    );
                }
                if let Some((_, first)) = names.iter().find(|(n, _)| n == name) {
                    let _ = first;
                    errors.at(
                        f.json_name_span,
                        format!(
                            "two parameters have the JSON name `{name}`: rename one with `#[serde(rename = \"…\")]`"
                        ),
                    );
                }
                names.push((name.clone(), f.json_name_span));
                if let Some(s) = f.flatten {
                    errors.at(
                        s,
                        "`#[serde(flatten)]` is not supported on tool parameters: take the whole object as \
                         `mcpeye::Args<T>` instead",
                    );
                }
                for pat in &f.patterns {
                    check_pattern(pat, errors);
                }
            }
        }
    }
}

fn mixed_forms() -> &'static str {
    "`mcpeye::Args<T>` and documented parameters cannot be mixed: either move every documented parameter into \
     `T` as a field, or replace `Args<T>` by one documented parameter per field"
}

/// Types that cannot be read from JSON arguments: references, borrowed lifetimes, `impl Trait`.
fn check_type(ty: &Type, errors: &mut Errors) {
    if let Type::Reference(r) = ty {
        let fix = match &*r.elem {
            Type::Path(p) if p.path.is_ident("str") => "take `String`".to_owned(),
            Type::Slice(s) => format!("take `Vec<{}>`", s.elem.to_token_stream()),
            other => format!("take `{}` by value", other.to_token_stream()),
        };
        errors.spanned(
            ty,
            format!(
                "a tool parameter cannot be a reference: arguments are parsed from JSON and owned by the call; {fix}"
            ),
        );
        return;
    }
    scan_type_tokens(ty.to_token_stream(), errors);
}

fn scan_type_tokens(ts: TokenStream, errors: &mut Errors) {
    let mut iter = ts.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Group(g) => scan_type_tokens(g.stream(), errors),
            TokenTree::Ident(i) if i == "impl" => {
                errors.at(i.span(), "a tool parameter cannot be `impl Trait`: the input schema needs a concrete type");
                return;
            }
            TokenTree::Punct(p) if p.as_char() == '&' => {
                errors.at(p.span(), "a tool parameter cannot contain references: use owned types (`String`, `Vec<T>`)");
                return;
            }
            TokenTree::Punct(p) if p.as_char() == '\'' => {
                if let Some(TokenTree::Ident(name)) = iter.peek() {
                    if name != "static" {
                        errors.at(
                            p.span().join(name.span()).unwrap_or(p.span()),
                            "a tool parameter cannot borrow (`'…` lifetime): use owned types (`String`, `Vec<T>`)",
                        );
                        return;
                    }
                }
            }
            _ => {}
        }
    }
}

/// A `pattern` must parse, and must not nest unbounded repetition (`(a+)+`): clients run it in
/// backtracking engines, where that is exponential.
fn check_pattern(lit: &syn::LitStr, errors: &mut Errors) {
    let pattern = lit.value();
    match regex_syntax::ast::parse::Parser::new().parse(&pattern) {
        Err(e) => errors.at(
            lit.span(),
            format!(
                "this pattern does not parse: {} (at {:?}); patterns must be valid in both ECMA-262 and Rust regex \
                 syntax",
                e.kind(),
                &pattern[e.span().start.offset..e.span().end.offset]
            ),
        ),
        Ok(ast) => {
            if let Some(inner) = nested_unbounded(&ast).map(|r| &pattern[r]) {
                errors.at(
                    lit.span(),
                    format!(
                        "this pattern nests unbounded repetition (`{inner}` inside a repeated group): backtracking \
                         regex engines in MCP clients take exponential time on it; remove the inner or outer \
                         quantifier (e.g. `(a+)+` → `a+`)"
                    ),
                );
            }
        }
    }
}

fn unbounded(kind: &RepetitionKind) -> bool {
    matches!(
        kind,
        RepetitionKind::ZeroOrMore | RepetitionKind::OneOrMore | RepetitionKind::Range(RepetitionRange::AtLeast(_))
    )
}

fn may_be_empty(ast: &Ast) -> bool {
    match ast {
        Ast::Empty(_) | Ast::Flags(_) | Ast::Assertion(_) => true,
        Ast::Repetition(r) => {
            matches!(
                r.op.kind,
                RepetitionKind::ZeroOrOne
                    | RepetitionKind::ZeroOrMore
                    | RepetitionKind::Range(RepetitionRange::AtLeast(0))
                    | RepetitionKind::Range(RepetitionRange::Bounded(0, _))
                    | RepetitionKind::Range(RepetitionRange::Exactly(0))
            ) || may_be_empty(&r.ast)
        }
        Ast::Group(g) => may_be_empty(&g.ast),
        Ast::Concat(c) => c.asts.iter().all(may_be_empty),
        Ast::Alternation(a) => a.asts.iter().any(may_be_empty),
        _ => false,
    }
}

/// An unbounded repetition that can make up a whole iteration of an enclosing unbounded
/// repetition (`(a+)+`, `(\w*)*`, `(x|y+)*`, `(a?b+)+`): the iterations can split the input in
/// exponentially many ways. Returns its byte range in the pattern.
fn ambiguous_body(ast: &Ast) -> Option<std::ops::Range<usize>> {
    match ast {
        Ast::Group(g) => ambiguous_body(&g.ast),
        Ast::Repetition(r) if unbounded(&r.op.kind) => Some(r.span.start.offset..r.span.end.offset),
        Ast::Repetition(r) => ambiguous_body(&r.ast),
        Ast::Alternation(a) => a.asts.iter().find_map(ambiguous_body),
        Ast::Concat(c) => {
            let found = c.asts.iter().enumerate().find_map(|(i, x)| ambiguous_body(x).map(|r| (i, r)))?;
            c.asts.iter().enumerate().all(|(i, x)| i == found.0 || may_be_empty(x)).then_some(found.1)
        }
        _ => None,
    }
}

/// The first ambiguous nesting of unbounded repetitions, as a byte range of the pattern.
fn nested_unbounded(ast: &Ast) -> Option<std::ops::Range<usize>> {
    match ast {
        Ast::Repetition(r) => {
            if unbounded(&r.op.kind) {
                if let Some(inner) = ambiguous_body(&r.ast) {
                    return Some(inner);
                }
            }
            nested_unbounded(&r.ast)
        }
        Ast::Group(g) => nested_unbounded(&g.ast),
        Ast::Alternation(a) => a.asts.iter().find_map(nested_unbounded),
        Ast::Concat(c) => c.asts.iter().find_map(nested_unbounded),
        _ => None,
    }
}
