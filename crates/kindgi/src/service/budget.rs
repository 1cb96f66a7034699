//! The process-wide memory budget of request bodies being received and of
//! the documents parsed from them (`KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`).
//!
//! Bodies are read before a call slot is taken, so without it only the
//! connection cap bounds what they hold; and a JSON document takes many
//! times its size once parsed (`[0,0,…]`: 2 bytes of text, a 32-byte value
//! and its share of a list's spare capacity). A call reserves its body's
//! bytes as they arrive and, before parsing, an upper bound of what the
//! parsed document costs; a call that would pass the budget, or take more
//! than [`MAX_CALL_BYTES`] alone, is refused 503 `overloaded` — it did not
//! run — and its reservation is given back when the call ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default budget, in MiB: with the rest of the service (its code, the
/// connections' buffers, pack code's own memory) it fits a 512 MiB
/// container.
pub(crate) const DEFAULT_BUDGET_MIB: usize = 256;

/// The most one call may reserve, body and parsed document: one 10 MiB
/// call of any framing or shape grows the process by at most ~160 MiB.
pub(crate) const MAX_CALL_BYTES: usize = 150 * 1024 * 1024;

/// Bodies under this size are not scanned: their document is reserved at
/// [`SMALL_BODY_FACTOR`] times their size, an upper bound of any shape.
const SMALL_BODY_BYTES: usize = 64 * 1024;
/// See [`SMALL_BODY_BYTES`]: 2 bytes of `[0,0,…]` at [`VALUE_COST`] each,
/// with room for a string's overhead.
const SMALL_BODY_FACTOR: usize = VALUE_COST;

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

/// Makes glibc's malloc give large blocks back to the system when they are
/// freed: its threshold for serving a block from `mmap` (which `free`
/// unmaps) is otherwise raised to the size of every large block freed, up
/// to 32 MiB, after which 10 MiB bodies come from its per-thread arenas and
/// stay there — about twice the bodies' bytes resident under load, which no
/// budget of reservations sees. From 1 MiB on, a block is `mmap`ed. No
/// effect with another allocator (a pack's `#[global_allocator]`,
/// mimalloc), or off glibc.
#[allow(unsafe_code)]
pub(crate) fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes two integers and changes only malloc's own
    // parameters; it is thread-safe, and `serve` calls it at boot anyway.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

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

/// An upper bound of the memory the JSON document `body` takes once parsed
/// and read into a handler's input, from one pass over its bytes that
/// allocates nothing: [`VALUE_COST`] a value (counted by its separators and
/// brackets), [`ENTRY_COST`] an object entry, and each string's bytes plus,
/// unless it is empty, [`STRING_COST`]. Text that isn't JSON is bounded
/// the same way (parsing stops at its first error, having built less).
pub(crate) fn document_cost(body: &[u8]) -> usize {
    if body.len() < SMALL_BODY_BYTES {
        return body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
    }
    let mut count = Count {
        values: 1,
        ..Count::default()
    };
    let mut rest = body;
    // Outside a string, then inside one, until the body ends; the scans
    // jump from quote to quote (and backslash) with `memchr`.
    while let Some(quote) = memchr::memchr(b'"', rest) {
        count.structure(&rest[..quote]);
        rest = &rest[quote + 1..];
        let mut length = 0usize;
        loop {
            match memchr::memchr2(b'"', b'\\', rest) {
                Some(end) if rest[end] == b'"' => {
                    length += end;
                    count.strings += usize::from(length > 0);
                    count.string_bytes += length;
                    rest = &rest[end + 1..];
                    break;
                }
                // A backslash and the byte it escapes.
                Some(backslash) => {
                    let skipped = (backslash + 2).min(rest.len());
                    length += skipped;
                    rest = &rest[skipped..];
                }
                // An unterminated string counts nothing more.
                None => return count.cost(),
            }
        }
    }
    count.structure(rest);
    count.cost()
}

