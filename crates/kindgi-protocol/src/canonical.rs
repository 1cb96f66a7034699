//! Canonical JSON: the bytes JavaScript writes for
//! `JSON.stringify(sorted, null, 2) + "\n"`, where `sorted` has the keys of
//! every object sorted.
//!
//! Every indexer of every language must write the same index bytes for the
//! same pack, so this module copies JavaScript's rules exactly:
//!
//! - keys sorted by UTF-16 code units, and — as a JavaScript object orders
//!   its own properties — array-index keys (`"0"`, `"7"`, `"42"`) first in
//!   numeric order;
//! - strings escape only `"`, `\` and control characters (`\b \f \n \r \t`,
//!   the rest as lowercase `\u00xx`); every other character is itself;
//! - numbers as `Number.prototype.toString`: `1` not `1.0`, `1e+21`,
//!   `1.5e-7`, integers past 2^53 rounded as a double would be.
//!
//! ```
//! use kindgi_protocol::canonical::to_canonical_string;
//! let value = serde_json::json!({"b": [1.0, "é\n"], "a": {}, "10": 0, "9": 0});
//! assert_eq!(
//!     to_canonical_string(&value),
//!     "{\n  \"9\": 0,\n  \"10\": 0,\n  \"a\": {},\n  \"b\": [\n    1,\n    \"é\\n\"\n  ]\n}\n"
//! );
//! ```

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The canonical text of `value`: two-space indent, sorted keys, trailing
/// newline.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, Some(0));
    out.push('\n');
    out
}

/// Compact JSON (`JSON.stringify(value)`), keys in canonical order.
///
/// Any serializable value; one that doesn't serialize to JSON (a map with
/// non-string keys) is written as `null`.
pub fn to_compact_string<T: Serialize + ?Sized>(value: &T) -> String {
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    let mut out = String::new();
    write_value(&mut out, &value, None);
    out
}

fn write_value(out: &mut String, value: &Value, indent: Option<usize>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent.map(|d| d + 1));
                write_value(out, item, indent.map(|d| d + 1));
            }
            newline(out, indent);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, key) in sorted_keys(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent.map(|d| d + 1));
                write_string(out, key);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_value(out, &map[key], indent.map(|d| d + 1));
            }
            newline(out, indent);
            out.push('}');
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>) {
    if let Some(depth) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
}

/// Keys in the order a JavaScript object built from sorted keys lists them.
fn sorted_keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by(|a, b| match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.encode_utf16().cmp(b.encode_utf16()),
    });
    keys
}

/// The numeric value of a key JavaScript treats as an array index: the
/// canonical decimal form of an integer below 2^32 − 1.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|&n| n != u32::MAX)
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Largest integer a double holds exactly: 2^53.
const MAX_EXACT_INTEGER: u64 = 1 << 53;

fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64().filter(|&u| u <= MAX_EXACT_INTEGER) {
        let _ = write!(out, "{u}");
    } else if let Some(i) = n
        .as_i64()
        .filter(|&i| i.unsigned_abs() <= MAX_EXACT_INTEGER)
    {
        let _ = write!(out, "{i}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&js_number_to_string(f));
    }
}

/// `Number.prototype.toString()` of a finite double.
///
/// ```
/// use kindgi_protocol::canonical::js_number_to_string as js;
/// assert_eq!(js(1.0), "1");
/// assert_eq!(js(0.1), "0.1");
/// assert_eq!(js(1e21), "1e+21");
/// assert_eq!(js(123e-9), "1.23e-7");
/// assert_eq!(js(-0.0), "0");
/// ```
pub fn js_number_to_string(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    if !f.is_finite() {
        return "null".to_owned();
    }
    // `{:e}` gives the shortest digits that round-trip: "d.ddde-7".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n = exponent + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_like_json_stringify() {
        let value = json!("q\" b\\ \u{0}\u{1f}\u{7f}\u{2028} é 😀 \t\r\n\u{8}\u{c}");
        assert_eq!(
            to_compact_string(&value),
            "\"q\\\" b\\\\ \\u0000\\u001f\u{7f}\u{2028} é 😀 \\t\\r\\n\\b\\f\""
        );
    }

    #[test]
    fn numbers_like_number_to_string() {
        let cases = [
            (json!(0), "0"),
            (json!(-5), "-5"),
            (json!(2.0), "2"),
            (json!(-2.5), "-2.5"),
            (json!(1e20), "100000000000000000000"),
            (json!(1e21), "1e+21"),
            (json!(1.5e300), "1.5e+300"),
            (json!(0.000001), "0.000001"),
            (json!(0.0000001), "1e-7"),
            (json!(9007199254740993u64), "9007199254740992"),
            (json!(u64::MAX), "18446744073709552000"),
            (json!(i64::MIN), "-9223372036854776000"),
            (json!(0.1 + 0.2), "0.30000000000000004"),
        ];
        for (value, expected) in cases {
            assert_eq!(to_compact_string(&value), expected, "{value}");
        }
    }

    #[test]
    fn keys_in_javascript_order() {
        let value =
            json!({"b": 1, "a": 2, "B": 3, "10": 4, "2": 5, "01": 6, "\u{e000}": 7, "😀": 8});
        assert_eq!(
            to_compact_string(&value),
            "{\"2\":5,\"10\":4,\"01\":6,\"B\":3,\"a\":2,\"b\":1,\"😀\":8,\"\u{e000}\":7}"
        );
    }

    #[test]
    fn indented_nesting() {
        let value = json!({"z": [[], {}, [1]], "a": {"k": null}});
        assert_eq!(
            to_canonical_string(&value),
            "{\n  \"a\": {\n    \"k\": null\n  },\n  \"z\": [\n    [],\n    {},\n    [\n      1\n    ]\n  ]\n}\n"
        );
    }
}
