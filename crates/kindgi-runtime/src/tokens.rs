//! Credentials: call tokens (`kgi_tf_…`), wait links, ids. Each is a random
//! id plus a random secret; only the secret's SHA-256 is stored, and it is
//! compared in constant time.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The prefix of a call's tool-files token.
pub const TOOL_FILES_PREFIX: &str = "kgi_tf_";
/// The prefix of a wait link's secret path segment.
pub const WAIT_LINK_PREFIX: &str = "kgi_wl_";

/// `n` random bytes as lowercase hex.
pub(crate) fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// A new credential: its public form, its id and the hash of its secret.
#[derive(Debug)]
pub(crate) struct Minted {
    /// What the holder sends (`kgi_tf_<id>_<secret>`).
    pub(crate) public: String,
    /// The id it is looked up by.
    pub(crate) id: String,
    /// SHA-256 of the secret part.
    pub(crate) secret_hash: Vec<u8>,
}

/// Mints a credential with `prefix`.
pub(crate) fn mint(prefix: &str) -> Minted {
    let id = random_hex(12);
    let secret = random_hex(32);
    Minted {
        public: format!("{prefix}{id}_{secret}"),
        secret_hash: hash_secret(&secret),
        id,
    }
}

/// Splits a presented credential into its id and secret, when it has the
/// shape of one minted with `prefix`.
pub(crate) fn split<'a>(prefix: &str, presented: &'a str) -> Option<(&'a str, &'a str)> {
    let rest = presented.strip_prefix(prefix)?;
    let (id, secret) = rest.split_once('_')?;
    let hexish = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hexish(id) && hexish(secret)).then_some((id, secret))
}

/// SHA-256 of a secret.
pub(crate) fn hash_secret(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// Whether `secret` hashes to `stored`, compared in constant time.
pub(crate) fn secret_matches(secret: &str, stored: &[u8]) -> bool {
    hash_secret(secret).ct_eq(stored).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_split_and_match() {
        let minted = mint(TOOL_FILES_PREFIX);
        let (id, secret) = split(TOOL_FILES_PREFIX, &minted.public).expect("splits");
        assert_eq!(id, minted.id);
        assert!(secret_matches(secret, &minted.secret_hash));
        assert!(!secret_matches("00", &minted.secret_hash));
        assert!(split(TOOL_FILES_PREFIX, "kgi_tf_zz_00").is_none());
        assert!(split(TOOL_FILES_PREFIX, "Bearer").is_none());
    }
}
