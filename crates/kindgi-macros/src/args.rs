//! The `name = value` arguments of an attribute: strings, expressions and
//! flags.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::{Expr, LitBool, LitStr, Token};

/// What an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `name = "text"`.
    Str,
    /// `name = <any expression>`, e.g. a string constant.
    Expr,
    /// `name` (true), `name = true` or `name = false`.
    Flag,
}

/// An argument an attribute accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepted {
    /// Its name.
    pub(crate) name: &'static str,
    /// What it takes.
    pub(crate) kind: Kind,
}

/// Shorthand for an [`Accepted`] string argument.
pub(crate) const fn string(name: &'static str) -> Accepted {
    Accepted {
        name,
        kind: Kind::Str,
    }
}

/// Shorthand for an [`Accepted`] expression argument.
pub(crate) const fn expr(name: &'static str) -> Accepted {
    Accepted {
        name,
        kind: Kind::Expr,
    }
}

/// Shorthand for an [`Accepted`] flag.
pub(crate) const fn flag(name: &'static str) -> Accepted {
    Accepted {
        name,
        kind: Kind::Flag,
    }
}

/// An argument's value.
#[derive(Debug, Clone)]
enum Value {
    Str(LitStr),
    Expr(Box<Expr>),
    Flag(bool),
}

/// One argument as written.
#[derive(Debug, Clone)]
struct Given {
    name: &'static str,
    /// The span of its name.
    span: Span,
    value: Value,
}

/// The arguments of one attribute, each named at most once.
#[derive(Debug, Clone)]
pub(crate) struct Args {
    given: Vec<Given>,
}

impl Args {
    /// Parses `attr`, the arguments of `#[macro_name(...)]`, which takes the
    /// `accepted` arguments.
    pub(crate) fn parse(
        macro_name: &str,
        accepted: &[Accepted],
        attr: TokenStream,
    ) -> syn::Result<Self> {
        let mut given: Vec<Given> = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let Some(ident) = meta.path.get_ident() else {
                return Err(meta.error("expected an argument name, like `id`"));
            };
            let written = ident.to_string();
            let Some(arg) = accepted.iter().find(|a| a.name == written) else {
                return Err(meta.error(format!(
                    "unknown argument `{written}`; `#[{macro_name}]` takes {}",
                    list(accepted)
                )));
            };
            if given.iter().any(|g| g.name == arg.name) {
                return Err(meta.error(format!("`{}` is given twice", arg.name)));
            }
            let value = match arg.kind {
                Kind::Str => {
                    if !meta.input.peek(Token![=]) {
                        return Err(
                            meta.error(format!("`{0}` takes a string: `{0} = \"...\"`", arg.name))
                        );
                    }
                    let lit: LitStr = meta.value()?.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!("`{0}` takes a string literal: `{0} = \"...\"`", arg.name),
                        )
                    })?;
                    Value::Str(lit)
                }
                Kind::Expr => {
                    if !meta.input.peek(Token![=]) {
                        return Err(meta.error(format!(
                            "`{0}` takes a value: `{0} = \"...\"` or `{0} = SOME_CONST`",
                            arg.name
                        )));
                    }
                    Value::Expr(Box::new(meta.value()?.parse()?))
                }
                Kind::Flag if meta.input.peek(Token![=]) => {
                    let lit: LitBool = meta.value()?.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!(
                                "`{0}` is `true` or `false` (`{0}` alone means true)",
                                arg.name
                            ),
                        )
                    })?;
                    Value::Flag(lit.value)
                }
                Kind::Flag => Value::Flag(true),
            };
            given.push(Given {
                name: arg.name,
                span: ident.span(),
                value,
            });
            Ok(())
        });
        parser.parse2(attr)?;
        Ok(Self { given })
    }

    fn get(&self, name: &str) -> Option<&Given> {
        self.given.iter().find(|g| g.name == name)
    }

    /// The string argument `name`, if given.
    pub(crate) fn str(&self, name: &str) -> Option<&LitStr> {
        match self.get(name).map(|g| &g.value) {
            Some(Value::Str(lit)) => Some(lit),
            _ => None,
        }
    }

    /// The expression argument `name`, if given.
    pub(crate) fn expr(&self, name: &str) -> Option<&Expr> {
        match self.get(name).map(|g| &g.value) {
            Some(Value::Expr(expr)) => Some(expr),
            _ => None,
        }
    }

    /// The string argument `name`, or an error on the whole attribute
    /// saying it is missing, with `example` as its value.
    pub(crate) fn required_str(
        &self,
        macro_name: &str,
        name: &str,
        example: &str,
    ) -> syn::Result<&LitStr> {
        self.str(name).ok_or_else(|| {
            syn::Error::new(
                Span::call_site(),
                format!("`#[{macro_name}]` needs `{name}`: `#[{macro_name}({name} = \"{example}\", ...)]`"),
            )
        })
    }

    /// The flag `name` and the span of its name, if given.
    pub(crate) fn flag(&self, name: &str) -> Option<(bool, Span)> {
        match self.get(name) {
            Some(Given {
                span,
                value: Value::Flag(on),
                ..
            }) => Some((*on, *span)),
            _ => None,
        }
    }

    /// Whether the flag `name` is given and true.
    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.flag(name).is_some_and(|(on, _)| on)
    }
}

/// "`a`, `b` and `c`".
fn list(accepted: &[Accepted]) -> String {
    let names: Vec<String> = accepted.iter().map(|a| format!("`{}`", a.name)).collect();
    match names.split_last() {
        None => "no arguments".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    const ACCEPTED: &[Accepted] = &[string("id"), flag("blocking"), flag("mutating")];

    fn parse(attr: TokenStream) -> syn::Result<Args> {
        Args::parse("tool", ACCEPTED, attr)
    }

    fn error(attr: TokenStream) -> String {
        match parse(attr) {
            Ok(args) => panic!("parsed: {args:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn strings_and_flags() {
        let args = parse(quote!(id = "acme.echo", blocking, mutating = false)).expect("parses");
        assert_eq!(
            args.str("id").map(LitStr::value).as_deref(),
            Some("acme.echo")
        );
        assert!(args.is_set("blocking"));
        assert_eq!(args.flag("mutating").map(|(on, _)| on), Some(false));
        assert!(!args.is_set("mutating"));
    }

    #[test]
    fn nothing_given() {
        let args = parse(TokenStream::new()).expect("parses");
        assert!(args.str("id").is_none());
        assert!(args.flag("blocking").is_none());
        let missing = args
            .required_str("tool", "id", "acme.echo")
            .expect_err("missing");
        assert_eq!(
            missing.to_string(),
            "`#[tool]` needs `id`: `#[tool(id = \"acme.echo\", ...)]`"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            error(quote!(id = "a", name = "b")),
            "unknown argument `name`; `#[tool]` takes `id`, `blocking` and `mutating`"
        );
        assert_eq!(error(quote!(id = "a", id = "b")), "`id` is given twice");
        assert_eq!(error(quote!(id)), "`id` takes a string: `id = \"...\"`");
        assert_eq!(
            error(quote!(id = acme)),
            "`id` takes a string literal: `id = \"...\"`"
        );
        assert_eq!(
            error(quote!(mutating = "no")),
            "`mutating` is `true` or `false` (`mutating` alone means true)"
        );
        assert_eq!(error(quote!(a::b)), "expected an argument name, like `id`");
    }

    #[test]
    fn lists() {
        assert_eq!(list(&[]), "no arguments");
        assert_eq!(list(&[string("id")]), "`id`");
        assert_eq!(list(&[string("id"), flag("x")]), "`id` and `x`");
    }
}
