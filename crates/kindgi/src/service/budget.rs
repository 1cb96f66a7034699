//! The process-wide memory budget of request bodies being received and of
//! the documents parsed from them (`KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`).
//!
//! Bodies are read before a call slot is taken, so without it only the
//! connection cap bounds what they hold; and a JSON document takes many
//! times its size once parsed (`[0,0,…]`: 2 bytes of text, a 32-byte value
//! and its share of a list's spare capacity). A call reserves its body's
//! bytes as they arrive and, before parsing, an upper bound of what the
//! parsed document costs ([`parsed_cost`]); a call that would pass the
//! budget now is refused 503 `overloaded` — it did not run, and may later —
//! and one that would take more than [`MAX_CALL_BYTES`] alone never can
//! run: admission answers it 413 (or, when it isn't a JSON object at all,
//! the contract's `malformed-message`). A reservation is given back when
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
    /// Whether `more` bytes could ever be reserved for this call: within
    /// [`MAX_CALL_BYTES`] and the whole budget, whatever the other calls
    /// hold.
    pub(crate) fn could_fit(&self, more: usize) -> bool {
        self.bytes
            .checked_add(more)
            .is_some_and(|total| total <= self.call_limit())
    }

    /// The most one call may reserve.
    pub(crate) fn call_limit(&self) -> usize {
        MAX_CALL_BYTES.min(self.budget.limit)
    }

    /// Reserves `more` bytes; `false`, taking nothing, when that would pass
    /// the budget or [`MAX_CALL_BYTES`] for this call.
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        let Some(total) = self.bytes.checked_add(more) else {
            return false;
        };
        if total > self.call_limit() {
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
/// [`SMALL_BODY_BYTE_COST`] a byte, an upper bound of any shape.
const SMALL_BODY_BYTES: usize = 4 * 1024;
/// What a byte of a small body may cost parsed, at most: the dearest shape
/// is nested objects with empty keys, `{"":` (4 bytes) an object node
/// ([`OBJECT_COST`]), a value and an entry — 804 bytes with its own, 201 a
/// byte; counted 256.
const SMALL_BODY_BYTE_COST: usize = 256;
/// What one JSON value may cost parsed: a `serde_json::Value` (32 bytes),
/// and as much again for a list's spare capacity or a typed handler's own
/// copy of its input.
const VALUE_COST: usize = 64;
/// What an object costs beyond its value once it has an entry: its map's
/// first node (`BTreeMap<String, Value>`: room for 11 keys of 24 bytes and
/// 11 values of 32, 628 bytes, a 640-byte block of malloc). A one-key
/// object measured ~700 bytes in the real process, value and entry and
/// list slot included; counted so, it is bounded by ~900.
const OBJECT_COST: usize = 640;
/// What an object's entry costs beyond its value and its key's bytes: the
/// key's `String` and its share of the map's nodes past the first.
const ENTRY_COST: usize = 96;
/// What a string that isn't empty costs beyond its bytes: its allocation's
/// own overhead (an empty one allocates nothing).
const STRING_COST: usize = 32;

/// An upper bound of what `body`'s document takes once parsed and read
/// into a handler's input, counted in passes over its bytes that build
/// nothing: [`VALUE_COST`] for every `,`, `[` and `{` (each begins a value
/// at most), [`OBJECT_COST`] more for every `{`, [`ENTRY_COST`] for every
/// `:` (an object entry),
/// [`STRING_COST`] for every pair of quotes but an empty string's (which
/// allocates nothing), and the body's bytes (what strings hold, at most).
/// The bytes are counted wherever they stand, inside strings too: that
/// only raises the bound, and lets the count go through the body without
/// following its strings. Text that isn't JSON is bounded the same way:
/// parsing stops at its first error, having built less.
pub(crate) fn parsed_cost(body: &[u8]) -> usize {
    if body.len() < SMALL_BODY_BYTES {
        return body
            .len()
            .saturating_mul(SMALL_BODY_BYTE_COST)
            .max(VALUE_COST);
    }
    let (mut values, mut objects, mut entries, mut quotes) = (1usize, 0usize, 0usize, 0usize);
    // Counted in lanes of a byte, which the compiler turns into vector
    // compares: a chunk of 255 bytes can't overflow one.
    for chunk in body.chunks(255) {
        let (mut chunk_values, mut chunk_objects, mut chunk_entries, mut chunk_quotes) =
            (0u8, 0u8, 0u8, 0u8);
        for &byte in chunk {
            chunk_values += u8::from(byte == b',') + u8::from(byte == b'[');
            chunk_objects += u8::from(byte == b'{');
            chunk_entries += u8::from(byte == b':');
            chunk_quotes += u8::from(byte == b'"');
        }
        values += usize::from(chunk_values);
        objects += usize::from(chunk_objects);
        entries += usize::from(chunk_entries);
        quotes += usize::from(chunk_quotes);
    }
    let strings = quotes.div_ceil(2).saturating_sub(empty_strings(body));
    values
        .saturating_mul(VALUE_COST)
        .saturating_add(objects.saturating_mul(VALUE_COST + OBJECT_COST))
        .saturating_add(entries.saturating_mul(ENTRY_COST))
        .saturating_add(strings.saturating_mul(STRING_COST))
        .saturating_add(body.len())
}

/// How many empty strings `text` holds, at most: its two quotes in a row
/// not after a backslash (in JSON, only an empty string is written so;
/// `\""` is a string's escaped quote and its end).
fn empty_strings(text: &[u8]) -> usize {
    let [_, _, ..] = text else {
        return 0;
    };
    let (before, first, second) = (text, &text[1..], &text[2..]);
    let mut empty = 0;
    for ((before, first), second) in before
        .chunks(255)
        .zip(first.chunks(255))
        .zip(second.chunks(255))
    {
        let mut chunk_empty = 0u8;
        for ((&before, &first), &second) in before.iter().zip(first).zip(second) {
            chunk_empty += u8::from((first == b'"') & (second == b'"') & (before != b'\\'));
        }
        empty += usize::from(chunk_empty);
    }
    empty
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
    fn a_small_body_costs_its_dearest_shape_a_byte() {
        assert_eq!(parsed_cost(b""), VALUE_COST);
        assert_eq!(parsed_cost(b"[0,0]"), 5 * SMALL_BODY_BYTE_COST);
        let almost = vec![b' '; SMALL_BODY_BYTES - 1];
        assert_eq!(
            parsed_cost(&almost),
            (SMALL_BODY_BYTES - 1) * SMALL_BODY_BYTE_COST
        );
        // The dearest shape, counted as a large body would be, is within.
        let nested = r#"{"":"#.repeat(SMALL_BODY_BYTES / 4 + 1);
        assert!(
            parsed_cost(nested.as_bytes()) <= nested.len() * SMALL_BODY_BYTE_COST,
            "{}",
            parsed_cost(nested.as_bytes())
        );
    }

    #[test]
    fn a_large_body_costs_its_values_entries_strings_and_bytes() {
        let body = array_of("0");
        let count = SMALL_BODY_BYTES + 1;
        // The array, and a value after each of its opening and commas.
        assert_eq!(parsed_cost(&body), (1 + count) * VALUE_COST + body.len());
        let body = array_of(r#"{"ab":"c"}"#);
        let count = SMALL_BODY_BYTES / 10 + 1;
        // The list, a value after its opening and each comma; an object
        // each.
        let values = 1 + 1 + (count - 1);
        let strings = 2 * count;
        assert_eq!(
            parsed_cost(&body),
            values * VALUE_COST
                + count * (VALUE_COST + OBJECT_COST)
                + count * ENTRY_COST
                + strings * STRING_COST
                + body.len()
        );
    }

    #[test]
    fn what_a_string_holds_only_raises_the_bound() {
        // Brackets, commas and colons inside strings count as structure.
        let body = array_of(r#""a,[{:\"b""#);
        let count = SMALL_BODY_BYTES / 10 + 1;
        let exact = (1 + count) * VALUE_COST + count * (STRING_COST + 8);
        let bound = parsed_cost(&body);
        assert!(bound >= exact, "{bound} < {exact}");
        assert_eq!(
            bound,
            (1 + count + 3 * count) * VALUE_COST
                + count * OBJECT_COST
                + count * ENTRY_COST
                + (3 * count).div_ceil(2) * STRING_COST
                + body.len()
        );
        // A string that never closes.
        let mut open = vec![b'"'];
        open.extend(vec![b'x'; SMALL_BODY_BYTES]);
        assert_eq!(parsed_cost(&open), VALUE_COST + STRING_COST + open.len());
    }

    #[test]
    fn an_empty_string_costs_no_string() {
        let body = array_of(r#""""#);
        let count = SMALL_BODY_BYTES / 2 + 1;
        assert_eq!(parsed_cost(&body), (1 + count) * VALUE_COST + body.len());
        // An escaped quote at a string's end is no empty string.
        let body = array_of(r#""a\"""#);
        let count = SMALL_BODY_BYTES / 5 + 1;
        assert_eq!(
            parsed_cost(&body),
            (1 + count) * VALUE_COST + (3 * count).div_ceil(2) * STRING_COST + body.len()
        );
    }
}
