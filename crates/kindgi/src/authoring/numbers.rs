//! JSON numbers as JavaScript reads them, for typed handler input.
//!
//! JSON has one number type: `1.0` is the number 1, and a JavaScript pack
//! sees `1`. serde_json keeps `1.0` a float, which a typed `u32` or `i64`
//! field refuses. Before a handler's input (or a check's config) is read
//! into its type, every float with no fraction that an integer holds
//! exactly becomes that integer, so a schema's `integer` (which `1.0`
//! passes, as in Ajv) and the handler's type agree.
//!
//! Past `Number.MAX_SAFE_INTEGER` (2^53 − 1) it goes the other way: an
//! integer becomes the `f64` nearest it, the number JavaScript (and so
//! every other pack service and its validator) reads: `9007199254740993`
//! is `9007199254740992.0`. No 64-bit integer field takes a number past
//! that bound (its input schema stops there), so such a number reaches a
//! handler only where a float may be (`f64`, `serde_json::Value`), and an
//! untagged enum never reads it into an integer variant whose schema
//! refused it.

use serde::de::DeserializeOwned;
use serde_json::{Number, Value};
use serde_path_to_error::{Path, Segment};

/// `Number.MAX_SAFE_INTEGER`, 2^53 − 1: every integer up to it is exactly
/// an `f64`, and JavaScript reads it as itself; past it, not every one.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// [`MAX_SAFE_INTEGER`] as an `f64` (exactly).
const MAX_SAFE_FLOAT: f64 = 9_007_199_254_740_991.0;

/// Rewrites, in place, every number of `value` as JavaScript reads it:
/// an integral float up to [`MAX_SAFE_INTEGER`] (`1.0`, `-3e2`) as the
/// integer it is (`1`, `-300`), an integer past it as the nearest `f64`.
/// Other numbers stay as they are.
pub(crate) fn numbers_as_javascript_reads_them(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(read) = as_javascript_reads(number) {
                *number = read;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(numbers_as_javascript_reads_them),
        Value::Object(object) => object
            .values_mut()
            .for_each(numbers_as_javascript_reads_them),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Reads `value` into `T` as a JavaScript pack would see it: its numbers
/// first as JavaScript reads them (see
/// [`numbers_as_javascript_reads_them`]).
pub(crate) fn read_typed<T: DeserializeOwned>(mut value: Value) -> Result<T, TypedRefusal> {
    numbers_as_javascript_reads_them(&mut value);
    // Read untracked: only a refusal pays for finding where it is (a
    // tracked read keeps every key it passes, ~3× the read's time).
    T::deserialize(&value).map_err(
        |first| match serde_path_to_error::deserialize::<_, T>(&value) {
            Err(e) => TypedRefusal {
                pointer: json_pointer(e.path()),
                message: e.into_inner().to_string(),
            },
            Ok(_) => TypedRefusal::whole(first.to_string()),
        },
    )
}

/// A value that passed its schema and still didn't read into its type
/// (a type whose `Deserialize` refuses more than its schema says):
/// serde's words, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypedRefusal {
    /// serde's message (`UUID parsing failed: …`).
    pub(crate) message: String,
    /// The JSON pointer of the value serde refused (`""`: the whole value,
    /// or a place serde doesn't tell, inside an untagged or internally
    /// tagged enum).
    pub(crate) pointer: String,
}

impl TypedRefusal {
    /// A refusal of the whole value.
    pub(crate) fn whole(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            pointer: String::new(),
        }
    }
}

impl std::fmt::Display for TypedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `path` as a JSON pointer (RFC 6901), up to the first segment serde
/// doesn't name.
fn json_pointer(path: &Path) -> String {
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => break,
        }
    }
    pointer
}

/// `number` as JavaScript reads it, when that is another JSON number.
fn as_javascript_reads(number: &Number) -> Option<Number> {
    if number.is_f64() {
        return exact_integer(number.as_f64()?).map(Number::from);
    }
    let past_safe = number
        .as_i128()
        .is_some_and(|n| n.unsigned_abs() > u128::from(MAX_SAFE_INTEGER));
    if past_safe {
        return number.as_f64().and_then(Number::from_f64);
    }
    None
}

