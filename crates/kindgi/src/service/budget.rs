//! The process-wide memory budget of request bodies being received and of
//! the documents parsed from them (`KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`).
//!
//! Bodies are read before a call slot is taken, so without it only the
//! connection cap bounds what they hold; and a JSON document takes many
//! times its size once parsed (`[0,0,…]`: 2 bytes of text, a 32-byte value
//! and its share of a list's spare capacity). A call reserves its body's
//! bytes as they arrive and, before parsing, an upper bound of what the
//! parsed document costs ([`super::scan`]); a call that would pass the
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
}
