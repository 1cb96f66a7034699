//! Where records go: stderr, directly until [`Logger::start_writer`], then
//! through a writer thread with a bounded queue, so that no async worker
//! waits on a terminal or a pipe and a stalled stderr costs dropped records
//! rather than memory or blocked calls.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use super::format::with_now;
use super::record::{CallFacts, Level, Record};

/// The most bytes the writer gathers before it writes.
const BATCH_BYTES: usize = 64 * 1024;
/// The writer's pause after each write: how long a record may wait for
/// the next batch.
const WRITE_PACE: Duration = Duration::from_millis(1);
/// The most bytes of records waiting for the writer. While stderr takes
/// nothing (a log collector that stalled, a pipe nobody reads), records past
/// it are dropped and counted rather than kept: the queue costs at most
/// this much memory, and logging never blocks a call.
const MAX_QUEUED_BYTES: usize = 4 * 1024 * 1024;
/// How long [`Logger::flush`] waits for the writer at exit: a stderr that
/// takes nothing must not keep the process from exiting.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

/// What the log calls and the writer thread share about the queue.
#[derive(Debug, Default)]
struct Queue {
    /// Bytes of records sent to the writer and not yet taken by it.
    bytes: AtomicUsize,
    /// Records dropped since the last `log-dropped` record.
    dropped: AtomicU64,
}

