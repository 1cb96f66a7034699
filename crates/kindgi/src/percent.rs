//! Percent-encoding of file names for `Kindgi-File-Name`, as JavaScript's
//! `encodeURIComponent` does it. (Self-contained: the fuzz targets compile
//! this file as it is.)

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

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

/// Percent-encodes UTF-8 text the way JavaScript's `encodeURIComponent` does.
///
/// ```
/// assert_eq!(kindgi::encode_component("café report.pdf"), "caf%C3%A9%20report.pdf");
/// ```
pub fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}
