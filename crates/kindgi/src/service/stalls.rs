//! Async handlers that block their thread: a watch that notices one and
//! says so.
//!
//! An async handler runs on one of the runtime's few worker threads; one
//! that blocks in a poll (`std::thread::sleep`, blocking I/O, long CPU
//! work) holds that thread, and every other call waiting on it waits too —
//! unseen, as each call's own record only counts its own time. So each
//! async handler's polls are watched: [`Stalls::watch`] notes when a poll
//! begins, and a thread of its own ([`Watchdog`]) looks every
//! [`LOOK_EVERY`]; a poll still running after [`STALLED`] is logged once
//! per call, a `handler-blocked-thread` warning naming the tool and what to
//! use instead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use slab::Slab;

use crate::ToolContext;
use crate::log::{Level, Logger, Record};

/// How long one poll of an async handler may hold its thread before it is
/// logged.
const STALLED: Duration = Duration::from_millis(250);
/// How often the watchdog looks.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// The async handlers running, and when each one's current poll began.
#[derive(Debug)]
pub(crate) struct Stalls {
    /// Each running handler under the key its call was given.
    running: Mutex<Slab<Arc<Watch>>>,
    /// The clock's zero: a poll's start is stored as microseconds since
    /// it, plus one (0: not polling).
    epoch: Instant,
}

/// One running handler.
#[derive(Debug)]
struct Watch {
    call: ToolContext,
    polling_since: AtomicU64,
    logged: AtomicBool,
}

impl Stalls {
    /// No handler running.
    pub(crate) fn new() -> Self {
        Self {
            running: Mutex::new(Slab::new()),
            epoch: Instant::now(),
        }
    }

    /// `future` (the handler of `call`), its polls watched until it is
    /// dropped.
    pub(crate) async fn watch<F: Future>(&self, call: ToolContext, future: F) -> F::Output {
        let watch = Arc::new(Watch {
            call,
            polling_since: AtomicU64::new(0),
            logged: AtomicBool::new(false),
        });
        let key = self.running().insert(Arc::clone(&watch));
        let _running = Running { stalls: self, key };
        let mut future = std::pin::pin!(future);
        std::future::poll_fn(|cx| {
            let since = self.epoch.elapsed().as_micros() as u64 + 1;
            watch.polling_since.store(since, Ordering::Relaxed);
            let polled = future.as_mut().poll(cx);
            watch.polling_since.store(0, Ordering::Relaxed);
            polled
        })
        .await
    }

    /// The handlers whose current poll has run past [`STALLED`], each
    /// once: its call, and how long so far.
    fn newly_stalled(&self) -> Vec<(ToolContext, Duration)> {
        let now = self.epoch.elapsed().as_micros() as u64 + 1;
        let stalled = STALLED.as_micros() as u64;
        self.running()
            .iter()
            .filter_map(|(_, watch)| {
                let since = watch.polling_since.load(Ordering::Relaxed);
                let held = now.saturating_sub(since);
                (since != 0 && held >= stalled && !watch.logged.swap(true, Ordering::Relaxed))
                    .then(|| (watch.call.clone(), Duration::from_micros(held)))
            })
            .collect()
    }

    /// The map, even after a panic elsewhere (each change is one
    /// operation on it).
    fn running(&self) -> std::sync::MutexGuard<'_, Slab<Arc<Watch>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A watched handler, counted out as it is dropped (done, or its call
/// ended).
struct Running<'a> {
    stalls: &'a Stalls,
    key: usize,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.stalls.running().try_remove(self.key);
    }
}

/// The thread that looks for stalled handlers while the service serves;
/// it stops when this is dropped.
#[derive(Debug)]
pub(crate) struct Watchdog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Starts looking at `stalls`, logging to `logger`. `None` if no
    /// thread could be started (the service serves on, unwatched).
    pub(crate) fn start(stalls: Arc<Stalls>, logger: Arc<Logger>) -> Option<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("kindgi-stalls".to_owned())
            .stack_size(64 * 1024)
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::park_timeout(LOOK_EVERY);
                    for (call, held) in stalls.newly_stalled() {
                        logger.log(blocked_record(&call, held));
                    }
                }
            })
            .ok()?;
        Some(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// The `handler-blocked-thread` warning for `call`, whose poll has held
/// its thread for `held`.
fn blocked_record(call: &ToolContext, held: Duration) -> Record {
    let tool = call.tool_id();
    let ms = held.as_millis() as u64;
    Record::lifecycle(
        Level::Warn,
        "handler-blocked-thread",
        format!(
            "The async handler of tool {tool} has held its worker thread for {ms} ms in one poll: other calls wait for that thread. Blocking work (std::thread::sleep, blocking I/O, long CPU work) belongs in a blocking handler (#[tool(blocking)], Tool::blocking_handler) or tokio::task::spawn_blocking"
        ),
    )
    .ids(call.log_ids().owned())
    .field("blockedMs", ms)
}
