//! JSON Pointer and URI-fragment spelling, as Ajv writes `instancePath` and
//! `schemaPath`.

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

/// Appends `/token` to a URI-fragment pointer the way Ajv spells a schema
/// property in `schemaPath`: JSON-Pointer escaped, then `encodeURIComponent`.
pub(crate) fn push_fragment_token(path: &mut String, token: &str) {
    path.push('/');
    let mut escaped = String::with_capacity(token.len());
    push_token(&mut escaped, token);
    for byte in escaped[1..].bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            path.push(char::from(byte));
        } else {
            path.push('%');
            path.push(hex_digit(byte >> 4));
            path.push(hex_digit(byte & 0xf));
        }
    }
}

fn hex_digit(nibble: u8) -> char {
    char::from(if nibble < 10 {
        b'0' + nibble
    } else {
        b'A' + nibble - 10
    })
}

/// Decodes `%XX` escapes in a URI fragment; `None` when the result is not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                match (char::from(*hi).to_digit(16), char::from(*lo).to_digit(16)) {
                    (Some(h), Some(l)) => u8::try_from(h * 16 + l).ok(),
                    _ => None,
                }
            }
            _ => None,
        };
        match decoded {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn percent_decoding() {
        assert_eq!(
            percent_decode("/$defs/my%20type").as_deref(),
            Some("/$defs/my type")
        );
        assert_eq!(percent_decode("100%").as_deref(), Some("100%"));
    }
}
