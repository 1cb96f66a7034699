//! What no record may carry, taken out before it is written (the rules of
//! the Kindgi log, as the reference services apply them):
//!
//! 1. **Keys.** A field whose key looks secret has its value replaced by
//!    [`REDACTED`], at any depth: its key, lowercased without `-` and `_`,
//!    ends with one of [`SECRET_KEY_ENDINGS`] (`apiKey`, `x-api-key`,
//!    `accessToken`, `secrets`, …). A count of tokens (`tokenCount`,
//!    `promptTokens`) ends otherwise, and stays.
//! 2. **Values.** Every string — the message, the ids, the fields — is
//!    scrubbed of known secret shapes, and of nothing else, so that ids are
//!    never mangled: a Kindgi token (`kgi_bt_…`) keeps its kind and the
//!    last four characters of a long body; `Bearer <anything>` becomes
//!    `Bearer [redacted]`; a URL's password (`postgres://user:pw@`)
//!    becomes `user:***@`.
//!
//! Values nested deeper than [`MAX_DEPTH`] are written as `[too deep]`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

/// What a secret-looking field's value becomes.
pub(crate) const REDACTED: &str = "[redacted]";

/// The endings of a secret-looking key, lowercased, without `-` and `_`.
const SECRET_KEY_ENDINGS: [&str; 12] = [
    "authorization",
    "cookie",
    "token",
    "password",
    "passwd",
    "secret",
    "secrets",
    "apikey",
    "privatekey",
    "passphrase",
    "credential",
    "credentials",
];

/// How deep a field's value is written; deeper, `[too deep]`.
const MAX_DEPTH: usize = 8;

/// A Kindgi token: `kgi_`, its kind (two or three letters), its body.
static KINDGI_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)kgi_([a-z]{2,3})_([A-Za-z0-9._~+/=-]+)").expect("a valid pattern")
});
/// `Bearer` and what follows it, up to a space, quote, comma or semicolon.
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)(?-u:\b)(bearer)\s+[^\s"',;]+"#).expect("a valid pattern"));
/// A URL's user and password: `scheme://user:password@`.
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)([a-z][a-z0-9+.-]*://[^\s:/@]+):[^\s@/]+@").expect("a valid pattern")
});

/// Whether a field named `key` holds a secret (rule 1).
pub(crate) fn is_secret_key(key: &str) -> bool {
    let normalized: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_KEY_ENDINGS
        .iter()
        .any(|ending| normalized.ends_with(ending))
}

/// Whether `text` could hold a shape of rule 2: a `kgi_`, a `://` or a
/// `bearer` in it. Most ids and messages have none; this is the cheap
/// first look that spares them the patterns.
///
/// One pass over the bytes: the texts looked at are mostly a call's short
/// ids, for which setting up a substring search (`memmem`) three times
/// cost more than the look itself.
pub(crate) fn may_hold_a_secret(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, byte)| {
        let rest = &bytes[at..];
        match byte {
            b'k' => rest.starts_with(b"kgi_"),
            b':' => rest.starts_with(b"://"),
            b'b' | b'B' => rest
                .get(..6)
                .is_some_and(|word| word.eq_ignore_ascii_case(b"bearer")),
            _ => false,
        }
    })
}

/// `text` with every known secret shape masked (rule 2).
pub(crate) fn scrub_text(text: &str) -> Cow<'_, str> {
    if !may_hold_a_secret(text) {
        return Cow::Borrowed(text);
    }
    let tokens = KINDGI_TOKEN.replace_all(text, |found: &Captures<'_>| {
        let body = &found[2];
        // Only a long body keeps its tail: a short one would be most of it.
        let tail = if body.chars().count() >= 16 {
            let from = body.char_indices().rev().nth(3).map_or(0, |(i, _)| i);
            &body[from..]
        } else {
            ""
        };
        format!("kgi_{}_…{tail}", &found[1])
    });
    let bearers = BEARER.replace_all(&tokens, "$1 [redacted]");
    let passwords = URL_PASSWORD.replace_all(&bearers, "$1:***@");
    if passwords == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(passwords.into_owned())
    }
}

/// `value`, a field's, with both rules applied in place.
pub(crate) fn redact_value(value: &mut Value) {
    redact_at(value, 0);
}

fn redact_at(value: &mut Value, depth: usize) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(scrubbed) = scrub_text(text) {
                *text = scrubbed;
            }
        }
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            *value = Value::from("[too deep]");
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_at(v, depth + 1)),
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                if is_secret_key(key) {
                    *member = Value::from(REDACTED);
                } else {
                    redact_at(member, depth + 1);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secret_keys_and_counts() {
        for key in [
            "apiKey",
            "api_key",
            "x-api-key",
            "accessToken",
            "Authorization",
            "set-cookie",
            "dbPassword",
            "passwd",
            "clientSecret",
            "secrets",
            "PRIVATE_KEY",
            "passphrase",
            "credentials",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in ["tokenCount", "promptTokens", "note", "keyId", "secretName2"] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn shapes_are_scrubbed_and_nothing_else() {
        let cases = [
            ("Bearer abc.def", "Bearer [redacted]"),
            ("auth: bearer  x1,y", "auth: bearer [redacted],y"),
            ("kgi_tf_00112233445566778899aabb", "kgi_tf_…aabb"),
            ("kgi_wl_short and more", "kgi_wl_… and more"),
            ("see kgi_pt_0123456789abcdef", "see kgi_pt_…cdef"),
            (
                "mysql://root:hunter2@db:3306/x and https://ok.example/a",
                "mysql://root:***@db:3306/x and https://ok.example/a",
            ),
            ("run_1 tenant:t-2 plain", "run_1 tenant:t-2 plain"),
            (
                "xkgi_bt_0123456789abcdefWXYZ",
                "xkgi_bt_0123456789abcdefWXYZ",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(scrub_text(text), want, "{text}");
        }
        assert!(matches!(scrub_text("run_1 plain"), Cow::Borrowed(_)));
        for id in [
            "run-1",
            "t_1",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "acme.lookup",
        ] {
            assert!(!may_hold_a_secret(id), "{id}");
        }
        for text in [
            "kgi_",
            "a kgi_x",
            "https://u:p@h",
            "BeArEr",
            "x bearer y",
            "kg:bearer",
        ] {
            assert!(may_hold_a_secret(text), "{text}");
        }
        for text in ["", "kgi", ":/", "beare", "KGI_x", "bear er"] {
            assert!(!may_hold_a_secret(text), "{text}");
        }
    }

    #[test]
    fn values_at_any_depth_and_too_deep() {
        let mut value = json!({
            "nested": {"password": "p", "list": [{"apiKey": 1}, "Bearer t"]},
            "ok": "fine",
        });
        redact_value(&mut value);
        assert_eq!(
            value,
            json!({
                "nested": {"password": "[redacted]", "list": [{"apiKey": "[redacted]"}, "Bearer [redacted]"]},
                "ok": "fine",
            })
        );
        let mut deep = json!("leaf");
        for _ in 0..10 {
            deep = json!([deep]);
        }
        redact_value(&mut deep);
        let mut at = &deep;
        for _ in 0..MAX_DEPTH {
            at = &at[0];
        }
        assert_eq!(at, &json!("[too deep]"));
    }
}
