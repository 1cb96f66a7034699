//! Cancellation of a call, with the reason it ended.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tokio::sync::Notify;

/// Why a call was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// The call passed its deadline (`kindgi-timeout-ms`).
    Deadline,
    /// The caller closed the connection before the answer.
    Disconnected,
    /// The service is stopping and its drain window ran out.
    Shutdown,
    /// A test harness cancelled the call.
    Requested,
}

impl CancelReason {
    /// A short name for logs: `deadline`, `disconnected`, `shutdown`, `requested`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deadline => "deadline",
            Self::Disconnected => "disconnected",
            Self::Shutdown => "shutdown",
            Self::Requested => "requested",
        }
    }
}

impl std::fmt::Display for CancelReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A call's cancellation: cheap to clone, fired once with its reason.
///
/// ```
/// use kindgi::{Cancellation, CancelReason};
/// let cancel = Cancellation::new();
/// assert!(!cancel.is_cancelled());
/// cancel.cancel(CancelReason::Deadline);
/// cancel.cancel(CancelReason::Disconnected); // the first reason stays
/// assert_eq!(cancel.reason(), Some(CancelReason::Deadline));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    shared: Arc<Shared>,
}

/// What the clones of one [`Cancellation`] share: one allocation a call.
#[derive(Debug, Default)]
struct Shared {
    /// Set once, when it fires: whether it has, and why.
    reason: OnceLock<CancelReason>,
    /// Wakes those waiting in [`Cancellation::cancelled`] when it fires.
    fired: Notify,
    /// When the service ended the call without its answer (see
    /// [`Cancellation::end`]).
    ended_at: OnceLock<Instant>,
}

impl Cancellation {
    /// A cancellation that hasn't fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the cancellation; the first reason given is kept.
    pub fn cancel(&self, reason: CancelReason) {
        if self.shared.reason.set(reason).is_ok() {
            self.shared.fired.notify_waiters();
        }
    }

    /// Whether it has fired.
    pub fn is_cancelled(&self) -> bool {
        self.shared.reason.get().is_some()
    }

    /// Why it fired, once it has.
    pub fn reason(&self) -> Option<CancelReason> {
        self.shared.reason.get().copied()
    }

    /// Waits until it fires, and says why.
    pub async fn cancelled(&self) -> CancelReason {
        loop {
            // Listening before looking: a `cancel` between the two still
            // wakes this waiter.
            let fired = self.shared.fired.notified();
            let mut fired = std::pin::pin!(fired);
            fired.as_mut().enable();
            if let Some(reason) = self.reason() {
                return reason;
            }
            fired.await;
        }
    }

    /// The service ended the call without its answer, for `reason`: notes
    /// when (the first time only), then fires the cancellation.
    pub(crate) fn end(&self, reason: CancelReason) {
        let _ = self.shared.ended_at.set(Instant::now());
        self.cancel(reason);
    }

    /// When the service ended the call without its answer, if it did.
    pub(crate) fn ended_at(&self) -> Option<Instant> {
        self.shared.ended_at.get().copied()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn every_waiter_wakes_with_the_first_reason() {
        let cancel = Cancellation::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let cancel = cancel.clone();
                tokio::spawn(async move { cancel.cancelled().await })
            })
            .collect();
        // The waiters are listening before it fires.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!cancel.is_cancelled());
        cancel.cancel(CancelReason::Shutdown);
        cancel.cancel(CancelReason::Deadline);
        for waiter in waiters {
            let woke = tokio::time::timeout(Duration::from_secs(5), waiter).await;
            assert_eq!(woke.ok().and_then(Result::ok), Some(CancelReason::Shutdown));
        }
        // Once fired, a new waiter returns at once.
        assert_eq!(cancel.cancelled().await, CancelReason::Shutdown);
        assert!(cancel.is_cancelled());
    }

    #[tokio::test]
    async fn a_waiter_not_yet_fired_keeps_waiting() {
        let cancel = Cancellation::new();
        let waited = tokio::time::timeout(Duration::from_millis(30), cancel.cancelled()).await;
        assert!(waited.is_err());
        assert_eq!(cancel.reason(), None);
    }

    #[test]
    fn the_end_is_noted_by_the_service_only() {
        let cancel = Cancellation::new();
        cancel.cancel(CancelReason::Requested);
        assert_eq!(cancel.ended_at(), None);
        let before = Instant::now();
        cancel.end(CancelReason::Deadline);
        assert!(cancel.ended_at().is_some_and(|at| at >= before));
        // The first reason stays; the end is noted all the same.
        assert_eq!(cancel.reason(), Some(CancelReason::Requested));
    }
}
