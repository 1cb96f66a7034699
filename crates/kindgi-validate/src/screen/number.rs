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
            // As `f.fract() == 0.0`, without a call to `trunc`: every
            // finite float from 2^53 on is integral, and below it the round
            // trip through an integer is exact only for integral ones (a
            // NaN comes back as 0, an infinity as i64's bound).
            #[expect(clippy::cast_possible_truncation, reason = "below 2^53")]
            Num::Float(f) => (f.abs() >= EXACT && f.is_finite()) || (f as i64) as f64 == f,
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

    /// The number as an `f64` when that is exactly it: any float, and an
    /// integer of at most 2^53 either way.
    #[expect(clippy::cast_precision_loss, reason = "exact up to 2^53")]
    pub(crate) fn exact_f64(self) -> Option<f64> {
        const EXACT_INTEGER: u64 = 1 << 53;
        match self {
            Num::Unsigned(u) if u <= EXACT_INTEGER => Some(u as f64),
            Num::Signed(i) if i.unsigned_abs() <= EXACT_INTEGER => Some(i as f64),
            Num::Float(f) => Some(f),
            _ => None,
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
        // The pairs most schemas and instances make, first.
        match (self, other) {
            (Num::Unsigned(a), Num::Unsigned(b)) => return Some(a.cmp(&b)),
            (Num::Float(a), Num::Float(b)) => return a.partial_cmp(&b),
            _ => {}
        }
        match (self.integer(), other.integer()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            (None, None) => self.as_f64().partial_cmp(&other.as_f64()),
            (Some(a), None) => exact_against_float(a, other.as_f64()),
            (None, Some(b)) => exact_against_float(b, self.as_f64()).map(Ordering::reverse),
        }
    }
}

/// Integer `a` against float `b`, when `a` is an exact `f64`.
#[expect(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "exact below 2^53, which an i64 holds"
)]
fn exact_against_float(a: i128, b: f64) -> Option<Ordering> {
    if a.unsigned_abs() > EXACT as u128 {
        return None;
    }
    // Through an i64: one instruction, where an i128 takes a call.
    ((a as i64) as f64).partial_cmp(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_is_what_fract_says() {
        // Quarters around zero and around 2^53, where the round trip
        // through an integer stops being needed, and what isn't finite.
        let quarters = (-40..=40).map(|k| f64::from(k) / 4.0);
        let near_exact = (-8..=8).flat_map(|k| [EXACT + f64::from(k), -EXACT - f64::from(k)]);
        let special = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            1e300,
        ];
        for f in quarters.chain(near_exact).chain(special) {
            assert_eq!(Num::Float(f).is_integral(), f.fract() == 0.0, "{f}");
        }
    }

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
        assert_eq!(
            Num::Float(-2.5).compare(Num::Signed(-2)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Num::Signed(-9_007_199_254_740_992).compare(Num::Float(-9.007_199_254_740_992e15)),
            Some(Ordering::Equal)
        );
        // Beyond 2^53 an f64 comparison could round: not answered.
        assert_eq!(
            Num::Unsigned(9_007_199_254_740_993).compare(Num::Float(1.0)),
            None
        );
    }
}
