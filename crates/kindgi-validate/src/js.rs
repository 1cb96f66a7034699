//! JavaScript value semantics that Ajv's output depends on: how a number prints,
//! how a number serialises, and deep equality.
//!
//! Ajv builds its messages with JavaScript string interpolation and reports schema
//! values as JavaScript numbers, so `1.0` in a schema prints and serialises as `1`.

use serde_json::{Map, Number, Value};

/// The largest integer a JavaScript number holds exactly (2^53).
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// `String(value)` for a JSON value as JavaScript would print it inside a template
/// string: numbers in JavaScript's shortest form, strings raw, arrays joined by `,`.
pub(crate) fn display(value: &Value) -> String {
    match value {
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => display(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// A JSON number as JavaScript's `Number.prototype.toString` prints it.
pub(crate) fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    n.as_f64().map_or_else(|| n.to_string(), float)
}

/// An `f64` as JavaScript's `Number.prototype.toString` prints it.
pub(crate) fn float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. `1.2345e-7`.
    let exp_form = format!("{:e}", x.abs());
    let (mantissa, exponent) = exp_form.split_once('e').unwrap_or((exp_form.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    // JavaScript's `n`: the value is 0.d1d2…dk × 10^n.
    let n = exponent + 1;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(n - k).unwrap_or(0),
        ));
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-n).unwrap_or(0)));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// A copy of `value` whose numbers serialise as JavaScript would: an integral
/// float (`1.0`) becomes an integer (`1`).
pub(crate) fn normalize(value: &Value) -> Value {
    match value {
        Value::Number(n) => Value::Number(normalize_number(n)),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

fn normalize_number(n: &Number) -> Number {
    match n.as_f64() {
        Some(x) if !n.is_i64() && !n.is_u64() && x.fract() == 0.0 && x.abs() <= MAX_SAFE => {
            // Exact: |x| ≤ 2^53 fits an i64 and has no fraction.
            #[allow(clippy::cast_possible_truncation)]
            Number::from(x as i64)
        }
        _ => n.clone(),
    }
}

/// Deep equality as Ajv's `fast-deep-equal` sees it: numbers compare by value,
/// so `1` equals `1.0`; objects compare key by key regardless of order.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|other| equal(v, other)))
        }
        _ => a == b,
    }
}

fn numbers_equal(x: &Number, y: &Number) -> bool {
    if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
        return p == q;
    }
    if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
        return p == q;
    }
    #[allow(clippy::float_cmp)]
    match (x.as_f64(), y.as_f64()) {
        (Some(p), Some(q)) => p == q,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_javascript() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (-2.0, "-2"),
            (0.5, "0.5"),
            (1.5, "1.5"),
            (123.456, "123.456"),
            (0.000_001, "0.000001"),
            (0.000_000_1, "1e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-1.5e-9, "-1.5e-9"),
            (2.5e22, "2.5e+22"),
        ];
        for (x, want) in cases {
            assert_eq!(float(x), want, "{x}");
        }
    }

    #[test]
    fn display_joins_arrays_and_prints_numbers() {
        assert_eq!(display(&json!(["string", "null"])), "string,null");
        assert_eq!(display(&json!(1.0)), "1");
        assert_eq!(display(&json!(7)), "7");
        assert_eq!(display(&json!("^a+$")), "^a+$");
    }

    #[test]
    fn normalize_turns_integral_floats_into_integers() {
        let v = normalize(&json!([1.0, 2.5, {"a": -3.0}, "x"]));
        assert_eq!(
            serde_json::to_string(&v).expect("serializes"),
            r#"[1,2.5,{"a":-3},"x"]"#
        );
    }

    #[test]
    fn equality_is_numeric_and_deep() {
        assert!(equal(&json!(1), &json!(1.0)));
        assert!(equal(
            &json!({"a": [1, {"b": 2}]}),
            &json!({"a": [1.0, {"b": 2}]})
        ));
        assert!(!equal(&json!("1"), &json!(1)));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }
}
