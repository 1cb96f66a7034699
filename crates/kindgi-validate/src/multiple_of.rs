//! `multipleOf` with Ajv's floating-point arithmetic.
//!
//! Ajv divides and checks that the quotient is an integer in JavaScript
//! doubles, so `0.3` is not a multiple of `0.1` there (`0.3 / 0.1` is
//! `2.9999999999999996`), while the `jsonschema` crate computes exactly.
//! Pack services answer the same everywhere, so this keyword replaces the
//! crate's.

use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Value};

/// The `multipleOf` keyword, checked as Ajv does.
#[derive(Debug)]
struct MultipleOf {
    divisor: f64,
}

impl MultipleOf {
    fn accepts(&self, instance: &Value) -> bool {
        let Some(x) = instance.as_f64().filter(|_| instance.is_number()) else {
            return true;
        };
        is_multiple(x, self.divisor)
    }
}

/// Whether `x` is a multiple of `divisor` as Ajv finds it.
pub(crate) fn is_multiple(x: f64, divisor: f64) -> bool {
    // Ajv: `res = data / divisor; invalid = res !== parseInt(res)`. `parseInt`
    // reads the printed number, so quotients JavaScript prints with an
    // exponent (|q| ≥ 1e21) never pass.
    let quotient = x / divisor;
    quotient.is_finite() && quotient.fract() == 0.0 && quotient.abs() < 1e21
}

impl<'i> Keyword<'i> for MultipleOf {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.accepts(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom("must be a multiple of the divisor"))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.accepts(instance)
    }
}

/// The keyword factory to register as `multipleOf`.
pub(crate) fn factory<'a>(
    _parent: &'a Map<String, Value>,
    value: &'a Value,
    _location: Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    match value.as_f64() {
        Some(divisor) if divisor > 0.0 => Ok(Box::new(MultipleOf { divisor })),
        _ => Err(ValidationError::schema(
            "multipleOf must be a number greater than 0",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn accepts(divisor: f64, x: Value) -> bool {
        MultipleOf { divisor }.accepts(&x)
    }

    #[test]
    fn divides_in_doubles_like_ajv() {
        assert!(accepts(2.0, json!(4)));
        assert!(!accepts(2.0, json!(3)));
        assert!(accepts(0.5, json!(1.5)));
        assert!(!accepts(0.1, json!(0.3)));
        assert!(!accepts(0.01, json!(4.02)));
        assert!(accepts(0.01, json!(4.5)));
        assert!(!accepts(3.0, json!(1e300)));
        assert!(accepts(3.0, json!("not a number")));
    }
}
