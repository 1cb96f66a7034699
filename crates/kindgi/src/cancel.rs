//! Cancellation of a call, with the reason it ended.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

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
    token: CancellationToken,
    reason: Arc<OnceLock<CancelReason>>,
}

impl Cancellation {
    /// A cancellation that hasn't fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the cancellation; the first reason given is kept.
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }

    /// Whether it has fired.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Why it fired, once it has.
    pub fn reason(&self) -> Option<CancelReason> {
        self.reason.get().copied()
    }

    /// Waits until it fires, and says why.
    pub async fn cancelled(&self) -> CancelReason {
        self.token.cancelled().await;
        self.reason().unwrap_or(CancelReason::Requested)
    }
}
