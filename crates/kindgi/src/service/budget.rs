//! The process-wide memory budget of request bodies being received and of
//! the documents parsed from them (`KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`).
//!
//! Bodies are read before a call slot is taken, so without it only the
//! connection cap bounds what they hold; and a JSON document takes many
//! times its size once parsed (`[0,0,…]`: 2 bytes of text, a 32-byte value
//! and its share of a list's spare capacity). A call reserves its body's
//! bytes as they arrive and, before parsing, an upper bound of what the
//! parsed document costs ([`parsed_cost`]); a call that would pass the
//! budget, or take more than [`MAX_CALL_BYTES`] alone, is refused 503
//! `overloaded` — it did not run — and its reservation is given back when
//! the call ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default budget, in MiB: with the rest of the service (its code, the
/// connections' buffers, pack code's own memory) it fits a 512 MiB
/// container.
pub(crate) const DEFAULT_BUDGET_MIB: usize = 256;

/// The most one call may reserve, body and parsed document: one 10 MiB
/// call of any framing or shape grows the process by at most ~160 MiB.
pub(crate) const MAX_CALL_BYTES: usize = 150 * 1024 * 1024;

/// The budget: a limit, and what calls have reserved of it.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// An empty reservation for one call.
    pub(crate) fn reservation(self: &Arc<Self>) -> Reservation {
        Reservation {
            budget: Arc::clone(self),
            bytes: 0,
        }
    }

    /// Bytes reserved now.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }
}

/// What one call has reserved; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: usize,
}

impl Reservation {
    /// Reserves `more` bytes; `false`, taking nothing, when that would pass
    /// the budget or [`MAX_CALL_BYTES`] for this call.
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        let Some(total) = self.bytes.checked_add(more) else {
            return false;
        };
        if total > MAX_CALL_BYTES.min(self.budget.limit) {
            return false;
        }
        let limit = self.budget.limit;
        let taken = self
            .budget
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(more).filter(|&after| after <= limit)
            });
        if taken.is_ok() {
            self.bytes = total;
        }
        taken.is_ok()
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// Bodies under this size are not counted: their document is reserved at
/// [`VALUE_COST`] times their size, an upper bound of any shape (2 bytes of
/// `[0,0,…]` a value, with room for a string's overhead).
const SMALL_BODY_BYTES: usize = 64 * 1024;
/// What one JSON value may cost parsed: a `serde_json::Value` (32 bytes),
/// and as much again for a list's spare capacity or a typed handler's own
/// copy of its input.
const VALUE_COST: usize = 64;
/// What an object's entry costs beyond its value and its key's bytes: the
/// key's `String` and its share of the map's node.
const ENTRY_COST: usize = 96;
/// What a string that isn't empty costs beyond its bytes: its allocation's
/// own overhead (an empty one allocates nothing).
const STRING_COST: usize = 32;

/// An upper bound of what `body`'s document takes once parsed and read
/// into a handler's input, counted in one pass over its text without
/// building anything: [`VALUE_COST`] a value (counted by the separators and
/// brackets that begin one), [`ENTRY_COST`] an object entry (its colon),
/// and each string's bytes plus, unless it is empty, [`STRING_COST`].
/// Text that isn't JSON is bounded the same way: parsing stops at its
/// first error, having built less.
pub(crate) fn parsed_cost(body: &[u8]) -> usize {
    if body.len() < SMALL_BODY_BYTES {
        return body.len().saturating_mul(VALUE_COST).max(VALUE_COST);
    }
    let (mut values, mut entries, mut strings, mut string_bytes) = (1usize, 0usize, 0usize, 0usize);
    let mut at = 0;
    while let Some(&byte) = body.get(at) {
        match byte {
            b'"' => {
                let end = string_end(body, at + 1);
                let length = end - (at + 1);
                if length > 0 {
                    strings += 1;
                    string_bytes += length;
                }
                at = end;
            }
            b',' | b'[' | b'{' => values += 1,
            b':' => entries += 1,
            _ => {}
        }
        at += 1;
    }
    values
        .saturating_mul(VALUE_COST)
        .saturating_add(entries.saturating_mul(ENTRY_COST))
        .saturating_add(strings.saturating_mul(STRING_COST))
        .saturating_add(string_bytes)
}

/// Where the string whose text begins at `start` ends: the index of its
/// closing quote, past every escaped byte; the text's length when it never
/// closes.
fn string_end(text: &[u8], start: usize) -> usize {
    let mut at = start;
    while let Some(found) = text
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        if text.get(at + found) == Some(&b'"') {
            return at + found;
        }
        // An escape: the byte after it is never the string's end.
        at += found + 2;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stay_within_the_budget_and_are_given_back() {
        let budget = MemoryBudget::new(100);
        let mut a = budget.reservation();
        assert!(a.grow(60));
        let mut b = budget.reservation();
        assert!(!b.grow(50), "past the budget");
        assert!(b.grow(40));
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        assert!(b.grow(60));
        drop(b);
        assert_eq!(budget.used(), 0);
        let mut huge = MemoryBudget::new(usize::MAX).reservation();
        assert!(!huge.grow(MAX_CALL_BYTES + 1), "past one call's share");
        assert!(!huge.grow(usize::MAX));
    }

    /// A body of at least [`SMALL_BODY_BYTES`], made of `item` repeated
    /// inside an array.
    fn array_of(item: &str) -> Vec<u8> {
        let count = SMALL_BODY_BYTES / item.len() + 1;
        format!("[{}]", vec![item; count].join(",")).into_bytes()
    }

    #[test]
    fn a_small_body_costs_a_value_a_byte() {
        assert_eq!(parsed_cost(b""), VALUE_COST);
        assert_eq!(parsed_cost(b"[0,0]"), 5 * VALUE_COST);
        let almost = vec![b' '; SMALL_BODY_BYTES - 1];
        assert_eq!(parsed_cost(&almost), (SMALL_BODY_BYTES - 1) * VALUE_COST);
    }

    #[test]
    fn a_large_body_costs_its_values_entries_and_strings() {
        let body = array_of("0");
        let count = SMALL_BODY_BYTES + 1;
        // The array, and a value after each of its opening and commas.
        assert_eq!(parsed_cost(&body), (1 + count) * VALUE_COST);
        let body = array_of(r#"{"ab":"c"}"#);
        let count = SMALL_BODY_BYTES / 10 + 1;
        let values = 1 + 1 + count + (count - 1);
        let strings = 2 * count;
        assert_eq!(
            parsed_cost(&body),
            values * VALUE_COST + count * ENTRY_COST + strings * STRING_COST + 3 * count
        );
    }

    #[test]
    fn what_a_string_holds_is_not_counted_as_structure() {
        // Brackets, commas and escaped quotes inside strings are bytes.
        let body = array_of(r#""a,[{:\"b""#);
        let count = SMALL_BODY_BYTES / 10 + 1;
        assert_eq!(
            parsed_cost(&body),
            (1 + count) * VALUE_COST + count * (STRING_COST + 8)
        );
        // A string that never closes counts its bytes to the end.
        let mut open = vec![b'"'];
        open.extend(vec![b'x'; SMALL_BODY_BYTES]);
        assert_eq!(
            parsed_cost(&open),
            VALUE_COST + STRING_COST + SMALL_BODY_BYTES
        );
        // An escape at the very end.
        let mut ending = open.clone();
        ending.push(b'\\');
        assert_eq!(
            parsed_cost(&ending),
            VALUE_COST + STRING_COST + SMALL_BODY_BYTES + 1
        );
    }
}
