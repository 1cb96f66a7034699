//! `#[check]`: the function as written, plus `fn <name>_guardrail() -> Guardrail`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;
use syn::ext::IdentExt;

use crate::args::{self, Accepted, Args};
use crate::func::{self, Errors};
use crate::id;

/// The arguments of `#[check]`.
const ACCEPTED: &[Accepted] = &[
    args::string("id"),
    args::string("check_id"),
    args::string("name"),
    args::string("on_violation"),
    args::string("severity"),
    args::string("kind"),
];

/// Expands `#[check(attr)] item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    func::expand(
        item,
        "`#[check]` goes on a function: `fn name(config: Config, trace: RunTrace) -> CheckResult`",
        |func| builder(attr, func),
        generate,
    )
}

/// The body of `<name>_guardrail()`: the builder calls.
fn builder(attr: TokenStream, func: &ItemFn) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let args = errors.take(Args::parse("check", ACCEPTED, attr));
    func::check_shape(
        &func.sig,
        "check",
        "(config: Config, trace: RunTrace)",
        &mut errors,
    );
    if let Some(asyncness) = &func.sig.asyncness {
        errors.push(syn::Error::new_spanned(
            asyncness,
            "`#[check]` goes on a plain `fn`: a check is quick, synchronous code",
        ));
    }
    let Some(args) = args else {
        return Err(errors.into_result().expect_err("an error was pushed"));
    };

    let id = errors.take(args.required_str("check", "id", "acme.min-length"));
    if let Some(id) = id {
        errors.take(id::check("id", id));
    }
    if let Some(check_id) = args.str("check_id") {
        errors.take(id::check("check_id", check_id));
    }
    let on_violation = errors.take(args.required_str("check", "on_violation", "halt"));
    if let Some(action) = on_violation.filter(|a| a.value().trim().is_empty()) {
        errors.push(syn::Error::new(
            action.span(),
            "`on_violation` is empty: say what a violation does, e.g. `on_violation = \"halt\"`",
        ));
    }
    errors.into_result()?;
    let id = id.expect("no errors, so the id is there");

    let mut calls = Vec::new();
    for name in ["check_id", "name", "on_violation", "severity", "kind"] {
        if let Some(value) = args.str(name) {
            let method = format_ident!("{name}");
            calls.push(quote!(.#method(#value)));
        }
    }
    let name = &func.sig.ident;
    calls.push(quote!(.evaluate(#name)));
    Ok(quote! {
        ::kindgi::Guardrail::new(#id, ::kindgi::here!())
            #(#calls)*
    })
}

/// The function as written, then `<name>_guardrail()` with `body`.
fn generate(func: &ItemFn, body: TokenStream) -> TokenStream {
    let name = &func.sig.ident;
    let guardrail_fn = format_ident!("{}_guardrail", name, span = name.span());
    let vis = &func.vis;
    let cfgs = func::cfgs(&func.attrs);
    let doc = format!(
        " The guardrail whose check is `{}` (made by `#[kindgi::check]`).",
        name.unraw()
    );
    quote! {
        #func

        #(#cfgs)*
        #[doc = #doc]
        #vis fn #guardrail_fn() -> ::kindgi::Guardrail {
            #body
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_argument() {
        let out = expand(
            quote!(
                id = "acme.min-length",
                check_id = "acme.checks.min-length",
                name = "Minimum length",
                on_violation = "halt",
                severity = "error",
                kind = "zero-llm"
            ),
            quote!(
                pub fn min_length(config: Config, trace: RunTrace) -> CheckResult {
                    todo!()
                }
            ),
        )
        .to_string();
        let want = quote! {
            ::kindgi::Guardrail::new("acme.min-length", ::kindgi::here!())
                .check_id("acme.checks.min-length")
                .name("Minimum length")
                .on_violation("halt")
                .severity("error")
                .kind("zero-llm")
                .evaluate(min_length)
        }
        .to_string();
        assert!(out.contains(&want), "{out}");
        assert!(
            out.contains("pub fn min_length_guardrail () -> :: kindgi :: Guardrail"),
            "{out}"
        );
    }

    #[test]
    fn only_what_is_required() {
        let out = expand(
            quote!(id = "acme.x", on_violation = "log-only"),
            quote!(
                fn x(config: C, trace: T) -> bool {
                    true
                }
            ),
        )
        .to_string();
        let want = quote! {
            ::kindgi::Guardrail::new("acme.x", ::kindgi::here!())
                .on_violation("log-only")
                .evaluate(x)
        }
        .to_string();
        assert!(out.contains(&want), "{out}");
    }

    #[test]
    fn errors() {
        let out = expand(
            quote!(id = "acme x", check_id = ""),
            quote!(
                async fn x(config: C) -> bool {
                    true
                }
            ),
        )
        .to_string();
        for message in [
            "takes exactly two parameters",
            "goes on a plain `fn`",
            "`id` contains ` `",
            "`check_id` is empty",
            "needs `on_violation`",
            "fn x_guardrail ()",
        ] {
            assert!(out.contains(message), "{message}: {out}");
        }
    }
}
