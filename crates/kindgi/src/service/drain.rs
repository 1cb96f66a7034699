//! The drain: how the service stops without dropping a call.
//!
//! On shutdown (SIGTERM for `<pack> serve`) the service
//!
//! 1. sets the draining flag: `/readyz` and new invokes answer 503
//!    `draining`, and every answer closes its connection, so that no client
//!    sends a next request on a connection about to close;
//! 2. keeps accepting, and waits up to [`DRAIN_WINDOW`] for the calls in
//!    flight — counted by an [`InFlightGuard`] each, the drain waiting for
//!    the last one to drop, as in mini-redis;
//! 3. if the window closes first, fires the window-closed token: calls
//!    still running are answered `cancelled` (reason `shutdown`) within
//!    [`CANCEL_WINDOW`], bodies still arriving 503 `draining`;
//! 4. serves what waits in the listen backlog (503 `draining`) and stops
//!    listening, so that a later connection is refused — which a client
//!    knows never ran — rather than reset after it sent its request;
//! 5. gives the connections taken while draining [`SETTLE_WINDOW`] to read
//!    and answer their request, then closes the silent ones and lets the
//!    others write their last answer within [`CLOSE_WINDOW`].
//!
//! Every step after the first fits in what is left of [`STOPPED_BY`], when
//! the `stopped` record is written at the latest.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::log::{Level, Logger, Record};

/// How long the drain waits for the calls in flight.
const DRAIN_WINDOW: Duration = Duration::from_secs(8);
/// When, after shutdown began, the `stopped` record is written at the
/// latest: the drain window, then the answers of the calls it cut short,
/// the backlog, the settle and close windows, all within this. The process
/// exits a moment later (the runtime's shutdown, the log's flush): within
/// 8.5 s.
const STOPPED_BY: Duration = Duration::from_millis(8_300);
/// How long, once the drain window closed, the calls it cut short get to
/// be answered `cancelled`.
const CANCEL_WINDOW: Duration = Duration::from_millis(150);
/// How long, after the drain, connections taken while draining get to read
/// their request and answer it before idle ones are closed. It ends as soon
/// as every connection has closed; a client that connected just before the
/// listener closed may be slow to send on a busy machine (250 ms, as it
/// was, left one such caller in a few thousand drains with its request
/// unread and its connection reset).
pub(super) const SETTLE_WINDOW: Duration = Duration::from_secs(1);
/// How long, after the drain, connections get to write their last answers.
pub(super) const CLOSE_WINDOW: Duration = Duration::from_secs(1);

/// What the calls and the drain share: the draining flag, the count of
/// calls in flight, and the token fired when the drain window closes.
#[derive(Debug, Default)]
pub(crate) struct Drain {
    draining: AtomicBool,
    in_flight: Arc<InFlight>,
    /// Fired when the drain window closes: the calls still running are
    /// answered `cancelled` (reason `shutdown`), bodies still arriving 503
    /// `draining`. Running calls hold a clone (see
    /// [`super::invoker::Invoker`]).
    window_closed: CancellationToken,
}

impl Drain {
    /// A service not draining, with no call in flight.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The token running calls watch: fired when the drain window closes.
    pub(crate) fn window_closed(&self) -> CancellationToken {
        self.window_closed.clone()
    }

    /// Resolves when the drain window closes.
    pub(crate) fn until_window_closed(&self) -> WaitForCancellationFuture<'_> {
        self.window_closed.cancelled()
    }

    /// Whether the service is stopping.
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Counts a call in flight until the guard drops. Enter first, then
    /// check [`Drain::is_draining`] again: a drain that began after the
    /// first check either sees the call in flight or the call sees the
    /// drain, so the drain never ends with a call running.
    pub(crate) fn enter(&self) -> InFlightGuard {
        self.in_flight.enter()
    }

    /// How many calls have entered since the service started, and how many
    /// are in flight now.
    pub(crate) fn calls(&self) -> (u64, usize) {
        (
            self.in_flight.entered.load(Ordering::Relaxed),
            self.in_flight.count.load(Ordering::SeqCst),
        )
    }
}

/// The drain's clock, from the moment shutdown began.
#[derive(Debug)]
pub(super) struct Stopping {
    window_closes: Instant,
    stopped_by: Instant,
}

impl Stopping {
    /// Begins the drain: sets the flag and logs `draining`.
    pub(super) fn begin(drain: &Drain, logger: &Logger) -> Self {
        drain.draining.store(true, Ordering::SeqCst);
        logger.log(Record::lifecycle(
            Level::Info,
            "draining",
            "Draining: finishing the calls in flight",
        ));
        let now = Instant::now();
        Self {
            window_closes: now + DRAIN_WINDOW,
            stopped_by: now + STOPPED_BY,
        }
    }

    /// `most`, or less: what is left before `stopped` is due.
    pub(super) fn left(&self, most: Duration) -> Duration {
        most.min(self.stopped_by.saturating_duration_since(Instant::now()))
    }
}

/// How the drain window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WindowEnd {
    /// Every call in flight was answered.
    Idle,
    /// The window closed with calls still running.
    Closed,
}

/// Resolves when the drain window is over: no call in flight, or the
/// window closed.
pub(super) async fn window(drain: &Drain, stopping: &Stopping) -> WindowEnd {
    tokio::select! {
        () = drain.in_flight.wait_idle() => WindowEnd::Idle,
        () = tokio::time::sleep_until(stopping.window_closes) => WindowEnd::Closed,
    }
}

/// The window closed with calls still running: they are answered
/// `cancelled` (reason `shutdown`) before their connections close.
pub(super) async fn cut_short(drain: &Drain) {
    drain.window_closed.cancel();
    let answered = drain.in_flight.wait_idle();
    let _ = tokio::time::timeout(CANCEL_WINDOW, answered).await;
}

/// Counts the calls in flight; the drain waits for zero.
#[derive(Debug, Default)]
struct InFlight {
    count: AtomicUsize,
    /// Every call that ever entered.
    entered: AtomicU64,
    idle: Notify,
}

impl InFlight {
    /// Counts a call until the guard drops.
    fn enter(self: &Arc<Self>) -> InFlightGuard {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.entered.fetch_add(1, Ordering::Relaxed);
        InFlightGuard(Arc::clone(self))
    }

    /// Waits until no call is in flight.
    async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One call in flight: the last one dropped wakes the drain.
#[derive(Debug)]
pub(crate) struct InFlightGuard(Arc<InFlight>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}
