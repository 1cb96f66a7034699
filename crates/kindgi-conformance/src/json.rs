//! JSON the way the contract pins it: the canonical index bytes, and the
//! order of a record's keys.

use std::cmp::Ordering;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::{Number, Value};

/// `value` as its canonical index bytes: keys sorted (UTF-16 code-unit
/// order, as JavaScript sorts) at every level, two-space indent, integral
/// numbers without a fraction, a trailing newline — what
/// `JSON.stringify(sorted, null, 2) + "\n"` writes.
///
/// ```
/// use kindgi_conformance::json::canonical_pretty;
/// let value = serde_json::json!({"b": [1, {}], "a": 2.0});
/// assert_eq!(canonical_pretty(&value), "{\n  \"a\": 2,\n  \"b\": [\n    1,\n    {}\n  ]\n}\n");
/// ```
pub fn canonical_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, 0, &mut out);
    out.push('\n');
    out
}

fn write_value(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(indent + 2, out);
                write_value(item, indent + 2, out);
            }
            out.push('\n');
            pad(indent, out);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| utf16_cmp(a, b));
            out.push_str("{\n");
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(indent + 2, out);
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                if let Some(item) = map.get(*key) {
                    write_value(item, indent + 2, out);
                }
            }
            out.push('\n');
            pad(indent, out);
            out.push('}');
        }
    }
}

fn pad(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// Compares strings as JavaScript's default sort does: by UTF-16 code units.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A number as JavaScript writes it.
fn js_number(n: &Number) -> String {
    // Integers JavaScript holds exactly are written as they are.
    const EXACT: u64 = 1 << 53;
    if n.as_u64().is_some_and(|u| u <= EXACT)
        || n.as_i64().is_some_and(|i| i.unsigned_abs() <= EXACT)
    {
        return n.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if f == 0.0 {
        return "0".to_owned();
    }
    // A whole number below 1e21 is written without an exponent, in the
    // fewest digits that read back to it (2^64 is 18446744073709552000),
    // as Rust's `Display` for `f64` writes it too.
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{f}");
    }
    let text = n.to_string();
    // JavaScript writes a positive exponent with its sign: 1e+21.
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') && !exp.starts_with('+') => {
            format!("{mantissa}e+{exp}")
        }
        _ => text,
    }
}

/// The top-level keys of the JSON object `text`, in the order written.
/// `None` when `text` isn't a JSON object.
///
/// ```
/// use kindgi_conformance::json::object_keys;
/// assert_eq!(object_keys(r#"{"b":1,"a":{"z":0}}"#), Some(vec!["b".to_owned(), "a".to_owned()]));
/// assert_eq!(object_keys("[1]"), None);
/// ```
pub fn object_keys(text: &str) -> Option<Vec<String>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let keys = de.deserialize_map(KeysVisitor).ok()?;
    de.end().ok()?;
    Some(keys)
}

struct KeysVisitor;

impl<'de> Visitor<'de> for KeysVisitor {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            keys.push(key);
        }
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_javascript_writes_them() {
        assert_eq!(canonical_pretty(&json!(1.5)), "1.5\n");
        assert_eq!(canonical_pretty(&json!(-0.0)), "0\n");
        assert_eq!(canonical_pretty(&json!(1e21)), "1e+21\n");
        assert_eq!(canonical_pretty(&json!(1e-7)), "1e-7\n");
        assert_eq!(
            canonical_pretty(&json!(9007199254740992u64)),
            "9007199254740992\n"
        );
        assert_eq!(canonical_pretty(&json!(u64::MAX)), "18446744073709552000\n");
        assert_eq!(canonical_pretty(&json!(i64::MIN)), "-9223372036854776000\n");
        assert_eq!(
            canonical_pretty(&json!(1.8446744073709552e19)),
            "18446744073709552000\n"
        );
    }

    #[test]
    fn sorts_keys_by_utf16() {
        // U+1F600 is 0xD83D 0xDE00 in UTF-16, so it sorts before U+FF5E.
        let value = json!({"\u{ff5e}": 1, "\u{1f600}": 2, "a": 3});
        let text = canonical_pretty(&value);
        let a = text.find("\"a\"").expect("a");
        let emoji = text.find('\u{1f600}').expect("emoji");
        let wave = text.find('\u{ff5e}').expect("wave");
        assert!(a < emoji && emoji < wave, "{text}");
    }
}
