//! `#[tool]`: the function as written, plus `fn <name>_tool() -> Tool`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Attribute, ItemFn, LitStr, Signature};

use crate::args::{self, Accepted, Args};
use crate::func::{self, Errors};
use crate::id;

/// The arguments of `#[tool]`.
const ACCEPTED: &[Accepted] = &[
    args::string("id"),
    args::string("version"),
    args::flag("mutating"),
    args::flag("needs_approval_when_unattended"),
    args::flag("pauses"),
    args::flag("stores_files"),
    args::flag("reads_files"),
    args::flag("blocking"),
    args::expr("description"),
];

/// Expands `#[tool(attr)] item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    func::expand(
        item,
        "`#[tool]` goes on a function: `async fn name(input: Input, ctx: ToolContext) -> Result<Output, Error>`",
        |func| builder(attr, func),
        generate,
    )
}

/// The body of `<name>_tool()`: the builder calls.
fn builder(attr: TokenStream, func: &ItemFn) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    func::check_shape(
        &func.sig,
        "tool",
        &[1, 2],
        "(input: Input) or (input: Input, ctx: ToolContext)",
        &mut errors,
    );
    let name = &func.sig.ident;
    tool_builder(attr, &func.attrs, &func.sig, errors, quote!(#name))
}

/// The builder calls of the tool whose handler is `handler` (a function
/// or closure of the shape `sig` says), with `attr`'s arguments and the
/// doc comment of `attrs`; `errors` holds what the caller found already.
pub(crate) fn tool_builder(
    attr: TokenStream,
    attrs: &[Attribute],
    sig: &Signature,
    mut errors: Errors,
    handler: TokenStream,
) -> syn::Result<TokenStream> {
    let args = errors.take(Args::parse("tool", ACCEPTED, attr));
    let Some(args) = args else {
        return Err(errors.into_result().expect_err("an error was pushed"));
    };

    let blocking = args.flag("blocking");
    match (&sig.asyncness, blocking) {
        (Some(_), Some((true, span))) => errors.push(syn::Error::new(
            span,
            "`blocking` is for a plain `fn`, run on the blocking pool: remove `async`, or remove `blocking`",
        )),
        (None, None | Some((false, _))) => errors.push(syn::Error::new_spanned(
            sig.fn_token,
            "`#[tool]` goes on an `async fn`; for a plain `fn` that blocks, add `blocking`: `#[tool(id = \"...\", blocking)]`",
        )),
        _ => {}
    }

    let id = errors.take(args.required_str("tool", "id", "acme.echo"));
    if let Some(id) = id {
        errors.take(id::check("id", id));
    }
    errors.into_result()?;
    let id = id.expect("no errors, so the id is there");

    let mut calls = Vec::new();
    match args.expr("description") {
        Some(description) => calls.push(quote!(.description(#description))),
        None => {
            let doc = func::doc_comment(attrs);
            if !doc.is_empty() {
                let doc = LitStr::new(&doc, sig.ident.span());
                calls.push(quote!(.description(#doc)));
            }
        }
    }
    if let Some(version) = args.str("version") {
        calls.push(quote!(.version(#version)));
    }
    for name in ["mutating", "needs_approval_when_unattended", "pauses"] {
        if let Some((on, _)) = args.flag(name) {
            let method = format_ident!("{name}");
            calls.push(quote!(.#method(#on)));
        }
    }
    for name in ["stores_files", "reads_files"] {
        if args.is_set(name) {
            let method = format_ident!("{name}");
            calls.push(quote!(.#method()));
        }
    }
    if sig.asyncness.is_some() {
        calls.push(quote!(.handler(#handler)));
    } else {
        calls.push(quote!(.blocking_handler(#handler)));
    }
    Ok(quote! {
        ::kindgi::Tool::new(#id).source(::kindgi::here!())
            #(#calls)*
    })
}

/// The function as written, then `<name>_tool()` with `body`.
fn generate(func: &ItemFn, body: TokenStream) -> TokenStream {
    let name = &func.sig.ident;
    let tool_fn = format_ident!("{}_tool", name, span = name.span());
    let vis = &func.vis;
    let cfgs = func::cfgs(&func.attrs);
    let doc = format!(
        " The tool whose handler is `{}` (made by `#[kindgi::tool]`).",
        name.unraw()
    );
    quote! {
        #func

        #(#cfgs)*
        #[doc = #doc]
        #vis fn #tool_fn() -> ::kindgi::Tool {
            #body
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(attr: TokenStream, item: TokenStream) -> String {
        expand(attr, item).to_string()
    }

    #[test]
    fn async_tool_with_every_flag() {
        let out = expand_str(
            quote!(
                id = "acme.echo",
                version = "1.2.0",
                mutating = false,
                needs_approval_when_unattended,
                pauses = true,
                stores_files,
                reads_files
            ),
            quote! {
                /// Echo the message back.
                pub async fn echo(input: Input, ctx: ToolContext) -> Result<Output, ToolError> { todo!() }
            },
        );
        let want = quote! {
            ::kindgi::Tool::new("acme.echo").source(::kindgi::here!())
                .description("Echo the message back.")
                .version("1.2.0")
                .mutating(false)
                .needs_approval_when_unattended(true)
                .pauses(true)
                .stores_files()
                .reads_files()
                .handler(echo)
        }
        .to_string();
        assert!(out.contains(&want), "{out}");
        assert!(
            out.contains("pub fn echo_tool () -> :: kindgi :: Tool"),
            "{out}"
        );
        assert!(out.contains("pub async fn echo"), "{out}");
    }

    #[test]
    fn blocking_tool_with_description() {
        let out = expand_str(
            quote!(id = "acme.sum", blocking, description = "Add up."),
            quote! {
                /// Not this.
                pub(crate) fn sum(input: Input, ctx: ToolContext) -> Result<Output, ToolError> { todo!() }
            },
        );
        let want = quote! {
            ::kindgi::Tool::new("acme.sum").source(::kindgi::here!())
                .description("Add up.")
                .blocking_handler(sum)
        }
        .to_string();
        assert!(out.contains(&want), "{out}");
        assert!(out.contains("pub (crate) fn sum_tool ()"), "{out}");
    }

    #[test]
    fn no_doc_no_description_and_false_flags() {
        let out = expand_str(
            quote!(id = "acme.x", stores_files = false),
            quote!(
                async fn x(input: I, ctx: C) -> Result<O, E> {
                    todo!()
                }
            ),
        );
        let want = quote!(
            ::kindgi::Tool::new("acme.x")
                .source(::kindgi::here!())
                .handler(x)
        )
        .to_string();
        assert!(out.contains(&want), "{out}");
    }

    #[test]
    fn errors_keep_the_function_and_declare_the_tool_fn() {
        let out = expand_str(
            quote!(),
            quote!(
                fn x(input: I, ctx: C, extra: u8) -> Result<O, E> {
                    todo!()
                }
            ),
        );
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("fn x (input : I"), "{out}");
        assert!(out.contains("fn x_tool ()"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
        for message in [
            "takes one or two parameters",
            "goes on an `async fn`",
            "needs `id`",
        ] {
            assert!(out.contains(message), "{message}: {out}");
        }
    }

    #[test]
    fn not_a_function() {
        let out = expand_str(
            quote!(id = "acme.x"),
            quote!(
                struct S;
            ),
        );
        assert!(out.contains("goes on a function"), "{out}");
        assert!(out.contains("struct S"), "{out}");
    }
}
