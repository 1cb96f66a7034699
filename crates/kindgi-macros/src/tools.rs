//! `#[tools]`: an `impl` block whose `#[tool]` methods are tools sharing
//! the value they are called on, plus `<name>_tool()` for each and
//! `tools()` for all.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{FnArg, ImplItem, ImplItemFn, ItemImpl, Meta, Type};

use crate::func::Errors;
use crate::tool::tool_builder;

/// Expands `#[tools(attr)] item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut block: ItemImpl = match syn::parse2(item.clone()) {
        Ok(block) => block,
        Err(e) => {
            let error = syn::Error::new(
                e.span(),
                "`#[tools]` goes on an `impl` block whose methods are tools: `#[kindgi::tools] impl Desk { #[tool(id = \"...\")] async fn name(&self, input: Input) ... }`",
            )
            .to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    if !attr.is_empty() {
        errors.push(syn::Error::new_spanned(
            &attr,
            "`#[tools]` takes no arguments: put them on each method's `#[tool(...)]`",
        ));
    }
    if let Some(trait_) = &block.trait_ {
        errors.push(syn::Error::new_spanned(
            &trait_.1,
            "`#[tools]` goes on an inherent `impl` block, not a trait's",
        ));
    }
    if !block.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &block.generics,
            "a `#[tools]` block can't be generic: the schemas come from its methods' types",
        ));
    }

    let mut tool_fns = Vec::new();
    let mut names = Vec::new();
    let mut tagged = 0;
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(position) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let attr = method.attrs.remove(position);
        tagged += 1;
        let args = match attr.meta {
            Meta::List(list) => list.tokens,
            Meta::Path(_) => TokenStream::new(),
            Meta::NameValue(nv) => {
                errors.push(syn::Error::new_spanned(nv, "write `#[tool(id = \"...\")]`"));
                continue;
            }
        };
        match tool_method(args, method) {
            Ok(tool_fn) => {
                names.push(format_ident!("{}_tool", method.sig.ident));
                tool_fns.push(tool_fn);
            }
            Err(error) => errors.push(error),
        }
    }
    if tagged == 0 {
        errors.push(syn::Error::new_spanned(
            &block.self_ty,
            "this `#[tools]` block has no `#[tool(...)]` method",
        ));
    }
    let self_ty = &block.self_ty;
    let error = errors.into_result().err().map(|e| e.to_compile_error());
    quote! {
        #error
        #block

        impl #self_ty {
            #(#tool_fns)*

            /// Every tool of this `#[kindgi::tools]` block, all sharing
            /// this value.
            pub fn tools(self) -> ::std::vec::Vec<::kindgi::Tool> {
                let this = ::std::sync::Arc::new(self);
                ::std::vec![#(this.#names()),*]
            }
        }
    }
}

/// `<name>_tool(self: &Arc<Self>)` for the `#[tool(args)]` method `method`.
fn tool_method(args: TokenStream, method: &ImplItemFn) -> syn::Result<TokenStream> {
    let sig = &method.sig;
    let mut errors = Errors::default();
    let mut inputs = sig.inputs.iter();
    match inputs.next() {
        Some(FnArg::Receiver(receiver))
            if receiver.reference.is_some() && receiver.mutability.is_none() => {}
        Some(other) => errors.push(syn::Error::new_spanned(
            other,
            "a `#[tool]` method takes `&self`: the tools share the value, so none can take it or change it",
        )),
        None => errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            "a `#[tool]` method takes `&self` first",
        )),
    }
    let params: Vec<&Type> = inputs
        .filter_map(|arg| match arg {
            FnArg::Typed(typed) => Some(&*typed.ty),
            FnArg::Receiver(_) => None,
        })
        .collect();
    if !(1..=2).contains(&params.len()) {
        errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            format!(
                "a `#[tool]` method takes `&self` and one or two parameters, `(input: Input)` or `(input: Input, ctx: ToolContext)`; this one takes {}",
                params.len()
            ),
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a `#[tool]` method can't be generic: the schemas come from its parameter and return types",
        ));
    }
    let name = &sig.ident;
    let input = params.first().map_or_else(|| quote!(()), |ty| quote!(#ty));
    let with_ctx = params.len() == 2;
    let (closure_params, call_args) = if with_ctx {
        (
            quote!(input: #input, ctx: ::kindgi::ToolContext),
            quote!(input, ctx),
        )
    } else {
        (quote!(input: #input), quote!(input))
    };
    let handler = if sig.asyncness.is_some() {
        quote! {{
            let this = ::std::sync::Arc::clone(self);
            move |#closure_params| {
                let this = ::std::sync::Arc::clone(&this);
                async move { this.#name(#call_args).await }
            }
        }}
    } else {
        quote! {{
            let this = ::std::sync::Arc::clone(self);
            move |#closure_params| this.#name(#call_args)
        }}
    };
    let body = tool_builder(args, &method.attrs, sig, errors, handler)?;
    let tool_fn = format_ident!("{}_tool", name, span = name.span());
    let doc =
        format!(" The tool whose handler is the method `{name}` (made by `#[kindgi::tools]`).");
    Ok(quote! {
        #[doc = #doc]
        pub fn #tool_fn(self: &::std::sync::Arc<Self>) -> ::kindgi::Tool {
            #body
        }
    })
}