/// The integer `float` is, when it has no fraction and
/// `|float| ≤` [`MAX_SAFE_INTEGER`] (every such integer is exactly an
/// `f64`, and no other integer is that `f64`). `-0.0` is 0.
pub(crate) fn exact_integer(float: f64) -> Option<i64> {
    if float.abs() > MAX_SAFE_FLOAT {
        return None;
    }
    // Below 2^53 the round trip through an integer is exact only for an
    // integral float: as `fract() == 0.0`, without a call to `trunc` (a
    // NaN comes back as 0, and is no integer either).
    #[expect(clippy::cast_possible_truncation, reason = "|float| ≤ 2^53")]
    let integer = float as i64;
    #[expect(clippy::cast_precision_loss, reason = "|integer| ≤ 2^53")]
    let back = integer as f64;
    (back == float).then_some(integer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[expect(dead_code, reason = "read, never looked at")]
    struct Order {
        lines: Vec<Line>,
        counts: std::collections::BTreeMap<String, u8>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[expect(dead_code, reason = "read, never looked at")]
    struct Line {
        host: std::net::Ipv4Addr,
    }

    #[test]
    fn a_refusal_names_the_pointer_of_the_value_serde_refused() {
        let refused = read_typed::<Order>(json!({
            "lines": [{"host": "10.0.0.1"}, {"host": "10.0.0.300"}],
            "counts": {}
        }))
        .expect_err("not an address");
        assert_eq!(refused.pointer, "/lines/1/host");
        assert_eq!(refused.message, "invalid IPv4 address syntax");
        let refused = read_typed::<Order>(json!({
            "lines": [],
            "counts": {"a/b~c": 300}
        }))
        .expect_err("past u8");
        assert_eq!(refused.pointer, "/counts/a~1b~0c");
        let refused = read_typed::<Order>(json!([])).expect_err("not an object");
        assert_eq!(refused.pointer, "");
    }

    #[test]
    fn an_exact_integer_is_an_integral_float_up_to_the_safe_bound() {
        for float in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            0.5,
            -0.5,
            1e-300,
            4.5e15,
            MAX_SAFE_FLOAT,
            -MAX_SAFE_FLOAT,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_992.0,
            1.8e16,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let by_fract = float.fract() == 0.0 && float.abs() <= MAX_SAFE_FLOAT;
            assert_eq!(exact_integer(float).is_some(), by_fract, "{float}");
        }
        assert_eq!(exact_integer(-0.0), Some(0));
        assert_eq!(exact_integer(-300.0), Some(-300));
        assert_eq!(exact_integer(MAX_SAFE_FLOAT), Some(9_007_199_254_740_991));
        assert_eq!(exact_integer(9_007_199_254_740_992.0), None);
    }

    #[test]
    fn numbers_are_read_as_javascript_reads_them_everywhere() {
        let mut value = json!({
            "a": 1.0, "b": [2.0, -3e2, {"c": -0.0}], "d": 1.5, "e": 7, "f": "1.0",
            "g": 1e300, "h": 9007199254740991.0, "i": 9007199254740992.0,
            "j": 9007199254740991_u64, "k": 9007199254740993_u64, "l": -9007199254740993_i64,
            "m": u64::MAX
        });
        numbers_as_javascript_reads_them(&mut value);
        assert_eq!(
            value,
            json!({
                "a": 1, "b": [2, -300, {"c": 0}], "d": 1.5, "e": 7, "f": "1.0",
                "g": 1e300, "h": 9007199254740991_i64, "i": 9007199254740992.0,
                "j": 9007199254740991_u64, "k": 9007199254740992.0, "l": -9007199254740992.0,
                "m": 18446744073709551616.0
            })
        );
        assert!(value["a"].is_i64());
        assert!(value["g"].is_f64());
        assert!(value["k"].is_f64() && value["l"].is_f64());
    }

    #[test]
    fn an_integer_past_the_safe_bound_never_reads_as_an_integer_variant() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(untagged)]
        enum Amount {
            Whole(i64),
            Part(f64),
        }
        let read = |n: Value| read_typed::<Amount>(n).expect("a number");
        assert_eq!(
            read(json!(9_007_199_254_740_991_u64)),
            Amount::Whole(9_007_199_254_740_991)
        );
        assert_eq!(
            read(json!(9_007_199_254_740_993_u64)),
            Amount::Part(9_007_199_254_740_992.0)
        );
        assert_eq!(
            read(json!(-9_007_199_254_740_993_i64)),
            Amount::Part(-9_007_199_254_740_992.0)
        );
    }

    #[test]
    fn a_typed_integer_takes_one_point_zero() {
        #[derive(serde::Deserialize)]
        struct Input {
            count: u32,
            ratio: f64,
        }
        let mut value = json!({"count": 1.0, "ratio": 2.0});
        assert!(serde_json::from_value::<Input>(value.clone()).is_err());
        numbers_as_javascript_reads_them(&mut value);
        let input: Input = serde_json::from_value(value).expect("1.0 is 1");
        assert_eq!((input.count, input.ratio), (1, 2.0));
    }
}
