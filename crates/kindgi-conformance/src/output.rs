//! What a started service writes: stdout lines and stderr lines (JSON
//! records when they parse), collected as they arrive, with waits for the
//! first line that matches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::Notify;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// One line of stderr, with its JSON when it is JSON.
#[derive(Debug, Clone)]
pub struct Line {
    /// The line, without its newline.
    pub raw: String,
    /// The line parsed, when it is a JSON object.
    pub record: Option<Value>,
}

/// Everything a service wrote, collected as it arrives.
#[derive(Debug, Default)]
pub struct Output {
    stdout: Mutex<Vec<String>>,
    stderr: Mutex<Vec<Line>>,
    closed: AtomicUsize,
    changed: Notify,
}

pub(crate) async fn collect(stream: impl AsyncRead + Unpin, output: Arc<Output>, which: Stream) {
    let mut reader = BufReader::new(stream);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let raw = String::from_utf8_lossy(&buffer)
                    .trim_end_matches(['\n', '\r'])
                    .to_owned();
                match which {
                    Stream::Stdout => lock(&output.stdout).push(raw),
                    Stream::Stderr => {
                        let record = serde_json::from_str::<Value>(&raw)
                            .ok()
                            .filter(Value::is_object);
                        lock(&output.stderr).push(Line { raw, record });
                    }
                }
                output.changed.notify_waiters();
            }
        }
    }
    output.closed.fetch_add(1, Ordering::SeqCst);
    output.changed.notify_waiters();
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Output {
    /// Every stdout line so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        lock(&self.stdout).clone()
    }

    /// Every stderr line so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        lock(&self.stderr).iter().map(|l| l.raw.clone()).collect()
    }

    /// Every stderr line so far, with its JSON.
    pub fn stderr(&self) -> Vec<Line> {
        lock(&self.stderr).clone()
    }

    /// Every JSON record on stderr so far.
    pub fn records(&self) -> Vec<Value> {
        lock(&self.stderr)
            .iter()
            .filter_map(|l| l.record.clone())
            .collect()
    }

    /// Whether both streams have ended.
    pub fn ended(&self) -> bool {
        self.closed.load(Ordering::SeqCst) >= 2
    }

    /// Whether `needle` appears in anything written so far.
    pub fn contains(&self, needle: &str) -> bool {
        lock(&self.stdout).iter().any(|l| l.contains(needle))
            || lock(&self.stderr).iter().any(|l| l.raw.contains(needle))
    }

    /// Waits up to `timeout` for the first thing `find` finds; `None` when
    /// the time passes or the service's output ends first.
    async fn wait_for<T>(&self, timeout: Duration, find: impl Fn(&Self) -> Option<T>) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if let Some(found) = find(self) {
                return Some(found);
            }
            if self.ended() {
                return None;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return find(self);
            }
        }
    }

    /// Waits for a stderr record that `matches`.
    pub async fn wait_for_record(
        &self,
        matches: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<Value> {
        self.wait_for(timeout, |o| {
            lock(&o.stderr)
                .iter()
                .filter_map(|l| l.record.as_ref())
                .find(|r| matches(r))
                .cloned()
        })
        .await
    }

    /// Waits for a stdout line that `matches`.
    pub async fn wait_for_stdout(
        &self,
        matches: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Option<String> {
        self.wait_for(timeout, |o| {
            lock(&o.stdout).iter().find(|l| matches(l)).cloned()
        })
        .await
    }

    /// Waits for a stderr line that `matches`.
    pub async fn wait_for_stderr(
        &self,
        matches: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Option<String> {
        self.wait_for(timeout, |o| {
            lock(&o.stderr)
                .iter()
                .find(|l| matches(&l.raw))
                .map(|l| l.raw.clone())
        })
        .await
    }
}
