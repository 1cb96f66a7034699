//! The page's calls in flight, each under a ticket the page chose, so that
//! the page can cancel one while it runs. Cancelling drops the call's
//! request to the pack service, which closes its connection: the service
//! then ends the call `cancelled` and logs it so, as it does when a
//! runtime's connection closes.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// The longest ticket the page may choose.
const MAX_TICKET_LEN: usize = 100;

/// Whether `ticket` is one the page may choose: 1–100 ASCII letters,
/// digits, `-` or `_` (a UUID is).
pub(super) fn is_ticket(ticket: &str) -> bool {
    (1..=MAX_TICKET_LEN).contains(&ticket.len())
        && ticket
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The calls in flight, by ticket: each one's way to be cancelled.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    calls: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

/// A call counted in flight until this drops.
#[derive(Debug)]
pub(super) struct Entered<'a> {
    in_flight: &'a InFlight,
    ticket: String,
    /// Resolves when the page cancels the call.
    pub(super) cancelled: oneshot::Receiver<()>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.in_flight.calls().remove(&self.ticket);
    }
}

impl InFlight {
    /// Counts a call under `ticket` in; `None` when a call with that
    /// ticket is in flight already.
    pub(super) fn enter(&self, ticket: &str) -> Option<Entered<'_>> {
        let mut calls = self.calls();
        if calls.contains_key(ticket) {
            return None;
        }
        let (cancel, cancelled) = oneshot::channel();
        calls.insert(ticket.to_owned(), cancel);
        Some(Entered {
            in_flight: self,
            ticket: ticket.to_owned(),
            cancelled,
        })
    }

    /// Cancels the call in flight under `ticket`; whether there was one.
    pub(super) fn cancel(&self, ticket: &str) -> bool {
        match self.calls().remove(ticket) {
            Some(cancel) => cancel.send(()).is_ok(),
            None => false,
        }
    }

    /// The map, even if a thread panicked holding it (every change is one
    /// map operation, so it stays whole).
    fn calls(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_short_plain_words() {
        assert!(is_ticket("0b6f3c2e-6d1a-4f7e-9c1e-2a7b5d9e4f10"));
        assert!(is_ticket("a_b-C9"));
        for bad in ["", "a b", "a/b", "é", &"a".repeat(101)] {
            assert!(!is_ticket(bad), "{bad:?}");
        }
        assert!(is_ticket(&"a".repeat(100)));
    }

    #[tokio::test]
    async fn a_call_is_cancelled_by_its_ticket_once() {
        let in_flight = InFlight::default();
        let mut entered = in_flight.enter("t1").expect("entered");
        assert!(in_flight.enter("t1").is_none(), "one call a ticket");
        assert!(!in_flight.cancel("t2"));
        assert!(in_flight.cancel("t1"));
        assert!(!in_flight.cancel("t1"), "cancelled already");
        assert_eq!((&mut entered.cancelled).await, Ok(()));
    }

    #[test]
    fn a_finished_call_leaves_and_its_ticket_is_free_again() {
        let in_flight = InFlight::default();
        drop(in_flight.enter("t1"));
        assert!(!in_flight.cancel("t1"));
        assert!(in_flight.enter("t1").is_some());
    }
}
