//! File names as they travel: `Kindgi-File-Name` holds percent-encoded
//! UTF-8 (`encodeURIComponent` of the name, see [`crate::percent`]).

/// Why a `Kindgi-File-Name` value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadFileName;

impl std::fmt::Display for BadFileName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kindgi-File-Name must be percent-encoded UTF-8")
    }
}

impl std::error::Error for BadFileName {}

/// Decodes a `Kindgi-File-Name` value: `None` for an empty name (stored
/// as unnamed).
///
/// The name is kept as sent, whatever it holds (`../`, NUL, any length
/// the header allows): it is only ever a label, never a path.
///
/// ```
/// use kindgi_protocol::file_name::decode_file_name;
/// assert_eq!(decode_file_name("r%C3%A9sum%C3%A9.pdf"), Ok(Some("résumé.pdf".to_owned())));
/// assert_eq!(decode_file_name(""), Ok(None));
/// assert!(decode_file_name("%FF").is_err());
/// ```
///
/// # Errors
///
/// [`BadFileName`] when the decoded bytes are not UTF-8.
pub fn decode_file_name(raw: &str) -> Result<Option<String>, BadFileName> {
    let name = crate::percent::decode_component(raw).ok_or(BadFileName)?;
    Ok((!name.is_empty()).then_some(name))
}
