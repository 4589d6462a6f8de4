//! The compile-time contract of a tool: everything wrong is reported, each on its own token.
//!
//! The rules that the runtime checks again when a manifest is built (names, reserved names,
//! description length, patterns) come from `mcpeye-contract`, messages included; this module
//! only adds what the runtime cannot see (docs, signatures, attributes).

use crate::errors::Errors;
use crate::parse::{doc_text, fn_docs, ParamKind, ToolAttr, ToolFn};
use mcpeye_contract::{
    argument_name_problem, icon_problem, pattern_problem, timeout_problem, tool_description_problem, tool_name_problem,
    tool_title_problem, IconProblem,
};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Type;

/// Checks one tool; problems go into `errors`.
pub fn check(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    check_name(attr, tool, errors);
    check_description(attr, tool, errors);
    check_annotations(attr, errors);
    check_timeout(attr, tool, errors);
    check_icons(attr, errors);
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
    if let Some(problem) = tool_name_problem(&name) {
        // A name given with `name = "…"` is fixed there, not by setting it again.
        match attr.name {
            Some(_) => errors.at(span, problem.message_for_name_value()),
            None => errors.at(span, problem),
        }
    }
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
    if let Some(problem) = tool_description_problem(&text) {
        errors.at(span, problem);
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
        if let Some(problem) = tool_title_problem(&t.value()) {
            errors.at(t.span(), problem);
        }
    }
}

fn check_timeout(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    if let Some(t) = attr.timeout_ms {
        if let Some(problem) = timeout_problem(t.ms, tool.item.sig.asyncness.is_some()) {
            errors.at(t.span, problem);
        }
    }
}

