//! Attribute and signature → the model of one tool. Syntax problems are collected, not returned
//! early: the model is as complete as possible so that `check` can report everything at once.

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, FnArg, GenericArgument, Ident, ItemFn, Lit, LitStr, Meta, Pat, PathArguments, Token, Type};

/// Keys accepted by `#[mcpeye::tool(…)]`, in the order of the reference.
pub const KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "intent",
    "timeout_ms",
    "icon",
    "output_schema",
    "normalize_schema",
];

/// Keys that may be given more than once.
const REPEATABLE: &[&str] = &["icon"];

/// Keys of `icon(…)`.
const ICON_KEYS: &[&str] = &["src", "mime_type", "sizes", "theme"];

/// `icon = "…"` or `icon(src = "…", mime_type = "…", sizes = "…", theme = "…")`.
pub struct IconAttr {
    pub src: LitStr,
    pub mime_type: Option<LitStr>,
    /// Space-separated sizes (`"48x48 96x96"`).
    pub sizes: Option<LitStr>,
    pub theme: Option<LitStr>,
}

/// `timeout_ms = N`.
#[derive(Clone, Copy)]
pub struct Timeout {
    pub ms: u64,
    pub span: Span,
}

/// A boolean key (`read_only` or `read_only = false`).
#[derive(Clone, Copy)]
pub struct Flag {
    pub value: bool,
    pub span: Span,
}

/// The arguments of `#[mcpeye::tool(…)]`.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<Flag>,
    pub destructive: Option<Flag>,
    pub idempotent: Option<Flag>,
    pub open_world: Option<Flag>,
    pub intent: Option<Flag>,
    pub timeout_ms: Option<Timeout>,
    pub icons: Vec<IconAttr>,
    pub output_schema: Option<Flag>,
    pub normalize_schema: Option<Flag>,
}

/// Parses the attribute arguments, collecting every problem.
pub fn parse_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(m) => m,
        Err(e) => {
            errors.push(e);
            return attr;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let Some(key) = path.get_ident().map(Ident::to_string) else {
            errors.spanned(path, "expected a key such as `name = \"…\"` or `read_only`");
            continue;
        };
        if !KEYS.contains(&key.as_str()) {
            let hint = match closest(&key) {
                Some(k) => format!("did you mean `{k}`? "),
                None => String::new(),
            };
            errors.spanned(path, format!("unknown key `{key}` in #[mcpeye::tool]: {hint}the keys are {}", key_list()));
            continue;
        }
        if seen.contains(&key) && !REPEATABLE.contains(&key.as_str()) {
            errors.spanned(path, format!("`{key}` is given twice: keep one"));
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            "timeout_ms" => {
                if let Some(t) = timeout_value(&meta, errors) {
                    attr.timeout_ms = Some(t);
                }
            }
            "icon" => {
                if let Some(icon) = icon_value(&meta, errors) {
                    attr.icons.push(icon);
                }
            }
            "name" | "title" | "description" => {
                let Some(lit) = string_value(&meta, &key, errors) else { continue };
                let slot = match key.as_str() {
                    "name" => &mut attr.name,
                    "title" => &mut attr.title,
                    _ => &mut attr.description,
                };
                *slot = Some(lit);
            }
            _ => {
                let Some(flag) = flag_value(&meta, &key, errors) else { continue };
                let slot = match key.as_str() {
                    "read_only" => &mut attr.read_only,
                    "destructive" => &mut attr.destructive,
                    "idempotent" => &mut attr.idempotent,
                    "open_world" => &mut attr.open_world,
                    "output_schema" => &mut attr.output_schema,
                    "normalize_schema" => &mut attr.normalize_schema,
                    _ => &mut attr.intent,
                };
                *slot = Some(flag);
            }
        }
    }
    attr
}

