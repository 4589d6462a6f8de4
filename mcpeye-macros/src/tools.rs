//! `tools![…]` and `tool_defs![…]`: a manifest (or the definitions) of exactly the listed tools,
//! with duplicate paths and duplicate tool names refused at compile time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Path, Token};

use crate::errors::Errors;

/// `tools!()` → every registered tool; `tools![a, b::c]` → exactly these.
pub fn tools(input: TokenStream) -> TokenStream {
    if input.is_empty() {
        return quote!(::mcpeye::Manifest::builder().registered().build());
    }
    let defs = tool_defs(input);
    quote!(::mcpeye::Manifest::builder().tools(#defs).build())
}

/// `tool_defs![a, b::c]` → `[&'static ToolDef; N]`.
pub fn tool_defs(input: TokenStream) -> TokenStream {
    let private = crate::private_path();
    let paths = match Punctuated::<Path, Token![,]>::parse_terminated.parse2(input) {
        Ok(p) => p.into_iter().collect::<Vec<_>>(),
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    let mut checks = Vec::new();
    let text = |p: &Path| p.to_token_stream().to_string().replace(' ', "");
    for (j, b) in paths.iter().enumerate() {
        for a in &paths[..j] {
            let (ta, tb) = (text(a), text(b));
            if ta == tb {
                errors.spanned(b, format!("`{tb}` is listed twice: remove one"));
                break;
            }
            let msg = format!(
                "mcpeye::tools!: `{ta}` and `{tb}` have the same tool name; give one of them \
                 #[mcpeye::tool(name = \"…\")]"
            );
            checks.push(quote_spanned! {b.span()=>
                const _: () = if #private::str_eq(
                    <#a as #private::Tool>::NAME,
                    <#b as #private::Tool>::NAME,
                ) {
                    ::core::panic!(#msg)
                };
            });
        }
    }
    if !errors.is_empty() {
        return errors.to_compile_error();
    }
    let defs = paths.iter().map(|p| quote_spanned!(p.span()=> <#p as #private::Tool>::DEF));
    quote! {{
        #(#checks)*
        [#(#defs),*]
    }}
}
