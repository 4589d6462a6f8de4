//! Code generation: the function as written, the argument struct, the handler, the `ToolDef`,
//! its registration, and the marker type that `tools![…]` resolves.

use crate::check::tool_name;
use crate::parse::{doc_text, fn_docs, Flag, ParamKind, ToolAttr, ToolFn};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Expr, Meta, ReturnType};

/// The full expansion of a valid tool.
pub fn expand(attr: &ToolAttr, tool: &ToolFn) -> TokenStream {
    let private = crate::private_path();
    let serde_crate = format!("{private}::serde").replace(' ', "");
    let schemars_crate = format!("{private}::schemars").replace(' ', "");
    let item = &tool.item;
    let ident = &item.sig.ident;
    let vis = &item.vis;
    let (name, _) = tool_name(attr, tool);
    let is_async = item.sig.asyncness.is_some();

    // The checks of each parameter type, spanned on the type: the only errors a type that cannot
    // be a parameter gives, one per missing derive (see `param_check`).
    let mut asserts = Vec::new();
    let mut fields = Vec::new();
    let mut prelude = Vec::new();
    let mut call_args = Vec::new();
    let mut states = Vec::new();
    let mut bounds = Vec::new();
    let mut args_ty = None;
    for (i, p) in tool.params.iter().enumerate() {
        let ty = &p.ty;
        let span = ty.span();
        match &p.kind {
            ParamKind::Field(f) => {
                let fid = &f.ident;
                let docs = &p.docs;
                let fattrs = &p.field_attrs;
                asserts.push(param_check(ty));
                bounds.push(quote_spanned!(span=> for<'__mcpeye> #ty: #private::ToolParam));
                let default = is_option(ty).then(|| quote!(#[serde(default)]));
                fields.push(quote_spanned!(span=> #(#docs)* #default #(#fattrs)* #fid: #ty));
                call_args.push(quote!(__args.#fid));
            }
            ParamKind::State(inner) => {
                let var = format_ident!("__state{}", i);
                prelude.push(quote_spanned!(span=> let #var = __inv.state::<#inner>()?;));
                call_args.push(quote!(#var));
                states.push(quote_spanned!(span=> #private::StateDecl {
                    type_id: || ::core::any::TypeId::of::<#inner>(),
                    type_name: || ::core::any::type_name::<#inner>(),
                }));
            }
            ParamKind::Context => {
                let var = format_ident!("__context{}", i);
                prelude.push(quote_spanned!(span=> let #var = __inv.context();));
                call_args.push(quote!(#var));
            }
            ParamKind::Args(inner) => {
                asserts.push(param_check(inner));
                bounds.push(quote_spanned!(inner.span()=> for<'__mcpeye> #inner: #private::ToolParam));
                call_args.push(quote!(#private::Args(__args)));
                args_ty = Some(inner.clone());
            }
        }
    }

    // The bounds, with a binder so that rustc does not check them where they are declared, let
    // the generated items assume the parameter types are usable. Nothing outside names those
    // items: the `Tool` impl reaches them through `__McpeyeGated`, whose impl holds only when the
    // bounds do (autoref picks the stubs of `__McpeyeStub` otherwise), so a type that is not
    // usable gives the errors of its `param_check` and no other.
    let gate = quote!(where #(#bounds,)*);
    let struct_ident = format_ident!("__McpeyeArgs");
    let whole_object = args_ty.is_some();
    let (args_struct, parsed_ty) = match args_ty {
        Some(t) => (TokenStream::new(), t.to_token_stream()),
        None => (
            quote! {
                #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
                #[serde(crate = #serde_crate, deny_unknown_fields)]
                #[schemars(crate = #schemars_crate)]
                struct #struct_ident #gate { #(#fields,)* }
            },
            quote!(#struct_ident),
        ),
    };

    let ret_span = match &item.sig.output {
        ReturnType::Default => ident.span(),
        ReturnType::Type(_, t) => t.span(),
    };
    // The return type's checks are obligations of public traits (`ToolValue` on the value,
    // `Display` on the error), spanned at the return type, so rustc's notes name nothing hidden.
    // The call's path is spanned at the return type too: rustc labels the call that introduced
    // the bound, which would otherwise be the whole attribute.
    let into_call_result = respan(quote!(#private::ToolValue::into_call_result), ret_span);
    let finish = quote_spanned! {ret_span=>
        {
            let __tag = (&&#private::probe(&__ret)).__mcpeye_kind();
            match __tag.split(__ret) {
                ::core::result::Result::Ok(__value) => #into_call_result(__value),
                ::core::result::Result::Err(__error) => {
                    __tag.error(&__error as &dyn ::core::fmt::Display, &__error)
                }
            }
        }
    };
    let kinds = quote!(
        use #private::{ResultKind as _, ValueKind as _};
    );
    let parse = quote! {
        let __args: #parsed_ty = #private::parse_args::<#parsed_ty>(__inv, __json)?;
        #(#prelude)*
    };
    let (handler_fn, handler) = if is_async {
        (
            quote! {
                fn __mcpeye_handler(
                    __inv: &#private::Invocation<'_>,
                    __json: &mut #private::serde_json::Value,
                ) -> ::core::result::Result<#private::BoxFuture, #private::ArgsError> #gate {
                    #parse
                    let __fut = #ident(#(#call_args),*);
                    ::core::result::Result::Ok(::std::boxed::Box::pin(async move {
                        #kinds
                        let __ret = __fut.await;
                        #finish
                    }))
                }
            },
            quote!(#private::Handler::Async(__mcpeye_handler_entry)),
        )
    } else {
        (
            quote! {
                fn __mcpeye_handler(
                    __inv: &#private::Invocation<'_>,
                    __json: &mut #private::serde_json::Value,
                ) -> ::core::result::Result<#private::CallToolResult, #private::ArgsError> #gate {
                    #kinds
                    #parse
                    let __ret = #ident(#(#call_args),*);
                    ::core::result::Result::Ok(#finish)
                }
            },
            quote!(#private::Handler::Sync(__mcpeye_handler_entry)),
        )
    };
    let handler_ret = if is_async { quote!(#private::BoxFuture) } else { quote!(#private::CallToolResult) };

    let normalize_schema = attr.normalize_schema.map(|f| f.value).unwrap_or(true);
    // An `Args<T>` schema is closed as the generated struct's (`deny_unknown_fields`) is.
    let generate = match (whole_object, normalize_schema) {
        (false, true) => quote!(generate_schema),
        (false, false) => quote!(generate_schema_as_is),
        (true, true) => quote!(generate_args_schema),
        (true, false) => quote!(generate_args_schema_as_is),
    };
    let output_fn = output_schema_fn(attr, &item.sig.output);
    let timeout = match attr.timeout_ms {
        Some(t) => {
            let ms = t.ms;
            quote!(::core::option::Option::Some(#private::Duration::from_millis(#ms)))
        }
        None => quote!(::core::option::Option::None),
    };
    let icons = attr.icons.iter().map(|icon| {
        let src = &icon.src;
        let opt = |l: &Option<syn::LitStr>| match l {
            Some(l) => quote!(::core::option::Option::Some(#l)),
            None => quote!(::core::option::Option::None),
        };
        let (mime, theme) = (opt(&icon.mime_type), opt(&icon.theme));
        let sizes: Vec<String> =
            icon.sizes.as_ref().map(|s| s.value().split_whitespace().map(str::to_owned).collect()).unwrap_or_default();
        quote!(#private::Icon { src: #src, mime_type: #mime, sizes: &[#(#sizes),*], theme: #theme })
    });
    let description = description_tokens(attr, tool);
    let title = match &attr.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let hint = |f: &Option<Flag>| match f {
        Some(Flag { value, .. }) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let (ro, de, id, ow) =
        (hint(&attr.read_only), hint(&attr.destructive), hint(&attr.idempotent), hint(&attr.open_world));
    let intent = attr.intent.map(|f| f.value).unwrap_or(true);
    let fn_name = ident.to_string();
    let line = quote_spanned!(ident.span()=> ::core::line!());
    let marker = marker(vis, ident);
    let checks = param_checks(&asserts);

    quote! {
        #item
        #marker
        const _: () = {
            #args_struct

            #checks

            fn __mcpeye_schema() -> #private::schemars::Schema #gate {
                #private::#generate::<#parsed_ty>()
            }

            #output_fn

            #handler_fn

            struct __McpeyeProbe;
            trait __McpeyeGated {
                fn schema(&self) -> #private::schemars::Schema;
                fn handle(
                    &self,
                    __inv: &#private::Invocation<'_>,
                    __json: &mut #private::serde_json::Value,
                ) -> ::core::result::Result<#handler_ret, #private::ArgsError>;
            }
            impl __McpeyeGated for __McpeyeProbe #gate {
                #[inline(always)]
                fn schema(&self) -> #private::schemars::Schema {
                    __mcpeye_schema()
                }
                #[inline(always)]
                fn handle(
                    &self,
                    __inv: &#private::Invocation<'_>,
                    __json: &mut #private::serde_json::Value,
                ) -> ::core::result::Result<#handler_ret, #private::ArgsError> {
                    __mcpeye_handler(__inv, __json)
                }
            }
            // Only where a parameter type failed its check, and the build fails with that error.
            trait __McpeyeStub {
                fn schema(&self) -> #private::schemars::Schema {
                    ::core::unreachable!()
                }
                fn handle(
                    &self,
                    _: &#private::Invocation<'_>,
                    _: &mut #private::serde_json::Value,
                ) -> ::core::result::Result<#handler_ret, #private::ArgsError> {
                    ::core::unreachable!()
                }
            }
            impl __McpeyeStub for &__McpeyeProbe {}
            fn __mcpeye_schema_entry() -> #private::schemars::Schema {
                (&__McpeyeProbe).schema()
            }
            fn __mcpeye_handler_entry(
                __inv: &#private::Invocation<'_>,
                __json: &mut #private::serde_json::Value,
            ) -> ::core::result::Result<#handler_ret, #private::ArgsError> {
                (&__McpeyeProbe).handle(__inv, __json)
            }

            impl #private::Tool for #ident {
                const NAME: &'static str = #name;
                const DEF: &'static #private::ToolDef = &#private::ToolDef {
                    name: #name,
                    rust_path: ::core::concat!(::core::module_path!(), "::", #fn_name),
                    file: ::core::file!(),
                    line: #line,
                    title: #title,
                    description: #description,
                    annotations: #private::Annotations {
                        read_only: #ro,
                        destructive: #de,
                        idempotent: #id,
                        open_world: #ow,
                    },
                    intent: #intent,
                    input_schema: __mcpeye_schema_entry,
                    normalize_schema: #normalize_schema,
                    output_schema: __mcpeye_output_schema,
                    timeout: #timeout,
                    icons: &[#(#icons),*],
                    states: &[#(#states),*],
                    handler: #handler,
                };
            }

            #private::inventory::submit! { <#ident as #private::Tool>::DEF }
        };
    }
}

/// The checks of one parameter type, spanned on it: a type that is not `Deserialize`, or not
/// `JsonSchema`, is one error there for each trait it lacks, saying which derive to add (the
/// messages are on the runtime's `ParamDeserialize` and `ParamSchema`).
fn param_check(ty: &syn::Type) -> TokenStream {
    let private = crate::private_path();
    quote_spanned! {ty.span()=>
        let _ = <#ty as #private::ParamDeserialize>::OK;
        let _ = <#ty as #private::ParamSchema>::OK;
    }
}

/// The checks of [`param_check`], once per tool, in a function nothing calls.
fn param_checks(checks: &[TokenStream]) -> TokenStream {
    quote! {
        #[allow(dead_code)]
        fn __mcpeye_check_params() {
            #(#checks)*
        }
    }
}

/// What is emitted when the tool has errors: the function unchanged (so calls to it still
/// compile) and a marker whose `Tool` impl is never registered, so `tools![f]` does not add a
/// second error.
pub fn fallback(attr: &ToolAttr, tool: &ToolFn) -> TokenStream {
    let item = &tool.item;
    if item.sig.receiver().is_some() {
        // A method: the marker and its impl cannot go inside the `impl` block.
        return item.to_token_stream();
    }
    let private = crate::private_path();
    let ident = &item.sig.ident;
    let (name, _) = tool_name(attr, tool);
    let marker = marker(&item.vis, ident);
    quote! {
        #item
        #marker
        const _: () = {
            fn __mcpeye_schema() -> #private::schemars::Schema {
                #private::schemars::Schema::default()
            }
            fn __mcpeye_handler(
                _: &#private::Invocation<'_>,
                _: &mut #private::serde_json::Value,
            ) -> ::core::result::Result<#private::CallToolResult, #private::ArgsError> {
                ::core::unreachable!()
            }
            fn __mcpeye_output_schema() -> ::core::option::Option<#private::schemars::Schema> {
                ::core::option::Option::None
            }
            impl #private::Tool for #ident {
                const NAME: &'static str = #name;
                const DEF: &'static #private::ToolDef = &#private::ToolDef {
                    name: #name,
                    rust_path: "",
                    file: "",
                    line: 0,
                    title: ::core::option::Option::None,
                    description: "",
                    annotations: #private::Annotations::NONE,
                    intent: true,
                    input_schema: __mcpeye_schema,
                    normalize_schema: true,
                    output_schema: __mcpeye_output_schema,
                    timeout: ::core::option::Option::None,
                    icons: &[],
                    states: &[],
                    handler: #private::Handler::Sync(__mcpeye_handler),
                };
            }
        };
    }
}

/// `__mcpeye_output_schema`: the schema of the return type (of `T` in `Result<T, E>`) when it
/// is `Serialize + JsonSchema`, found by autoref on the concrete type; none with
/// `output_schema = false` or an `impl Trait` return type (which cannot be named).
fn output_schema_fn(attr: &ToolAttr, output: &ReturnType) -> TokenStream {
    let private = crate::private_path();
    let off = attr.output_schema.is_some_and(|f| !f.value);
    let ty = match output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, t) => t.to_token_stream(),
    };
    let names_impl = contains_impl(ty.clone());
    let body = if off || names_impl {
        quote!(::core::option::Option::None)
    } else {
        quote! {
            use #private::{OutputNone as _, OutputSchema as _, OutputValueNone as _, OutputValueSchema as _};
            (&&&&#private::Returns::<#ty>::new()).__mcpeye_output_schema()
        }
    };
    quote! {
        fn __mcpeye_output_schema() -> ::core::option::Option<#private::schemars::Schema> {
            #body
        }
    }
}

fn contains_impl(ts: TokenStream) -> bool {
    ts.into_iter().any(|tt| match tt {
        proc_macro2::TokenTree::Ident(i) => i == "impl",
        proc_macro2::TokenTree::Group(g) => contains_impl(g.stream()),
        _ => false,
    })
}

fn marker(vis: &syn::Visibility, ident: &syn::Ident) -> TokenStream {
    quote! {
        #[allow(non_camel_case_types)]
        #[doc(hidden)]
        #vis struct #ident {}
    }
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// `description = "…"`, else the doc comment: a literal when every line is one, otherwise a
/// `concat!` of the lines (`#[doc = include_str!(…)]`).
fn description_tokens(attr: &ToolAttr, tool: &ToolFn) -> TokenStream {
    if let Some(d) = &attr.description {
        return d.to_token_stream();
    }
    let docs = fn_docs(&tool.item);
    if let Some(text) = doc_text(&docs) {
        return syn::LitStr::new(&text, Span::call_site()).to_token_stream();
    }
    let parts: Vec<&Expr> = docs
        .iter()
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    quote!(::core::concat!(#(#parts),*))
}

/// `tokens` with every span set to `span` (groups included), for generated code whose errors
/// must point at one token of the user's.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}