impl Queue {
    /// Counts `len` bytes in, unless that passes [`MAX_QUEUED_BYTES`] (a
    /// record alone in the queue always fits): then counts a dropped record.
    fn admit(&self, len: usize) -> bool {
        let before = self.bytes.fetch_add(len, Ordering::SeqCst);
        if before > 0 && before + len > MAX_QUEUED_BYTES {
            self.bytes.fetch_sub(len, Ordering::SeqCst);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Counts `len` bytes out: taken by the writer, or never sent.
    fn release(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::SeqCst);
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
    level: Level,
    /// Where lines go once the writer thread runs: a send never blocks.
    sender: OnceLock<Sender<Vec<u8>>>,
    /// What is queued for the writer, and what was dropped.
    queue: Arc<Queue>,
    /// The writer thread, and the channel on which it says it is done,
    /// waited for by [`Logger::flush`].
    writer: Mutex<Option<(JoinHandle<()>, Receiver<()>)>>,
    /// Set by [`Logger::close`]: no record is written after.
    closed: AtomicBool,
}

impl Logger {
    /// Reads `KINDGI_LOG_FORMAT` and `KINDGI_LOG_LEVEL`.
    pub(crate) fn from_env() -> Self {
        let format = std::env::var("KINDGI_LOG_FORMAT").unwrap_or_default();
        let json = match format.as_str() {
            "json" => true,
            "pretty" => false,
            _ => !std::io::stderr().is_terminal(),
        };
        let level = std::env::var("KINDGI_LOG_LEVEL")
            .ok()
            .and_then(|l| Level::parse(&l))
            .unwrap_or(Level::Info);
        Self {
            json,
            level,
            sender: OnceLock::new(),
            queue: Arc::default(),
            writer: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// A logger that writes only errors, as JSON: for in-process tests.
    pub(crate) fn quiet() -> Self {
        Self {
            json: true,
            level: Level::Error,
            sender: OnceLock::new(),
            queue: Arc::default(),
            writer: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// Starts the writer thread. Call it once the process may have threads.
    pub(crate) fn start_writer(&self) {
        let (sender, receiver) = channel::<Vec<u8>>();
        let (done, finished) = channel::<()>();
        let queue = Arc::clone(&self.queue);
        let (json, dropped_enabled) = (self.json, self.enabled(Level::Warn));
        let spawned = std::thread::Builder::new()
            .name("kindgi-log".to_owned())
            .spawn(move || {
                let stderr = std::io::stderr();
                let write = |batch: &[u8]| {
                    let mut lock = stderr.lock();
                    let _ = lock.write_all(batch);
                    let _ = lock.flush();
                };
                // Under load many records queue up between two writes:
                // each write takes every line waiting, so the writer makes
                // one system call per batch rather than per record.
                let mut batch = Vec::new();
                let mut stopping = false;
                while !stopping {
                    let Ok(first) = receiver.recv() else { break };
                    for line in std::iter::once(first).chain(receiver.try_iter()) {
                        if line.is_empty() {
                            stopping = true;
                            continue;
                        }
                        queue.release(line.len());
                        batch.extend_from_slice(&line);
                        if batch.len() >= BATCH_BYTES {
                            write(&batch);
                            batch.clear();
                        }
                    }
                    // Caught up: say what was dropped meanwhile, once.
                    let dropped = queue.dropped.swap(0, Ordering::Relaxed);
                    if dropped > 0 && dropped_enabled {
                        let record = dropped_record(dropped);
                        batch.extend(with_now(|time| {
                            if json {
                                record.json_line(time)
                            } else {
                                record.pretty_line(time).into_bytes()
                            }
                        }));
                    }
                    write(&batch);
                    batch.clear();
                    // Let the next records gather: while this thread sleeps
                    // rather than waits in `recv`, a `send` wakes nobody, so
                    // under load a call costs no wake-up of this thread.
                    if !stopping {
                        std::thread::sleep(WRITE_PACE);
                    }
                }
                let _ = done.send(());
            });
        if let (Ok(handle), Ok(mut writer)) = (spawned, self.writer.lock())
            && self.sender.set(sender).is_ok()
        {
            *writer = Some((handle, finished));
        }
    }

    /// Writes every record queued so far, and waits (up to [`FLUSH_WAIT`],
    /// as stderr may take nothing) for the writer thread to have written
    /// them. Records logged afterwards are written directly.
    pub(crate) fn flush(&self) {
        // The sender can't be taken out of the OnceLock; a marker line tells
        // the writer to stop once everything before it is written.
        if let Some(sender) = self.sender.get() {
            let _ = sender.send(Vec::new());
        }
        let taken = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some((handle, finished)) = taken
            && finished.recv_timeout(FLUSH_WAIT).is_ok()
        {
            let _ = handle.join();
        }
    }

    /// Writes no record from now on: the one before was the last (the
    /// service's `stopped`).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn enabled(&self, level: Level) -> bool {
        level <= self.level
    }

    pub(crate) fn log(&self, record: Record) {
        if !self.enabled(record.level) {
            return;
        }
        let line = with_now(|time| {
            if self.json {
                record.json_line(time)
            } else {
                record.pretty_line(time).into_bytes()
            }
        });
        self.write(line);
    }

    /// Logs a call's `call` record.
    pub(crate) fn log_call(&self, call: CallFacts<'_>) {
        if !self.enabled(call.level()) {
            return;
        }
        let line = with_now(|time| {
            if self.json {
                call.json_line(time)
            } else {
                call.into_record().pretty_line(time).into_bytes()
            }
        });
        self.write(line);
    }

    fn write(&self, line: Vec<u8>) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        let line = match self.sender.get() {
            Some(sender) => {
                let len = line.len();
                if !self.queue.admit(len) {
                    return;
                }
                // A line the stopped writer never takes comes back as the
                // error.
                match sender.send(line) {
                    Ok(()) => return,
                    Err(unsent) => {
                        self.queue.release(len);
                        unsent.0
                    }
                }
            }
            None => line,
        };
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(&line);
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
        // One record alone always fits, whatever its size.
        assert!(queue.admit(MAX_QUEUED_BYTES * 2));
        assert!(!queue.admit(1));
        queue.release(MAX_QUEUED_BYTES * 2);
        let line = 1000;
        let fit = (0..10_000).take_while(|_| queue.admit(line)).count();
        assert_eq!(fit, MAX_QUEUED_BYTES / line);
        assert_eq!(queue.dropped.load(Ordering::Relaxed), 2);
        queue.release(line);
        assert!(queue.admit(line));
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
