//! Percent-encoding as the protocol's JavaScript side does it: a file name
//! in `Kindgi-File-Name`, an artifact id in a tool-files URL, a property
//! name in a schema path are encoded as `encodeURIComponent` encodes them,
//! and read back with [`decode_component`].
//!
//! ```
//! use kindgi_protocol::percent::{decode_component, encode_component};
//!
//! assert_eq!(encode_component("café report.pdf"), "caf%C3%A9%20report.pdf");
//! assert_eq!(decode_component("caf%C3%A9%20report.pdf").as_deref(), Some("café report.pdf"));
//! ```

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// What `encodeURIComponent` leaves alone: letters, digits and `-_.!~*'()`.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// Percent-encodes UTF-8 text the way JavaScript's `encodeURIComponent`
/// does: every byte but ASCII letters, digits and `-_.!~*'()` becomes
/// `%XX`, with uppercase hex digits.
///
/// ```
/// use kindgi_protocol::percent::encode_component;
/// assert_eq!(encode_component("a/b?c=d"), "a%2Fb%3Fc%3Dd");
/// assert_eq!(encode_component("(it's)~fine*"), "(it's)~fine*");
/// ```
pub fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// Decodes the `%XX` escapes of `text`; `None` when the decoded bytes are
/// not UTF-8. A `%` not followed by two hex digits is kept as it is.
///
/// ```
/// use kindgi_protocol::percent::decode_component;
/// assert_eq!(decode_component("my%20type").as_deref(), Some("my type"));
/// assert_eq!(decode_component("100%").as_deref(), Some("100%"));
/// assert_eq!(decode_component("%FF"), None);
/// ```
pub fn decode_component(text: &str) -> Option<String> {
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for name in ["", "plain", "r é/s?#%", "line\r\nX: y", "%41", "(~*'!)"] {
            let encoded = encode_component(name);
            assert!(encoded.bytes().all(|b| b.is_ascii_graphic()), "{encoded}");
            assert_eq!(decode_component(&encoded).as_deref(), Some(name));
        }
    }

    #[test]
    fn lone_percent_signs_are_kept() {
        assert_eq!(decode_component("%zz%4").as_deref(), Some("%zz%4"));
        assert_eq!(decode_component("%e9").as_deref(), None);
        assert_eq!(decode_component("%c3%a9").as_deref(), Some("é"));
    }
}