/// What [`document_cost`] counts.
#[derive(Default)]
struct Count {
    values: usize,
    entries: usize,
    strings: usize,
    string_bytes: usize,
}

impl Count {
    /// Counts the separators and brackets of text outside strings.
    fn structure(&mut self, text: &[u8]) {
        for &byte in text {
            self.values += usize::from(matches!(byte, b',' | b'[' | b'{'));
            self.entries += usize::from(byte == b':');
        }
    }

    fn cost(&self) -> usize {
        self.values
            .saturating_mul(VALUE_COST)
            .saturating_add(self.entries.saturating_mul(ENTRY_COST))
            .saturating_add(self.strings.saturating_mul(STRING_COST))
            .saturating_add(self.string_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time count [`document_cost`] must agree with.
    fn document_cost_byte_by_byte(body: &[u8]) -> usize {
        if body.len() < SMALL_BODY_BYTES {
            return body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
        }
        let mut count = Count {
            values: 1,
            ..Count::default()
        };
        let (mut in_string, mut escaped, mut length) = (false, false, 0usize);
        for &byte in body {
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                    count.strings += usize::from(length > 0);
                    count.string_bytes += length;
                    continue;
                }
                length += 1;
                continue;
            }
            match byte {
                b'"' => {
                    in_string = true;
                    length = 0;
                }
                b',' | b'[' | b'{' => count.values += 1,
                b':' => count.entries += 1,
                _ => {}
            }
        }
        count.cost()
    }

    #[test]
    fn the_jumping_count_is_the_byte_by_byte_count() {
        let pad = " ".repeat(SMALL_BODY_BYTES);
        let bodies = [
            format!(r#"{{"a": [1, "x", {{"b": "\"q\\"}}], "": "", "c": "\u00e9"}}{pad}"#),
            format!(r#"{pad}["unterminated, {{"#),
            format!(r#"{pad}["ends in a backslash\"#),
            format!(r#"{pad}"\"#),
            format!("{pad}[1,2,{{\"k\":3}}]"),
        ];
        for body in &bodies {
            assert_eq!(
                document_cost(body.as_bytes()),
                document_cost_byte_by_byte(body.as_bytes()),
                "{body}"
            );
        }
        // Quotes, backslashes and brackets in every order.
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..200 {
            let mut body = pad.clone().into_bytes();
            for _ in 0..300 {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                body.push(b"\"\\,[{:a }"[state as usize % 9]);
            }
            assert_eq!(document_cost(&body), document_cost_byte_by_byte(&body));
        }
    }

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

    #[test]
    fn documents_that_expand_cost_more_than_their_size() {
        let zeros = format!("[{}0]", "0,".repeat(1 << 20));
        assert!(document_cost(zeros.as_bytes()) >= (1 << 20) * 64);
        // 10 MiB of them pass one call's share.
        let ten = format!("[{}0]", "0,".repeat(5 << 20));
        assert!(document_cost(ten.as_bytes()) > MAX_CALL_BYTES);
        let strings = format!("[{}\"a\"]", "\"a\",".repeat(1 << 18));
        assert!(document_cost(strings.as_bytes()) >= (1 << 18) * (VALUE_COST + STRING_COST));
        let one_string = format!("{{\"s\":\"{}\"}}", "x".repeat(4 << 20));
        let cost = document_cost(one_string.as_bytes());
        assert!((4 << 20..5 << 20).contains(&cost), "{cost}");
        // Escapes and brackets inside strings are string bytes.
        let quoted = format!("[\"{}\"]", "\\\"[,{:".repeat(1 << 16));
        assert!(document_cost(quoted.as_bytes()) < 6 << 17);
        assert_eq!(document_cost(b"{}"), VALUE_COST * 2);
        // Empty strings allocate nothing.
        let empty = format!("[{}\"\"]", "\"\",".repeat(1 << 18));
        assert_eq!(
            document_cost(empty.as_bytes()),
            ((1 << 18) + 2) * VALUE_COST
        );
    }
}
