//! Numbers compared exactly, whatever mix of integer and float.

use std::cmp::Ordering;

use serde_json::Number;

/// The largest integer below which every integer is an exact `f64`.
const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

/// A JSON number as serde_json reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A number with a fraction or an exponent.
    Float(f64),
}

impl Num {
    /// The number serde_json read into `n`.
    pub(crate) fn of(n: &Number) -> Option<Num> {
        if let Some(u) = n.as_u64() {
            Some(Num::Unsigned(u))
        } else if let Some(i) = n.as_i64() {
            Some(Num::Signed(i))
        } else {
            n.as_f64().map(Num::Float)
        }
    }

    /// Whether it has no fraction (JSON Schema's `integer`).
    pub(crate) fn is_integral(self) -> bool {
        match self {
            Num::Unsigned(_) | Num::Signed(_) => true,
            Num::Float(f) => f.fract() == 0.0,
        }
    }

    /// As serde_json's `as_f64` gives it.
    #[expect(clippy::cast_precision_loss, reason = "as serde_json converts")]
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Unsigned(u) => u as f64,
            Num::Signed(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    fn integer(self) -> Option<i128> {
        match self {
            Num::Unsigned(u) => Some(i128::from(u)),
            Num::Signed(i) => Some(i128::from(i)),
            Num::Float(_) => None,
        }
    }

    /// `self` against `other`, exactly; `None` where a validator comparing
    /// through `f64` might see it otherwise (an integer beyond 2^53 against
    /// a float), or for a NaN.
    pub(crate) fn compare(self, other: Num) -> Option<Ordering> {
        match (self.integer(), other.integer()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            (None, None) => self.as_f64().partial_cmp(&other.as_f64()),
            (Some(a), None) => exact_against_float(a, other.as_f64()),
            (None, Some(b)) => exact_against_float(b, self.as_f64()).map(Ordering::reverse),
        }
    }
}

/// Integer `a` against float `b`, when `a` is an exact `f64`.
#[expect(clippy::cast_precision_loss, reason = "exact below 2^53")]
fn exact_against_float(a: i128, b: f64) -> Option<Ordering> {
    if a.unsigned_abs() > EXACT as u128 {
        return None;
    }
    (a as f64).partial_cmp(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_numbers_compare_by_value() {
        assert_eq!(
            Num::Unsigned(3).compare(Num::Float(2.5)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Num::Signed(-3).compare(Num::Unsigned(0)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Num::Float(1.0).compare(Num::Unsigned(1)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            Num::Unsigned(u64::MAX).compare(Num::Signed(i64::MIN)),
            Some(Ordering::Greater)
        );
        assert_eq!(Num::Float(f64::NAN).compare(Num::Float(1.0)), None);
        // Beyond 2^53 an f64 comparison could round: not answered.
        assert_eq!(
            Num::Unsigned(9_007_199_254_740_993).compare(Num::Float(1.0)),
            None
        );
    }
}
