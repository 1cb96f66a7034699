//! The error of building a [`Validator`](crate::Validator).

use std::fmt;

/// A schema that cannot be compiled: it is not a valid JSON Schema 2020-12
/// document, or it uses something this validator cannot honour (a `$ref` to a
/// document that is not part of the schema, a `pattern` that is not a valid
/// regular expression).
///
/// # Example
///
/// ```
/// let err = kindgi_validate::Validator::new(&serde_json::json!({"type": 5})).unwrap_err();
/// assert!(err.to_string().starts_with("invalid JSON Schema at #/type: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    location: String,
    reason: String,
}

impl SchemaError {
    pub(crate) fn new(location: String, reason: String) -> Self {
        SchemaError { location, reason }
    }

    /// Where in the schema the problem is, as a URI fragment (`#/properties/a/type`).
    #[must_use]
    pub fn location(&self) -> &str {
        &self.location
    }

    /// What is wrong there.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON Schema at {}: {}",
            self.location, self.reason
        )
    }
}

impl std::error::Error for SchemaError {}
