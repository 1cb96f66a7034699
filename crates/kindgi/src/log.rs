//! The pack service's log records (CONTRACT §2): one JSON object a line on
//! stderr, or a readable line on a terminal. This is the one place that
//! formats them.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use serde_json::Value;
use time::OffsetDateTime;
use time::macros::format_description;

/// A record's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }

    fn severity(self) -> &'static str {
        match self {
            Self::Error => "ERROR",
            Self::Warn => "WARNING",
            Self::Info => "INFO",
            Self::Debug | Self::Trace => "DEBUG",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "error" => Self::Error,
            "warn" => Self::Warn,
            "info" => Self::Info,
            "debug" => Self::Debug,
            "trace" => Self::Trace,
            _ => return None,
        })
    }
}

/// The correlation ids a record may carry, in the order they are written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ids {
    pub(crate) trace_id: Option<String>,
    pub(crate) span_id: Option<String>,
    pub(crate) request_id: Option<String>,
    pub(crate) tenant_id: Option<String>,
    pub(crate) project_id: Option<String>,
    pub(crate) org_id: Option<String>,
    pub(crate) run_id: Option<String>,
    pub(crate) tool_id: Option<String>,
}

impl Ids {
    fn pairs(&self) -> [(&'static str, &Option<String>); 8] {
        [
            ("traceId", &self.trace_id),
            ("spanId", &self.span_id),
            ("requestId", &self.request_id),
            ("tenantId", &self.tenant_id),
            ("projectId", &self.project_id),
            ("orgId", &self.org_id),
            ("runId", &self.run_id),
            ("toolId", &self.tool_id),
        ]
    }
}

/// One log record: level, message, ids, then its own fields in order.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    level: Level,
    message: String,
    ids: Option<Ids>,
    fields: Vec<(&'static str, Value)>,
}

impl Record {
    pub(crate) fn new(level: Level, message: impl Into<String>) -> Self {
        Self {
            level,
            message: message.into(),
            ids: None,
            fields: Vec::new(),
        }
    }

    /// A lifecycle record: `event` and `kind` both set to its name.
    pub(crate) fn lifecycle(level: Level, kind: &'static str, message: impl Into<String>) -> Self {
        Self::new(level, message)
            .field("event", kind)
            .field("kind", kind)
    }

    pub(crate) fn ids(mut self, ids: Ids) -> Self {
        self.ids = Some(ids);
        self
    }

    pub(crate) fn field(mut self, key: &'static str, value: impl Into<Value>) -> Self {
        self.fields.push((key, value.into()));
        self
    }

    fn json_line(&self, time: &str) -> String {
        // Written straight into one buffer: no `Value` or `String` per
        // key and value (this runs once per call).
        let mut out = Vec::with_capacity(320);
        out.push(b'{');
        let mut first = true;
        let mut key = |out: &mut Vec<u8>, key: &str| {
            if !first {
                out.push(b',');
            }
            first = false;
            let _ = serde_json::to_writer(&mut *out, key);
            out.push(b':');
        };
        let text = |out: &mut Vec<u8>, value: &str| {
            let _ = serde_json::to_writer(&mut *out, value);
        };
        key(&mut out, "time");
        text(&mut out, time);
        key(&mut out, "level");
        text(&mut out, self.level.name());
        key(&mut out, "severity");
        text(&mut out, self.level.severity());
        key(&mut out, "subsystem");
        text(&mut out, "pack");
        key(&mut out, "message");
        text(&mut out, &self.message);
        if let Some(ids) = &self.ids {
            for (name, value) in ids.pairs() {
                if let Some(value) = value {
                    key(&mut out, name);
                    text(&mut out, value);
                }
            }
        }
        for (name, value) in &self.fields {
            key(&mut out, name);
            let _ = serde_json::to_writer(&mut out, value);
        }
        out.extend_from_slice(b"}\n");
        // serde_json writes UTF-8 only.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    fn pretty_line(&self, time: &str) -> String {
        let mut out = format!(
            "{time} {:<5} {}",
            self.level.name().to_uppercase(),
            self.message
        );
        if let Some(ids) = &self.ids {
            for (key, value) in ids.pairs() {
                if let Some(value) = value {
                    out.push_str(&format!(" {key}={value}"));
                }
            }
        }
        for (key, value) in &self.fields {
            if *key != "event" && *key != "kind" {
                out.push_str(&format!(" {key}={value}"));
            }
        }
        out.push('\n');
        out
    }
}

fn now() -> String {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// The most bytes the writer gathers before it writes.
const BATCH_BYTES: usize = 64 * 1024;
/// The writer's pause after each write: how long a record may wait for
/// the next batch.
const WRITE_PACE: std::time::Duration = std::time::Duration::from_millis(1);

/// Where records go: stderr, directly until [`Logger::start_writer`], then
/// through a writer thread so that no async worker waits on the terminal
/// or a pipe.
#[derive(Debug)]
pub(crate) struct Logger {
    json: bool,
    level: Level,
    /// Where lines go once the writer thread runs: a send never blocks.
    sender: OnceLock<Sender<String>>,
    /// The writer thread, joined by [`Logger::flush`].
    writer: Mutex<Option<JoinHandle<()>>>,
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
            writer: Mutex::new(None),
        }
    }

