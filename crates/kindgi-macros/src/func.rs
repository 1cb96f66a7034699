//! What the attributes read from the function they are on.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, FnArg, ItemFn, Lit, Meta, Signature};

/// Expands an attribute on a function: `item` parsed as one (else an error
/// saying `shape`), `builder` making the declaring function's body, and
/// `generate` the function kept plus the declaring one. When `builder`
/// fails, its errors come with the declaring function still declared, with
/// an unreachable body, so that the only errors are the attribute's.
pub(crate) fn expand(
    item: TokenStream,
    shape: &str,
    builder: impl FnOnce(&ItemFn) -> syn::Result<TokenStream>,
    generate: impl Fn(&ItemFn, TokenStream) -> TokenStream,
) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(e) => {
            let error = syn::Error::new(e.span(), shape).to_compile_error();
            return quote!(#error #item);
        }
    };
    match builder(&func) {
        Ok(body) => generate(&func, body),
        Err(error) => {
            let stub = generate(&func, quote!(::core::unreachable!()));
            let error = error.to_compile_error();
            quote!(#error #stub)
        }
    }
}

/// Collects errors, so that one expansion reports all it finds.
#[derive(Debug, Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds `error`.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// The value of `result`, adding its error if it has one.
    pub(crate) fn take<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// The errors, if any.
    pub(crate) fn into_result(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Checks that `sig` is a free, non-generic function of `counts`
/// parameters, `params`; `macro_name` names the attribute.
pub(crate) fn check_shape(
    sig: &Signature,
    macro_name: &str,
    counts: &[usize],
    params: &str,
    errors: &mut Errors,
) {
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        errors.push(syn::Error::new_spanned(
            receiver,
            format!("`#[{macro_name}]` goes on a free function, not a method"),
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!(
                "a `#[{macro_name}]` function can't be generic: the schemas come from its parameter and return types"
            ),
        ));
    }
    if !counts.contains(&sig.inputs.len()) {
        let how_many = if counts.len() == 1 {
            "exactly two parameters"
        } else {
            "one or two parameters"
        };
        errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            format!(
                "a `#[{macro_name}]` function takes {how_many}, `{params}`; this one takes {}",
                sig.inputs.len()
            ),
        ));
    }
}

/// The function's doc comment as rustdoc shows it: each `///` line without
/// its first space, joined by newlines, trimmed. Docs that aren't string
/// literals (`#[doc = include_str!(..)]`) are skipped.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        if let Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) = &nv.value
        {
            let text = text.value();
            lines.extend(
                text.split('\n')
                    .map(|line| line.strip_prefix(' ').unwrap_or(line).to_owned()),
            );
        }
    }
    lines.join("\n").trim().to_owned()
}

/// The function's `#[cfg(..)]` attributes, which the generated function
/// shares.
pub(crate) fn cfgs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("cfg"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::ItemFn;

    fn item(tokens: proc_macro2::TokenStream) -> ItemFn {
        syn::parse2(tokens).expect("a function")
    }

    #[test]
    fn doc_lines_are_unindented_and_joined() {
        let f = item(quote::quote! {
            /// Echo the message back.
            ///
            ///   Indented stays indented.
            #[doc(hidden)]
            #[doc = include_str!("x.md")]
            #[inline]
            /** Block
             line */
            fn f() {}
        });
        assert_eq!(
            doc_comment(&f.attrs),
            "Echo the message back.\n\n  Indented stays indented.\nBlock\n            line"
        );
    }

    #[test]
    fn no_doc_is_empty() {
        let f = item(quote::quote!(
            fn f() {}
        ));
        assert_eq!(doc_comment(&f.attrs), "");
    }

    #[test]
    fn shape_errors() {
        let good = item(quote::quote!(
            async fn f(a: A, b: B) {}
        ));
        let mut errors = Errors::default();
        check_shape(&good.sig, "tool", &[1, 2], "(input, ctx)", &mut errors);
        assert!(errors.into_result().is_ok());

        let bad = item(quote::quote!(
            fn f<T>(&self, a: T, b: B) {}
        ));
        let mut errors = Errors::default();
        check_shape(&bad.sig, "tool", &[2], "(input, ctx)", &mut errors);
        let messages: Vec<String> = errors
            .into_result()
            .expect_err("errors")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            messages,
            [
                "`#[tool]` goes on a free function, not a method",
                "a `#[tool]` function can't be generic: the schemas come from its parameter and return types",
                "a `#[tool]` function takes exactly two parameters, `(input, ctx)`; this one takes 3",
            ]
        );
    }
}
