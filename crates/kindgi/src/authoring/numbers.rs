//! JSON numbers as JavaScript reads them, for typed handler input.
//!
//! JSON has one number type: `1.0` is the number 1, and a JavaScript pack
//! sees `1`. serde_json keeps `1.0` a float, which a typed `u32` or `i64`
//! field refuses. Before a handler's input (or a check's config) is read
//! into its type, every float with no fraction that an integer holds
//! exactly becomes that integer, so a schema's `integer` (which `1.0`
//! passes, as in Ajv) and the handler's type agree.

use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

/// The largest integer an `f64` holds exactly, with every one below it.
const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

/// Rewrites, in place, every integral float of `value` (`1.0`, `-3e2`)
/// as the integer it is (`1`, `-300`). Other numbers stay as they are.
pub(crate) fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(integer) = as_integer(number) {
                *number = integer;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(object) => object.values_mut().for_each(integral_floats_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Reads `value` into `T` as a JavaScript pack would see it: integral
/// floats first become integers (see [`integral_floats_as_integers`]).
pub(crate) fn read_typed<T: DeserializeOwned>(mut value: Value) -> serde_json::Result<T> {
    integral_floats_as_integers(&mut value);
    serde_json::from_value(value)
}

fn as_integer(number: &Number) -> Option<Number> {
    if !number.is_f64() {
        return None;
    }
    let float = number.as_f64()?;
    if float.fract() != 0.0 || float.abs() > EXACT {
        return None;
    }
    // Exact: |float| ≤ 2^53 and no fraction. `-0.0` becomes 0.
    #[expect(clippy::cast_possible_truncation, reason = "checked to be exact")]
    Some(Number::from(float as i64))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integral_floats_become_integers_everywhere() {
        let mut value = json!({
            "a": 1.0, "b": [2.0, -3e2, {"c": -0.0}], "d": 1.5, "e": 7, "f": "1.0",
            "g": 1e300, "h": 9007199254740992.0, "i": 9007199254740994.0
        });
        integral_floats_as_integers(&mut value);
        assert_eq!(
            value,
            json!({
                "a": 1, "b": [2, -300, {"c": 0}], "d": 1.5, "e": 7, "f": "1.0",
                "g": 1e300, "h": 9007199254740992_i64, "i": 9007199254740994.0
            })
        );
        assert!(value["a"].is_i64());
        assert!(value["g"].is_f64());
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
        integral_floats_as_integers(&mut value);
        let input: Input = serde_json::from_value(value).expect("1.0 is 1");
        assert_eq!((input.count, input.ratio), (1, 2.0));
    }
}
