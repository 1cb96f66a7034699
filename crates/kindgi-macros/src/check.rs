//! `#[check]`: the function as written, plus `fn <name>_guardrail() -> Guardrail`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;
use syn::ext::IdentExt;

use kindgi_protocol::vocab::{GuardrailKind, OnViolation, Severity};

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
        &[2],
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
    let mut calls = Vec::new();
    for name in ["check_id", "name"] {
        if let Some(value) = args.str(name) {
            let method = format_ident!("{name}");
            calls.push(quote!(.#method(#value)));
        }
    }
    if args.str("name").is_none() {
        let doc = func::doc_comment(&func.attrs);
        if let Some(summary) = doc.lines().next().filter(|line| !line.trim().is_empty()) {
            let summary = summary.trim().trim_end_matches('.');
            let name = syn::LitStr::new(summary, func.sig.ident.span());
            calls.push(quote!(.name(#name)));
        }
    }
    // The closed lists' values are checked here, so a typo is a compile
    // error; `other` gives the built-in variant for a built-in's name.
    for (arg, ty, names, known) in [
        (
            "on_violation",
            "OnViolation",
            OnViolation::built_in_names(),
            known(&args, "on_violation", OnViolation::built_in),
        ),
        (
            "severity",
            "Severity",
            Severity::built_in_names(),
            known(&args, "severity", Severity::built_in),
        ),
        (
            "kind",
            "GuardrailKind",
            GuardrailKind::built_in_names(),
            known(&args, "kind", GuardrailKind::built_in),
        ),
    ] {
        let Some(value) = args.str(arg) else { continue };
        let wire = value.value();
        if !known && !wire.trim().is_empty() {
            errors.push(syn::Error::new(
                value.span(),
                format!(
                    "unknown `{arg}` \"{wire}\": one of {names}; for another, chain `.{arg}(kindgi::{ty}::other(\"{wire}\"))` on the generated function"
                ),
            ));
        }
        let method = format_ident!("{arg}");
        let ty = format_ident!("{ty}");
        calls.push(quote!(.#method(::kindgi::#ty::other(#value))));
    }
    errors.into_result()?;
    let id = id.expect("no errors, so the id is there");

    let name = &func.sig.ident;
    calls.push(quote!(.evaluate(#name)));
    Ok(quote! {
        ::kindgi::Guardrail::new(#id).source(::kindgi::here!())
            #(#calls)*
    })
}

/// Whether the string argument `arg`, if given, names a built-in value.
fn known<T>(args: &Args, arg: &str, built_in: fn(&str) -> Option<T>) -> bool {
    args.str(arg)
        .is_none_or(|value| built_in(&value.value()).is_some())
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
            ::kindgi::Guardrail::new("acme.min-length").source(::kindgi::here!())
                .check_id("acme.checks.min-length")
                .name("Minimum length")
                .on_violation(::kindgi::OnViolation::other("halt"))
                .severity(::kindgi::Severity::other("error"))
                .kind(::kindgi::GuardrailKind::other("zero-llm"))
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
                /// Passes every run.
                ///
                /// More words.
                fn x(config: C, trace: T) -> bool {
                    true
                }
            ),
        )
        .to_string();
        let want = quote! {
            ::kindgi::Guardrail::new("acme.x").source(::kindgi::here!())
                .name("Passes every run")
                .on_violation(::kindgi::OnViolation::other("log-only"))
                .evaluate(x)
        }
        .to_string();
        assert!(out.contains(&want), "{out}");
    }

    #[test]
    fn unknown_values_of_closed_lists() {
        let out = expand(
            quote!(
                id = "acme.x",
                on_violation = "hault",
                severity = "fatal",
                kind = "regex"
            ),
            quote!(
                fn x(config: C, trace: T) -> bool {
                    true
                }
            ),
        )
        .to_string();
        for message in [
            "unknown `on_violation` \\\"hault\\\": one of \\\"halt\\\", \\\"retry\\\", \\\"escalate\\\", \\\"log-only\\\" or \\\"compensate\\\"; for another, chain `.on_violation(kindgi::OnViolation::other(\\\"hault\\\"))` on the generated function",
            "unknown `severity` \\\"fatal\\\"",
            "unknown `kind` \\\"regex\\\": one of \\\"zero-llm\\\", \\\"llm-judge\\\" or \\\"external\\\"",
        ] {
            assert!(out.contains(message), "{message}: {out}");
        }
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