fn check_icons(attr: &ToolAttr, errors: &mut Errors) {
    for icon in &attr.icons {
        let (src, mime, theme) =
            (icon.src.value(), icon.mime_type.as_ref().map(|m| m.value()), icon.theme.as_ref().map(|t| t.value()));
        let Some(problem) = icon_problem(&src, mime.as_deref(), theme.as_deref()) else { continue };
        let span = match problem {
            IconProblem::MimeType { .. } => icon.mime_type.as_ref().map(|m| m.span()),
            IconProblem::Theme { .. } => icon.theme.as_ref().map(|t| t.span()),
            _ => None,
        };
        errors.at(span.unwrap_or_else(|| icon.src.span()), problem);
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
        // SAFETY: no unsafe code: the word is the diagnostic's, about the user's `unsafe fn`.
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
    let mut context: Option<Span> = None;
    for p in &tool.params {
        if !matches!(p.kind, ParamKind::Context) {
            check_type(&p.ty, errors);
        }
        match &p.kind {
            ParamKind::State(_) => {}
            ParamKind::Context => {
                if context.is_some() {
                    errors.at(
                        p.span,
                        "a tool takes at most one `mcpeye::Context` parameter: it is cheap to clone, clone it \
                         where you need a second one",
                    );
                }
                context.get_or_insert(p.span);
            }
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
                if let Some(problem) = argument_name_problem(name) {
                    errors.at(f.json_name_span, problem);
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

/// A `pattern` must parse, and must not backtrack exponentially in the clients' engines.
fn check_pattern(lit: &syn::LitStr, errors: &mut Errors) {
    if let Some(problem) = pattern_problem(&lit.value()) {
        errors.at(lit.span(), problem);
    }
}

/// The macro's verdict on the shared table of cases (`mcpeye_contract::cases`), which
/// `tests/contract_rules.rs` runs through the runtime's manifest build: both must agree, in the
/// same words.
#[cfg(test)]
mod contract_cases {
    use super::*;
    use crate::parse::{parse_attr, parse_fn};
    use mcpeye_contract::cases::{
        Verdict, ARGUMENT_NAME_CASES, DESCRIPTION_CASES, ICON_CASES, PATTERN_CASES, TIMEOUT_CASES, TITLE_CASES,
        TOOL_NAME_CASES,
    };
    use mcpeye_contract::Rule;
    use quote::quote;
    use syn::LitStr;

    /// The messages of `#[mcpeye::tool(attr)] item`, from parse and check.
    fn messages(attr: TokenStream, item: TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        let attr = parse_attr(attr, &mut errors);
        let tool = parse_fn(syn::parse2(item).expect("a function"), &mut errors);
        check(&attr, &tool, &mut errors);
        errors.messages()
    }

    /// `Ok`: no message. `Refused(rule)`: exactly the contract's message, for that rule.
    fn assert_verdict(input: &str, expected: Verdict, got: Vec<String>, contract: Option<(Rule, String)>) {
        let shown: String = input.chars().take(40).collect();
        match expected {
            Verdict::Ok => assert_eq!(got, Vec::<String>::new(), "{shown:?} should compile"),
            Verdict::Refused(rule) => {
                let (contract_rule, message) = contract.unwrap_or_else(|| panic!("the contract accepts {shown:?}"));
                assert_eq!(contract_rule, rule, "{shown:?}");
                assert_eq!(got, vec![message], "{shown:?} should be refused for {rule}");
            }
        }
    }

    fn lit(s: &str) -> LitStr {
        LitStr::new(s, Span::call_site())
    }

    #[test]
    fn tool_names() {
        for (name, verdict) in TOOL_NAME_CASES {
            let name_lit = lit(name);
            let item = quote! { #[doc = " Does things."] fn f() {} };
            let got = messages(quote!(name = #name_lit), item);
            // Given with `name = "…"`: the contract's words, with the fix that points at that value.
            let contract = tool_name_problem(name).map(|p| (p.rule(), p.message_for_name_value()));
            assert_verdict(name, *verdict, got, contract);
        }
    }

    #[test]
    fn argument_names() {
        for (name, verdict) in ARGUMENT_NAME_CASES {
            let name_lit = lit(name);
            let item = quote! {
                #[doc = " Does things."]
                fn f(#[doc = " A parameter."] #[serde(rename = #name_lit)] x: String) {}
            };
            let got = messages(TokenStream::new(), item);
            assert_verdict(name, *verdict, got, argument_name_problem(name).map(|p| (p.rule(), p.to_string())));
        }
    }

    #[test]
    fn descriptions() {
        for (text, verdict) in DESCRIPTION_CASES {
            let text_lit = lit(text);
            let got = messages(quote!(description = #text_lit), quote! { fn f() {} });
            assert_verdict(text, *verdict, got, tool_description_problem(text).map(|p| (p.rule(), p.to_string())));
        }
    }

    #[test]
    fn timeouts() {
        for ((ms, is_async), verdict) in TIMEOUT_CASES {
            let ms_lit = proc_macro2::Literal::u64_unsuffixed(*ms);
            let item = if *is_async {
                quote! { #[doc = " Does things."] async fn f() {} }
            } else {
                quote! { #[doc = " Does things."] fn f() {} }
            };
            let got = messages(quote!(timeout_ms = #ms_lit), item);
            let contract = timeout_problem(*ms, *is_async).map(|p| (p.rule(), p.to_string()));
            assert_verdict(&format!("{ms} ms"), *verdict, got, contract);
        }
    }

    #[test]
    fn icons() {
        for ((src, mime_type, theme), verdict) in ICON_CASES {
            let src_lit = lit(src);
            let mut keys = vec![quote!(src = #src_lit)];
            if let Some(m) = mime_type {
                let m = lit(m);
                keys.push(quote!(mime_type = #m));
            }
            if let Some(t) = theme {
                let t = lit(t);
                keys.push(quote!(theme = #t));
            }
            let got = messages(quote!(icon(#(#keys),*)), quote! { #[doc = " Does things."] fn f() {} });
            let contract = icon_problem(src, *mime_type, *theme).map(|p| (p.rule(), p.to_string()));
            assert_verdict(src, *verdict, got, contract);
        }
    }

    #[test]
    fn titles() {
        for (title, verdict) in TITLE_CASES {
            let title_lit = lit(title);
            let got = messages(quote!(title = #title_lit), quote! { #[doc = " Does things."] fn f() {} });
            assert_verdict(title, *verdict, got, tool_title_problem(title).map(|p| (p.rule(), p.to_string())));
        }
    }

    #[test]
    fn patterns() {
        for (pattern, verdict) in PATTERN_CASES {
            let pattern_lit = lit(pattern);
            let item = quote! {
                #[doc = " Does things."]
                fn f(#[doc = " A code."] #[schemars(regex(pattern = #pattern_lit))] code: String) {}
            };
            let got = messages(TokenStream::new(), item);
            assert_verdict(pattern, *verdict, got, pattern_problem(pattern).map(|p| (p.rule(), p.to_string())));
        }
    }
}
