//! The text checks behind [`Validator::read_checked`], one by one, for the
//! fuzz targets that hold each to the tree's answer (feature `fuzzing`).
//! Not a stable API.

use serde::de::{DeserializeSeed, Deserializer};

use crate::{Issue, Validator};

/// Whether `text` is one JSON value the schema passes, with nothing to
/// fill, no repeated key, and any undeclared keys in sorted order: read into
/// any type, it reads as its tree does.
#[must_use]
pub fn accepts_text(validator: &Validator, text: &[u8]) -> bool {
    validator.accepts_text(text)
}

/// The issues of an instance with one error, found from its text; `None`
/// when the text doesn't settle it.
#[must_use]
pub fn issues_from_text(validator: &Validator, text: &[u8]) -> Option<Vec<Issue>> {
    validator.issues_from_text(text)
}

/// [`issues_from_text`] for a text that [`deserialize_passing`] refused
/// with `refused`, past what that read had checked.
#[must_use]
pub fn issues_from_refused_text(
    validator: &Validator,
    text: &[u8],
    refused: &serde_json::Error,
) -> Option<Vec<Issue>> {
    validator.issues_from_refused_text(text, refused)
}

/// Reads `seed` from `deserializer`, every value checked as it is read.
///
/// # Errors
///
/// The deserializer's error, or one that says the text didn't pass.
pub fn deserialize_passing<'de, S, D>(
    validator: &Validator,
    seed: S,
    deserializer: D,
) -> Result<S::Value, D::Error>
where
    S: DeserializeSeed<'de>,
    D: Deserializer<'de>,
{
    validator.deserialize_passing(seed, deserializer)
}

/// Whether `error`, from [`deserialize_passing`], says no more than that a
/// default is missing.
#[must_use]
pub fn refused_for_a_default(error: &dyn std::fmt::Display) -> bool {
    Validator::refused_for_a_default(error)
}