    /// A logger that writes only errors, as JSON: for in-process tests.
    pub(crate) fn quiet() -> Self {
        Self {
            json: true,
            level: Level::Error,
            sender: OnceLock::new(),
            writer: Mutex::new(None),
        }
    }

    /// Starts the writer thread. Call it once the process may have threads.
    pub(crate) fn start_writer(&self) {
        let (sender, receiver) = channel::<String>();
        let spawned = std::thread::Builder::new()
            .name("kindgi-log".to_owned())
            .spawn(move || {
                let stderr = std::io::stderr();
                let write = |batch: &str| {
                    let mut lock = stderr.lock();
                    let _ = lock.write_all(batch.as_bytes());
                    let _ = lock.flush();
                };
                // Under load many records queue up between two writes:
                // each write takes every line waiting, so the writer makes
                // one system call per batch rather than per record.
                let mut batch = String::new();
                let mut stopping = false;
                while !stopping {
                    let Ok(first) = receiver.recv() else { break };
                    for line in std::iter::once(first).chain(receiver.try_iter()) {
                        if line.is_empty() {
                            stopping = true;
                            continue;
                        }
                        batch.push_str(&line);
                        if batch.len() >= BATCH_BYTES {
                            write(&batch);
                            batch.clear();
                        }
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
            });
        if let (Ok(handle), Ok(mut writer)) = (spawned, self.writer.lock())
            && self.sender.set(sender).is_ok()
        {
            *writer = Some(handle);
        }
    }

    /// Writes every record queued so far, and waits for the writer thread
    /// to have written them. Records logged afterwards are written directly.
    pub(crate) fn flush(&self) {
        // The sender can't be taken out of the OnceLock; a marker line tells
        // the writer to stop once everything before it is written.
        if let Some(sender) = self.sender.get() {
            let _ = sender.send(String::new());
        }
        let taken = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(handle) = taken {
            let _ = handle.join();
        }
    }

    pub(crate) fn enabled(&self, level: Level) -> bool {
        level <= self.level
    }

    pub(crate) fn log(&self, record: Record) {
        if !self.enabled(record.level) {
            return;
        }
        let time = now();
        let line = if self.json {
            record.json_line(&time)
        } else {
            record.pretty_line(&time)
        };
        let line = match self.sender.get() {
            // A line the stopped writer never takes comes back as the error.
            Some(sender) => match sender.send(line) {
                Ok(()) => return,
                Err(unsent) => unsent.0,
            },
            None => line,
        };
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(line.as_bytes());
        let _ = stderr.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_field_order() {
        let record = Record::lifecycle(Level::Info, "listening", "Listening on port 1")
            .field("port", 1)
            .ids(Ids {
                run_id: Some("r".into()),
                trace_id: Some("t".into()),
                ..Ids::default()
            });
        assert_eq!(
            record.json_line("2026-01-01T00:00:00.000Z"),
            "{\"time\":\"2026-01-01T00:00:00.000Z\",\"level\":\"info\",\"severity\":\"INFO\",\"subsystem\":\"pack\",\"message\":\"Listening on port 1\",\"traceId\":\"t\",\"runId\":\"r\",\"event\":\"listening\",\"kind\":\"listening\",\"port\":1}\n"
        );
    }

    #[test]
    fn severities() {
        assert_eq!(Level::Warn.severity(), "WARNING");
        assert_eq!(Level::Trace.severity(), "DEBUG");
    }
}
