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

/// Why `id` is not valid, in a sentence, or `None` when it is.
pub fn id_problem(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        Some("the id is empty")
    } else if is_valid_id(id) {
        None
    } else {
        Some(
            "an id is ASCII letters, digits and . _ - : /, starting with a letter or digit, at most 200 characters",
        )
    }
}
