//! What a primitive's id may look like: the rule of
//! `kindgi_protocol::ids::is_valid_id`, copied so that this crate doesn't
//! depend on the SDK.

use syn::LitStr;

/// The longest id, in bytes.
const MAX_LEN: usize = 200;

/// Why `id` is not a valid id, or `None` when it is: non-empty, at most
/// 200 bytes, ASCII letters, digits and `. _ - : /`, starting with a letter
/// or digit.
pub(crate) fn problem(id: &str) -> Option<String> {
    let Some(first) = id.chars().next() else {
        return Some("is empty".to_owned());
    };
    if id.len() > MAX_LEN {
        return Some(format!(
            "is {} bytes long; an id is at most {MAX_LEN}",
            id.len()
        ));
    }
    if !first.is_ascii_alphanumeric() {
        return Some(format!(
            "starts with `{}`; an id starts with an ASCII letter or digit",
            first.escape_debug()
        ));
    }
    id.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/')))
        .map(|c| {
            format!(
                "contains `{}`; an id is ASCII letters, digits and `. _ - : /`",
                c.escape_debug()
            )
        })
}

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
