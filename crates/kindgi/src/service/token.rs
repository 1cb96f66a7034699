//! The service token: the shared secret every `/v1/*` request carries in
//! `kindgi-pack-token`.

use std::fmt;

use subtle::ConstantTimeEq;

/// A pack service token: never empty, printable ASCII without spaces (it
/// travels in an HTTP header).
///
/// A service can't be given an empty token — an empty `kindgi-pack-token`
/// header would then pass — so the token is a type that can only hold a
/// usable one. Its `Debug` output never shows the value.
///
/// ```
/// let token = kindgi::Token::new("4f1c0d9e2b7a").expect("a usable token");
/// assert!(kindgi::Token::new("").is_err());
/// assert!(kindgi::Token::new("two words").is_err());
/// # let _ = token;
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token `value`, as is (not trimmed).
    ///
    /// # Errors
    ///
    /// [`InvalidToken`] if `value` is empty or holds a byte outside
    /// printable ASCII (0x21–0x7e): a space, a control character, UTF-8.
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidToken> {
        let value = value.into();
        if kindgi_protocol::headers::is_header_token(&value) {
            Ok(Self(value))
        } else {
            Err(InvalidToken)
        }
    }

    /// The token, to send it in `kindgi-pack-token`.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `sent` is this token, compared in constant time so that
    /// how long a refusal takes says nothing about the token.
    pub fn matches(&self, sent: &[u8]) -> bool {
        bool::from(sent.ct_eq(self.0.as_bytes()))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Why [`Token::new`] refused a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidToken;

impl fmt::Display for InvalidToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a pack service token is one or more bytes of printable ASCII without spaces")
    }
}

impl std::error::Error for InvalidToken {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_usable_token_is_a_token() {
        assert_eq!(Token::new(""), Err(InvalidToken));
        assert_eq!(Token::new(" tok"), Err(InvalidToken));
        assert_eq!(Token::new("tök"), Err(InvalidToken));
        let token = Token::new("tok").expect("a token");
        assert!(token.matches(b"tok"));
        assert!(!token.matches(b""));
        assert!(!token.matches(b"tok2"));
        assert_eq!(format!("{token:?}"), "Token(…)");
    }
}
