//! JSON Pointer and URI-fragment spelling, as Ajv writes `instancePath` and
//! `schemaPath`.

use std::borrow::Cow;

use kindgi_protocol::percent::encode_component;

/// Appends `/token` to a JSON Pointer, escaping `~` and `/` (RFC 6901).
pub(crate) fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// The tokens of a JSON Pointer (RFC 6901), unescaped, empty ones kept:
/// `/counts/` is `counts` then the empty key (a `Location`'s own segments
/// skip it, and would name the parent).
pub(crate) fn tokens(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    let rest = pointer.strip_prefix('/');
    rest.into_iter()
        .flat_map(|rest| rest.split('/'))
        .map(|token| {
            if token.contains('~') {
                Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
            } else {
                Cow::Borrowed(token)
            }
        })
}

/// Appends `/token` to a URI-fragment pointer the way Ajv spells a schema
/// property in `schemaPath`: JSON-Pointer escaped, then `encodeURIComponent`.
pub(crate) fn push_fragment_token(path: &mut String, token: &str) {
    let mut escaped = String::with_capacity(token.len() + 1);
    push_token(&mut escaped, token);
    path.push('/');
    path.push_str(&encode_component(&escaped[1..]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_keep_empty_keys_and_unescape() {
        let all = |p: &str| tokens(p).map(|t| t.into_owned()).collect::<Vec<_>>();
        assert_eq!(all(""), Vec::<String>::new());
        assert_eq!(all("/"), vec![""]);
        assert_eq!(all("/counts/"), vec!["counts", ""]);
        assert_eq!(all("/a~1b/~0/~01"), vec!["a/b", "~", "~1"]);
        assert_eq!(all("/0/x"), vec!["0", "x"]);
    }

    #[test]
    fn tokens_are_escaped() {
        let mut p = String::new();
        push_token(&mut p, "a/b~c");
        push_token(&mut p, "0");
        assert_eq!(p, "/a~1b~0c/0");
    }

    #[test]
    fn fragment_tokens_are_uri_encoded() {
        let mut p = String::from("#/properties");
        push_fragment_token(&mut p, "my prop/é");
        assert_eq!(p, "#/properties/my%20prop~1%C3%A9");
        let mut q = String::from("#/patternProperties");
        push_fragment_token(&mut q, "^a+$");
        assert_eq!(q, "#/patternProperties/%5Ea%2B%24");
    }
}
