//! Where records go: stderr, directly until [`Logger::start_writer`], then
//! through a writer thread with a bounded queue, so that no async worker
//! waits on a terminal or a pipe and a stalled stderr costs dropped records
//! rather than memory or blocked calls.

use std::io::{IsTerminal, StderrLock, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::format::{with_now, with_time_of};
use super::record::{CallFacts, Level, PACK, PACK_TOOL, Record};
use super::settings::LogSettings;

/// The capacity the writer keeps between writes: a burst's larger buffer
/// is given back once written.
const BATCH_BYTES: usize = 64 * 1024;
/// The writer's pause after each write: how long a record may wait for
/// the next batch.
const WRITE_PACE: Duration = Duration::from_millis(1);
/// The most bytes of records waiting for the writer or being written by
/// it. While stderr takes nothing (a log collector that stalled, a pipe
/// nobody reads), records past it are dropped and counted rather than
/// kept: the queue costs at most this much memory (and the one record
/// that passed it), and logging never blocks a call.
const MAX_QUEUED_BYTES: usize = 4 * 1024 * 1024;
/// How long [`Logger::flush`] waits for the writer at exit: a stderr that
/// takes nothing must not keep the process from exiting.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

/// What the log calls and the writer thread share: the lines waiting, in
/// one buffer each record is written straight into (no allocation a
/// record), and how the writer is woken.
#[derive(Debug, Default)]
struct Queue {
    pending: Mutex<Pending>,
    /// Signalled when a line comes while the writer waits for one.
    wake: Condvar,
}

/// The queue's state.
#[derive(Debug, Default)]
struct Pending {
    /// Lines waiting for the writer, one after another.
    lines: Vec<u8>,
    /// Bytes the writer took and has not finished writing.
    writing: usize,
    /// Records dropped since the last `log-dropped` record.
    dropped: u64,
    /// The writer waits on [`Queue::wake`].
    idle: bool,
    /// [`Logger::flush`] asked the writer to write what there is and stop.
    stopping: bool,
    /// The writer took its last lines: records go to stderr directly.
    stopped: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends the line `write` writes, unless that passes
    /// [`MAX_QUEUED_BYTES`] (a record alone in the queue always fits):
    /// then it counts a dropped record. `false` when the writer has
    /// stopped, and nothing was appended.
    fn push(&self, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let mut pending = self.lock();
        if pending.stopped {
            return false;
        }
        let start = pending.lines.len();
        write(&mut pending.lines);
        let before = start + pending.writing;
        if before > 0 && before + (pending.lines.len() - start) > MAX_QUEUED_BYTES {
            pending.lines.truncate(start);
            pending.dropped += 1;
        } else if pending.idle {
            pending.idle = false;
            self.wake.notify_one();
        }
        true
    }

    /// Waits for lines (or a count of dropped ones, or the stop), and
    /// swaps them into `batch`: how many were dropped, and for the last
    /// batch, stderr locked before any record can go to it directly, so
    /// that those come after the batch.
    fn take(&self, batch: &mut Vec<u8>) -> (u64, Option<StderrLock<'static>>) {
        let mut pending = self.lock();
        while pending.lines.is_empty() && pending.dropped == 0 && !pending.stopping {
            pending.idle = true;
            pending = self
                .wake
                .wait(pending)
                .unwrap_or_else(PoisonError::into_inner);
        }
        pending.idle = false;
        std::mem::swap(batch, &mut pending.lines);
        pending.writing = batch.len();
        pending.stopped = pending.stopping;
        let last = pending.stopped.then(|| std::io::stderr().lock());
        (std::mem::take(&mut pending.dropped), last)
    }

    /// The writer wrote what it took.
    fn written(&self) {
        self.lock().writing = 0;
    }

    /// Asks the writer to write what there is and stop.
    fn stop(&self) {
        let mut pending = self.lock();
        pending.stopping = true;
        self.wake.notify_one();
    }
}

/// The `log-dropped` record: how many records were dropped while stderr
/// took nothing, written once the writer has caught up.
fn dropped_record(dropped: u64) -> Record {
    Record::lifecycle(
        Level::Warn,
        "log-dropped",
        format!("Dropped {dropped} log records: stderr was not taking them"),
    )
    .field("dropped", dropped)
}

/// Where records go: stderr, directly until [`Logger::start_writer`], then
/// through a writer thread so that no async worker waits on the terminal
/// or a pipe.
#[derive(Debug)]
pub(crate) struct Logger {
    json: bool,
    settings: LogSettings,
    /// The service's own subsystem's level ([`PACK`]), every call's.
    level: Level,
    /// The level of what handlers log during their calls ([`PACK_TOOL`]).
    tool_level: Level,
    /// Set once the writer thread runs: records go through the queue.
    queued: AtomicBool,
    /// What is queued for the writer, and what was dropped.
    queue: Arc<Queue>,
    /// The writer thread, and the channel on which it says it is done,
    /// waited for by [`Logger::flush`].
    writer: Mutex<Option<(JoinHandle<()>, Receiver<()>)>>,
    /// Set by [`Logger::close`]: no record is written after.
    closed: AtomicBool,
}

impl Logger {
    /// Reads `KINDGI_LOG_FORMAT`, `KINDGI_LOG_LEVEL` and
    /// `KINDGI_LOG_LEVELS` ([`LogSettings`]): the message naming a value
    /// that can't be honoured, with the logger of the defaults to say it.
    pub(crate) fn from_env() -> Result<Self, (String, Self)> {
        let on_terminal = std::io::stderr().is_terminal();
        match LogSettings::from_vars(|name| std::env::var(name).ok(), on_terminal) {
            Ok(settings) => Ok(Self::new(settings)),
            Err(problem) => Err((
                problem,
                Self::new(LogSettings::new(!on_terminal, Level::Info)),
            )),
        }
    }

    /// A logger that writes only errors, as JSON: for in-process tests.
    pub(crate) fn quiet() -> Self {
        Self::new(LogSettings::new(true, Level::Error))
    }

    pub(crate) fn new(settings: LogSettings) -> Self {
        Self {
            json: settings.json,
            level: settings.level_for(PACK),
            tool_level: settings.level_for(PACK_TOOL),
            settings,
            queued: AtomicBool::new(false),
            queue: Arc::default(),
            writer: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// Starts the writer thread. Call it once the process may have threads.
    pub(crate) fn start_writer(&self) {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer.is_some() || self.queued.load(Ordering::SeqCst) {
            return;
        }
        let (done, finished) = channel::<()>();
        let queue = Arc::clone(&self.queue);
        let (json, dropped_enabled) = (self.json, self.enabled(Level::Warn));
        let spawned = std::thread::Builder::new()
            .name("kindgi-log".to_owned())
            .spawn(move || {
                // Under load many records queue up between two writes:
                // each write takes every line waiting, so the writer makes
                // one system call per batch rather than per record.
                let mut batch = Vec::new();
                loop {
                    let (dropped, last_lock) = queue.take(&mut batch);
                    let last = last_lock.is_some();
                    // Caught up: say what was dropped meanwhile, once.
                    if dropped > 0 && dropped_enabled {
                        let record = dropped_record(dropped);
                        with_now(|time| {
                            if json {
                                record.write_json_line(&mut batch, time);
                            } else {
                                batch.extend_from_slice(record.pretty_line(time).as_bytes());
                            }
                        });
                    }
                    let mut stderr = last_lock.unwrap_or_else(|| std::io::stderr().lock());
                    let _ = stderr.write_all(&batch);
                    let _ = stderr.flush();
                    drop(stderr);
                    batch.clear();
                    batch.shrink_to(BATCH_BYTES);
                    queue.written();
                    if last {
                        break;
                    }
                    // Let the next records gather: while this thread sleeps
                    // rather than waits, a record wakes nobody, so under
                    // load a call costs no wake-up of this thread.
                    std::thread::sleep(WRITE_PACE);
                }
                let _ = done.send(());
            });
        if let Ok(handle) = spawned {
            *writer = Some((handle, finished));
            self.queued.store(true, Ordering::SeqCst);
        }
    }

    /// Writes every record queued so far, and waits (up to [`FLUSH_WAIT`],
    /// as stderr may take nothing) for the writer thread to have written
    /// them. Records logged afterwards are written directly.
    pub(crate) fn flush(&self) {
        let taken = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((handle, finished)) = taken {
            self.queue.stop();
            if finished.recv_timeout(FLUSH_WAIT).is_ok() {
                let _ = handle.join();
            }
        }
    }

    /// Writes no record from now on: the one before was the last (the
    /// service's `stopped`).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// Whether a record of the service's own ([`PACK`]) at `level` is
    /// written.
    pub(crate) fn enabled(&self, level: Level) -> bool {
        level <= self.level
    }

    /// Whether a record of `subsystem` at `level` is written.
    pub(crate) fn enabled_in(&self, subsystem: &str, level: Level) -> bool {
        let threshold = match subsystem {
            PACK => self.level,
            PACK_TOOL => self.tool_level,
            other => self.settings.level_for(other),
        };
        level <= threshold
    }

    /// Whether a record at `level` of the service or of a handler may be
    /// written (the one, the other, or both).
    pub(crate) fn enabled_in_any(&self, level: Level) -> bool {
        level <= self.level.max(self.tool_level)
    }

    /// Writes `record` if its subsystem's level lets it (a supervised
    /// lifecycle event always), with what no record may carry taken out.
    pub(crate) fn log(&self, record: Record) {
        if !record.always && !self.enabled_in(record.subsystem, record.level) {
            return;
        }
        let record = record.redacted();
        if self.json {
            self.write(|out| with_now(|time| record.write_json_line(out, time)));
        } else {
            let line = with_now(|time| record.pretty_line(time));
            self.write(|out| out.extend_from_slice(line.as_bytes()));
        }
    }

    /// Logs a call's `call` record: as JSON, written straight into the
    /// queue.
    pub(crate) fn log_call(&self, call: CallFacts<'_>) {
        if !self.enabled(call.level()) {
            return;
        }
        // What a caller sent (its ids, a tool id the pack lacks) may hold a
        // secret shape: such a record is built whole, to be redacted.
        if call.ids.may_hold_a_secret() || super::redact::may_hold_a_secret(call.id) {
            self.log(call.into_record());
            return;
        }
        if self.json {
            self.write(|out| with_time_of(call.ended, |time| call.write_json_line(out, time)));
        } else {
            let line = with_time_of(call.ended, |time| call.into_record().pretty_line(time));
            self.write(|out| out.extend_from_slice(line.as_bytes()));
        }
    }

    /// Writes the line `line` writes: into the queue while the writer
    /// runs, else to stderr.
    fn write(&self, line: impl Fn(&mut Vec<u8>)) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        if self.queued.load(Ordering::Acquire) && self.queue.push(&line) {
            return;
        }
        let mut bytes = Vec::new();
        line(&mut bytes);
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(&bytes);
        let _ = stderr.flush();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_queue_is_bounded_and_counts_what_it_drops() {
        let queue = Queue::default();
        let line = |len: usize| move |out: &mut Vec<u8>| out.resize(out.len() + len, b'x');
        // One record alone always fits, whatever its size.
        assert!(queue.push(line(MAX_QUEUED_BYTES * 2)));
        assert!(queue.push(line(1)));
        assert_eq!(queue.lock().lines.len(), MAX_QUEUED_BYTES * 2);
        assert_eq!(queue.lock().dropped, 1);
        // Taken by the writer, its bytes still count until written.
        let mut batch = Vec::new();
        assert!(matches!(queue.take(&mut batch), (1, None)));
        assert_eq!(batch.len(), MAX_QUEUED_BYTES * 2);
        batch.clear();
        assert!(queue.push(line(1)));
        assert_eq!(queue.lock().dropped, 1);
        queue.written();
        let len = 1000;
        let fit = (0..10_000)
            .take_while(|_| {
                queue.push(line(len));
                queue.lock().dropped == 1
            })
            .count();
        assert_eq!(fit, MAX_QUEUED_BYTES / len);
        assert_eq!(queue.lock().lines.len(), MAX_QUEUED_BYTES / len * len);
        // Once the writer took its last batch, nothing more is queued.
        queue.stop();
        batch.clear();
        let (dropped, last) = queue.take(&mut batch);
        assert_eq!(dropped, 2);
        assert!(last.is_some());
        drop(last);
        assert!(!queue.push(line(1)));
        assert!(queue.lock().lines.is_empty());
        let record = dropped_record(7);
        let json: Value =
            serde_json::from_slice(&record.json_line("2026-01-01T00:00:00.000Z")).expect("JSON");
        assert_eq!(json["kind"], "log-dropped");
        assert_eq!(json["event"], "log-dropped");
        assert_eq!(json["level"], "warn");
        assert_eq!(json["dropped"], 7);
        assert_eq!(
            json["message"],
            "Dropped 7 log records: stderr was not taking them"
        );
    }
}