fn key_list() -> String {
    KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

fn string_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    if let Meta::NameValue(nv) = meta {
        if let Expr::Lit(l) = &nv.value {
            if let Lit::Str(s) = &l.lit {
                return Some(s.clone());
            }
        }
        errors.spanned(&nv.value, format!("`{key}` takes a string literal: `{key} = \"…\"`"));
    } else {
        errors.spanned(meta, format!("`{key}` takes a string literal: `{key} = \"…\"`"));
    }
    None
}

fn timeout_value(meta: &Meta, errors: &mut Errors) -> Option<Timeout> {
    const FIX: &str = "`timeout_ms` takes a whole number of milliseconds: `timeout_ms = 5000`";
    let Meta::NameValue(nv) = meta else {
        errors.spanned(meta, FIX);
        return None;
    };
    match &nv.value {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) if i.suffix().is_empty() || i.suffix() == "u64" => match i.base10_parse::<u64>() {
                Ok(ms) => Some(Timeout { ms, span: i.span() }),
                Err(_) => {
                    errors.spanned(i, FIX);
                    None
                }
            },
            other => {
                errors.spanned(other, FIX);
                None
            }
        },
        other => {
            errors.spanned(other, FIX);
            None
        }
    }
}

fn icon_value(meta: &Meta, errors: &mut Errors) -> Option<IconAttr> {
    const FIX: &str = "`icon` takes a URL (`icon = \"https://…\"`) or `icon(src = \"…\", mime_type = \"image/png\", \
                       sizes = \"48x48\", theme = \"dark\")`";
    match meta {
        Meta::NameValue(nv) => match lit_str(&nv.value) {
            Some(src) => Some(IconAttr { src, mime_type: None, sizes: None, theme: None }),
            None => {
                errors.spanned(&nv.value, FIX);
                None
            }
        },
        Meta::Path(p) => {
            errors.spanned(p, FIX);
            None
        }
        Meta::List(list) => {
            let items = match list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
                Ok(items) => items,
                Err(e) => {
                    errors.push(e);
                    return None;
                }
            };
            let (mut src, mut mime_type, mut sizes, mut theme) = (None, None, None, None);
            for item in items {
                let key = item.path().get_ident().map(Ident::to_string).unwrap_or_default();
                let value = match &item {
                    Meta::NameValue(nv) => lit_str(&nv.value),
                    _ => None,
                };
                let slot = match key.as_str() {
                    "src" => &mut src,
                    "mime_type" => &mut mime_type,
                    "sizes" => &mut sizes,
                    "theme" => &mut theme,
                    _ => {
                        let keys = ICON_KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                        errors.spanned(item.path(), format!("unknown key `{key}` in `icon(…)`: the keys are {keys}"));
                        continue;
                    }
                };
                match value {
                    Some(v) if slot.is_none() => *slot = Some(v),
                    Some(_) => errors.spanned(item.path(), format!("`{key}` is given twice in `icon(…)`: keep one")),
                    None => errors.spanned(&item, format!("`{key}` takes a string literal: `{key} = \"…\"`")),
                }
            }
            match src {
                Some(src) => Some(IconAttr { src, mime_type, sizes, theme }),
                None => {
                    errors.spanned(list, "`icon(…)` needs `src = \"https://…\"`");
                    None
                }
            }
        }
    }
}

fn flag_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<Flag> {
    match meta {
        Meta::Path(p) => Some(Flag { value: true, span: p.span() }),
        Meta::NameValue(nv) => {
            if let Expr::Lit(l) = &nv.value {
                if let Lit::Bool(b) = &l.lit {
                    return Some(Flag { value: b.value, span: nv.path.span() });
                }
            }
            errors.spanned(&nv.value, format!("`{key}` takes `true` or `false`: write `{key}` or `{key} = false`"));
            None
        }
        Meta::List(l) => {
            errors.spanned(l, format!("`{key}` takes no arguments: write `{key}` or `{key} = false`"));
            None
        }
    }
}

