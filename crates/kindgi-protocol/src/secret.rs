//! A string that never shows itself in `Debug` output.

use serde::{Deserialize, Serialize};

/// A credential: a secret value, an access token, a wait URL, a files token.
///
/// `Debug` prints `Secret(***)`, so a secret never reaches a log through a
/// `{:?}`. Read it with [`Secret::expose`] where it must be used.
///
/// ```
/// use kindgi_protocol::Secret;
/// let token = Secret::new("s3cr3t");
/// assert_eq!(format!("{token:?}"), "Secret(***)");
/// assert_eq!(token.expose(), "s3cr3t");
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself. Use it only where it must go.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}
