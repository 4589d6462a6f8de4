//! Collects every error of one macro call, so the user sees them all at once.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// An accumulator of `syn::Error`s, combined into one on output.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub fn at(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    pub fn spanned(&mut self, tokens: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub fn to_compile_error(&self) -> TokenStream {
        self.0.as_ref().map(syn::Error::to_compile_error).unwrap_or_default()
    }

    /// Every message, in order.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.0.clone().into_iter().flatten().map(|e| e.to_string()).collect()
    }
}