/// The known key closest to `key`, when it is plausibly a typo (`readonly`, `readOnlyHint`).
fn closest(key: &str) -> Option<&'static str> {
    let norm = |s: &str| {
        let s: String = s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect();
        s.strip_suffix("hint").map(str::to_owned).unwrap_or(s)
    };
    let k = norm(key);
    KEYS.iter()
        .map(|cand| (levenshtein(&k, &norm(cand)), *cand))
        .filter(|(d, cand)| *d <= (cand.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance counting an adjacent transposition (`nmae`) as one edit.
fn levenshtein(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// What a parameter is for.
pub enum ParamKind {
    /// A documented parameter: one property of the input schema.
    Field(Field),
    /// `State<T>`: application state, not in the schema.
    State(Type),
    /// `Args<T>`: the whole arguments object.
    Args(Type),
    /// `Context`: the request context, not in the schema.
    Context,
}

/// A documented parameter.
pub struct Field {
    /// The binding, used as the argument struct's field name.
    pub ident: Ident,
    /// The property name in JSON (after `#[serde(rename)]`/`#[schemars(rename)]`).
    pub json_name: String,
    /// Where the JSON name comes from (the ident or the rename literal).
    pub json_name_span: Span,
    /// `#[serde(flatten)]`, not supported.
    pub flatten: Option<Span>,
    /// `#[schemars(regex(pattern = "…"))]` / `#[schemars(pattern("…"))]` literals.
    pub patterns: Vec<LitStr>,
}

/// One parameter of the function.
pub struct Param {
    pub kind: ParamKind,
    /// The declared type.
    pub ty: Type,
    /// The parameter's pattern, for spans.
    pub span: Span,
    /// `///` docs.
    pub docs: Vec<Attribute>,
    /// `#[serde]`/`#[schemars]` attributes, moved to the argument struct field.
    pub field_attrs: Vec<Attribute>,
}

/// The function under `#[mcpeye::tool]`.
pub struct ToolFn {
    /// The function to emit: as written, minus the attributes rustc does not accept on
    /// parameters (docs, serde, schemars).
    pub item: ItemFn,
    pub params: Vec<Param>,
}

/// Parses the function signature into the model, collecting problems.
pub fn parse_fn(mut item: ItemFn, errors: &mut Errors) -> ToolFn {
    let mut params = Vec::new();
    for arg in item.sig.inputs.iter_mut() {
        let pt = match arg {
            FnArg::Receiver(r) => {
                errors.spanned(
                    r.self_token,
                    "a tool cannot take `self`: make it a free function and give it what it needs through \
                     `mcpeye::State<T>` parameters",
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let span = pt.pat.span();
        let (mut docs, mut field_attrs, mut keep) = (Vec::new(), Vec::new(), Vec::new());
        for a in pt.attrs.drain(..) {
            if a.path().is_ident("doc") {
                docs.push(a);
            } else if a.path().is_ident("serde") || a.path().is_ident("schemars") {
                field_attrs.push(a);
            } else {
                keep.push(a);
            }
        }
        pt.attrs = keep;
        let ty = (*pt.ty).clone();
        let context_ref = matches!(&ty, Type::Reference(r) if is_context(&r.elem));
        if context_ref {
            errors.spanned(&ty, "take `Context` by value (`ctx: Context`): it is a handle, cheap to clone");
        }
        let kind = if is_context(&ty) || context_ref {
            ParamKind::Context
        } else if let Some(inner) = wrapper_arg(&ty, "State") {
            ParamKind::State(inner)
        } else if let Some(inner) = wrapper_arg(&ty, "Args") {
            ParamKind::Args(inner)
        } else {
            match &*pt.pat {
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    let ident = pi.ident.clone();
                    let (mut json_name, mut json_name_span) = (unraw(&ident), ident.span());
                    let (mut flatten, mut patterns) = (None, Vec::new());
                    for a in &field_attrs {
                        scan_field_attr(a, &mut json_name, &mut json_name_span, &mut flatten, &mut patterns, errors);
                    }
                    ParamKind::Field(Field { ident, json_name, json_name_span, flatten, patterns })
                }
                other => {
                    errors.spanned(
                        other,
                        "a tool parameter must be a plain name (`query: String`): its name becomes the JSON \
                         property; destructure inside the function instead",
                    );
                    continue;
                }
            }
        };
        params.push(Param { kind, ty, span, docs, field_attrs });
    }
    ToolFn { item, params }
}

fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// Whether `ty` is `Context` or `…::Context`, without generic arguments.
fn is_context(ty: &Type) -> bool {
    let Type::Path(tp) = ty else { return false };
    tp.qself.is_none() && tp.path.segments.last().is_some_and(|s| s.ident == "Context" && s.arguments.is_none())
}

/// `T` when `ty` is `…::Wrapper<T>`.
fn wrapper_arg(ty: &Type, wrapper: &str) -> Option<Type> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(t)] => Some(t.clone()),
        _ => None,
    }
}

/// Reads what matters to the contract from a `#[serde(…)]` or `#[schemars(…)]` attribute; the
/// derives themselves validate the rest.
fn scan_field_attr(
    attr: &Attribute,
    json_name: &mut String,
    json_name_span: &mut Span,
    flatten: &mut Option<Span>,
    patterns: &mut Vec<LitStr>,
    errors: &mut Errors,
) {
    let is_serde = attr.path().is_ident("serde");
    let Meta::List(list) = &attr.meta else { return };
    let parser = |input: ParseStream| -> syn::Result<()> {
        while !input.is_empty() {
            let key: syn::Path = input.call(syn::Path::parse_mod_style)?;
            let key = key.get_ident().map(Ident::to_string).unwrap_or_default();
            if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                if key == "rename" {
                    if let Some(s) = lit_str(&value) {
                        *json_name = s.value();
                        *json_name_span = s.span();
                    }
                }
            } else if input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in input);
                match key.as_str() {
                    // serde: rename(deserialize = "…")
                    "rename" if is_serde => {
                        let items = Punctuated::<Meta, Token![,]>::parse_terminated(&content)?;
                        for m in items {
                            if let Meta::NameValue(nv) = m {
                                if nv.path.is_ident("deserialize") {
                                    if let Some(s) = lit_str(&nv.value) {
                                        *json_name = s.value();
                                        *json_name_span = s.span();
                                    }
                                }
                            }
                        }
                    }
                    "regex" if !is_serde => {
                        let items = Punctuated::<Meta, Token![,]>::parse_terminated(&content)?;
                        for m in items {
                            if let Meta::NameValue(nv) = m {
                                if nv.path.is_ident("pattern") {
                                    patterns.extend(lit_str(&nv.value));
                                }
                            }
                        }
                    }
                    "pattern" if !is_serde => {
                        let value: Expr = content.parse()?;
                        patterns.extend(lit_str(&value));
                    }
                    _ => {
                        content.parse::<TokenStream>()?;
                    }
                }
            } else if key == "flatten" && is_serde {
                *flatten = Some(attr.span());
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(list.tokens.clone()) {
        errors.push(e);
    }
}

fn lit_str(e: &Expr) -> Option<LitStr> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The text of the `///` lines when they are all literals: one leading space trimmed per line,
/// lines joined with `\n` (as schemars does for property descriptions), blank edges removed.
pub fn doc_text(docs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in docs {
        let Meta::NameValue(nv) = &a.meta else { return None };
        let s = lit_str(&nv.value)?.value();
        for line in s.split('\n') {
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
        }
    }
    let text = lines.join("\n");
    Some(text.trim_matches('\n').to_owned())
}

/// The doc comments of the function.
pub fn fn_docs(item: &ItemFn) -> Vec<Attribute> {
    item.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect()
}
