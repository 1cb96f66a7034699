//! Ids checked at compile time, by the rule the SDK's indexer applies
//! (`kindgi_protocol::ids`).

use kindgi_protocol::ids::id_problem as problem;
use syn::LitStr;

/// Checks the id given as argument `name`, with the error on its literal.
pub(crate) fn check(name: &str, lit: &LitStr) -> syn::Result<()> {
    match problem(&lit.value()) {
        None => Ok(()),
        Some(problem) => Err(syn::Error::new(
            lit.span(),
            format!("`{name}` {problem} (e.g. `{name} = \"acme.verify-citation\"`)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn valid_ids() {
        for id in [
            "acme.echo",
            "a",
            "9lives",
            "acme:tools/echo_v2-b",
            &"a".repeat(200),
        ] {
            assert_eq!(problem(id), None, "{id}");
        }
    }

    #[test]
    fn invalid_ids() {
        for id in [
            "",
            ".leading-dot",
            "-x",
            "has space",
            "ümlaut",
            "a*b",
            &"a".repeat(201),
        ] {
            assert!(problem(id).is_some(), "{id:?}");
        }
    }

    #[test]
    fn the_problem_names_the_character() {
        assert_eq!(
            problem("acme echo").as_deref(),
            Some("contains ` `; an id is ASCII letters, digits and `. _ - : /`")
        );
        assert!(problem("_x").is_some_and(|p| p.starts_with("starts with `_`")));
    }
}
