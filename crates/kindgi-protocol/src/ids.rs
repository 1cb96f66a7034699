//! What a primitive's id may look like.

/// Whether `id` is a valid tool, guardrail, check, agent or flow id:
/// non-empty, at most 200 bytes, ASCII letters, digits and `. _ - : /`,
/// starting with a letter or digit (`acme.verify-citation`).
///
/// ```
/// use kindgi_protocol::ids::is_valid_id;
/// assert!(is_valid_id("conformance.echo"));
/// assert!(!is_valid_id(""));
/// assert!(!is_valid_id("has space"));
/// assert!(!is_valid_id(".leading-dot"));
/// ```
pub fn is_valid_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    id.len() <= 200
        && first.is_ascii_alphanumeric()
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':' | b'/'))
}

/// The longest id, in bytes.
pub const MAX_ID_LEN: usize = 200;

/// Why `id` is not a valid id, naming what is wrong (`contains ` `` ` ``
/// …), or `None` when it is valid: the predicate of the phrase "the id …".
///
/// ```
/// use kindgi_protocol::ids::id_problem;
/// assert_eq!(id_problem("acme.echo"), None);
/// assert_eq!(id_problem("").as_deref(), Some("is empty"));
/// assert_eq!(
///     id_problem("acme echo").as_deref(),
///     Some("contains ` `; an id is ASCII letters, digits and `. _ - : /`")
/// );
/// ```
pub fn id_problem(id: &str) -> Option<String> {
    let Some(first) = id.chars().next() else {
        return Some("is empty".to_owned());
    };
    if id.len() > MAX_ID_LEN {
        return Some(format!(
            "is {} bytes long; an id is at most {MAX_ID_LEN}",
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

#[cfg(test)]
mod tests {
    use super::{id_problem, is_valid_id};

    #[test]
    fn the_predicate_and_the_problem_agree() {
        for id in [
            "a",
            "acme.echo",
            "9lives",
            "a:b/c_d-e",
            "",
            " a",
            "a b",
            ".a",
            "é",
            &"a".repeat(201),
            &"a".repeat(200),
        ] {
            assert_eq!(is_valid_id(id), id_problem(id).is_none(), "{id:?}");
        }
    }
}
