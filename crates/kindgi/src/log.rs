//! The pack service's log records (CONTRACT §2): one JSON object a line on
//! stderr, or a readable line on a terminal. This is the one place that
//! formats them.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

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

/// The keys of a record's head, before its ids.
const HEAD_KEYS: [&str; 5] = ["time", "level", "severity", "subsystem", "message"];

/// Whether `name` is a key of a record's head or one of its ids.
pub(crate) fn is_head_or_id_key(name: &str) -> bool {
    HEAD_KEYS.contains(&name) || Ids::default().pairs().iter().any(|(key, _)| *key == name)
}

/// One log record: level, message, ids, then its own fields in order.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    level: Level,
    message: String,
    ids: Option<Ids>,
    fields: Vec<(Cow<'static, str>, Value)>,
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
        self.fields.push((Cow::Borrowed(key), value.into()));
        self
    }

    /// A field whose name is made at run time (a `tracing` event's).
    pub(crate) fn field_owned(mut self, key: String, value: Value) -> Self {
        self.fields.push((Cow::Owned(key), value));
        self
    }

    fn json_line(&self, time: &str) -> Vec<u8> {
        // Written straight into one buffer: no `Value` or `String` per
        // key and value.
        let mut out = Vec::with_capacity(320);
        line_head(&mut out, time, self.level);
        key(&mut out, "message");
        json_str(&mut out, &self.message);
        if let Some(ids) = &self.ids {
            ids_fields(&mut out, ids);
        }
        for (name, value) in &self.fields {
            out.push(b',');
            json_str(&mut out, name);
            out.push(b':');
            json_value(&mut out, value);
        }
        line_end(out)
    }

    /// The readable line: every control character of the message, the ids
    /// and the fields escaped, so that what a caller sent (a tool id, a run
    /// id) can neither end the line nor reach the terminal as a command.
    fn pretty_line(&self, time: &str) -> String {
        let mut out = format!("{time} {:<5} ", self.level.name().to_uppercase());
        pretty_text(&mut out, &self.message);
        if let Some(ids) = &self.ids {
            for (key, value) in ids.pairs() {
                if let Some(value) = value {
                    out.push(' ');
                    out.push_str(key);
                    out.push('=');
                    pretty_text(&mut out, value);
                }
            }
        }
        for (key, value) in &self.fields {
            if key != "event" && key != "kind" {
                out.push(' ');
                pretty_text(&mut out, key);
                out.push('=');
                // JSON text, with the escapes of the JSON format: ASCII
                // wherever a character is escaped.
                let mut json = Vec::new();
                json_value(&mut json, value);
                out.push_str(&String::from_utf8_lossy(&json));
            }
        }
        out.push('\n');
        out
    }
}

/// Whether `c` is written as an escape in every format: a control
/// character (C0, DEL, C1), or a line or paragraph separator, which log
/// viewers may take for the end of a line.
fn is_escaped(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// Writes `text` for the readable format: `\n`, `\r`, `\t`, and every other
/// escaped character as `\u{…}`.
fn pretty_text(out: &mut String, text: &str) {
    use std::fmt::Write as _;
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_escaped(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// serde_json's compact output, but with the characters JSON allows raw
/// that [`is_escaped`] names (DEL, C1, U+2028, U+2029) written as `\u`
/// escapes too: serde_json already escapes `"`, `\\` and C0.
struct Escaping;

impl serde_json::ser::Formatter for Escaping {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if is_escaped(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Writes `value` as JSON, every character of [`is_escaped`] escaped.
fn json_value(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    let mut serializer = serde_json::Serializer::with_formatter(out, Escaping);
    let _ = value.serialize(&mut serializer);
}

/// Calls `write` with the current time as the records write it, e.g.
/// `2026-01-01T00:00:00.000Z`.
///
/// Formatted once a millisecond per thread: under load many records share
/// a millisecond.
fn with_now<R>(write: impl FnOnce(&str) -> R) -> R {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<(i128, String)> = const { RefCell::new((i128::MIN, String::new())) };
    }
    let at = OffsetDateTime::now_utc();
    let millis = at.unix_timestamp_nanos() / 1_000_000;
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != millis {
            let format = format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            );
            let text = at
                .format(&format)
                .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned());
            *last = (millis, text);
        }
        write(&last.1)
    })
}

/// Writes `value` as a JSON string, escaped exactly as serde_json escapes.
fn json_str(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    json_str_contents(out, value);
    out.push(b'"');
}

/// Writes `value` escaped as inside a JSON string (`"`, `\\` and every
/// character of [`is_escaped`]), without the quotes; without serde_json when
/// nothing needs escaping — the common case for ids and messages.
fn json_str_contents(out: &mut Vec<u8>, value: &str) {
    // A fold rather than `all`: no early exit, so the compiler checks many
    // bytes at once. 0xC2 starts the C1 controls (and other characters),
    // 0xE2 the separators (and others): those go the slow way to be sure.
    let needs_escape = value.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\') | (b == 0x7f) | (b == 0xc2) | (b == 0xe2)
    });
    if !needs_escape {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    let mut quoted = Vec::with_capacity(value.len() + 8);
    json_value(&mut quoted, value);
    let contents = quoted.get(1..quoted.len().saturating_sub(1));
    out.extend_from_slice(contents.unwrap_or_default());
}

/// Writes `,"name":`: every key comes after the line's head. Names are
/// this crate's own field names, which need no escaping.
fn key(out: &mut Vec<u8>, name: &'static str) {
    debug_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric()));
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Opens a line: `{"time":…,"level":…,"severity":…,"subsystem":"pack"`.
fn line_head(out: &mut Vec<u8>, time: &str, level: Level) {
    out.extend_from_slice(br#"{"time":"#);
    json_str(out, time);
    out.extend_from_slice(br#","level":""#);
    out.extend_from_slice(level.name().as_bytes());
    out.extend_from_slice(br#"","severity":""#);
    out.extend_from_slice(level.severity().as_bytes());
    out.extend_from_slice(br#"","subsystem":"pack""#);
}

/// Writes the ids that are set, in their order.
fn ids_fields(out: &mut Vec<u8>, ids: &Ids) {
    for (name, value) in ids.pairs() {
        if let Some(value) = value {
            key(out, name);
            json_str(out, value);
        }
    }
}

/// Closes a line. (Everything in it is UTF-8: `&str`s and serde_json's
/// output.)
fn line_end(mut out: Vec<u8>) -> Vec<u8> {
    out.extend_from_slice(b"}\n");
    out
}

/// The facts of one `call` record (CONTRACT §2), the record every call
/// logs: [`Logger::log_call`] writes it without building a [`Record`].
#[derive(Debug)]
pub(crate) struct CallFacts<'a> {
    pub(crate) target: &'a str,
    pub(crate) id: &'a str,
    pub(crate) outcome: &'a str,
    pub(crate) duration_ms: u64,
    pub(crate) ids: Ids,
    pub(crate) pack_id: &'a str,
    pub(crate) artifact_version: &'a str,
}

impl CallFacts<'_> {
    fn level(&self) -> Level {
        if self.outcome == "ok" {
            Level::Info
        } else {
            Level::Warn
        }
    }

    /// The same record as a [`Record`], for the readable format.
    fn into_record(self) -> Record {
        Record::lifecycle(
            self.level(),
            "call",
            format!(
                "{} {} {} {}ms",
                self.target, self.id, self.outcome, self.duration_ms
            ),
        )
        .ids(self.ids)
        .field("id", self.id)
        .field("target", self.target)
        .field("outcome", self.outcome)
        .field("durationMs", self.duration_ms)
        .field("packId", self.pack_id)
        .field("artifactVersion", self.artifact_version)
    }

    fn json_line(&self, time: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(384);
        let ms = self.duration_ms.to_string();
        line_head(&mut out, time, self.level());
        // `"<target> <id> <outcome> <ms>ms"`: escaping the parts one by one
        // is escaping the whole, as JSON escapes character by character.
        out.extend_from_slice(br#","message":""#);
        for part in [self.target, self.id, self.outcome] {
            json_str_contents(&mut out, part);
            out.push(b' ');
        }
        out.extend_from_slice(ms.as_bytes());
        out.extend_from_slice(b"ms\"");
        ids_fields(&mut out, &self.ids);
        out.extend_from_slice(br#","event":"call","kind":"call","id":"#);
        json_str(&mut out, self.id);
        out.extend_from_slice(br#","target":"#);
        json_str(&mut out, self.target);
        out.extend_from_slice(br#","outcome":"#);
        json_str(&mut out, self.outcome);
        out.extend_from_slice(br#","durationMs":"#);
        out.extend_from_slice(ms.as_bytes());
        out.extend_from_slice(br#","packId":"#);
        json_str(&mut out, self.pack_id);
        out.extend_from_slice(br#","artifactVersion":"#);
        json_str(&mut out, self.artifact_version);
        line_end(out)
    }
}

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
            String::from_utf8(record.json_line("2026-01-01T00:00:00.000Z")).expect("UTF-8"),
            "{\"time\":\"2026-01-01T00:00:00.000Z\",\"level\":\"info\",\"severity\":\"INFO\",\"subsystem\":\"pack\",\"message\":\"Listening on port 1\",\"traceId\":\"t\",\"runId\":\"r\",\"event\":\"listening\",\"kind\":\"listening\",\"port\":1}\n"
        );
    }

    #[test]
    fn a_call_line_is_the_call_record() {
        let ids = Ids {
            trace_id: Some("0af7651916cd43dd8448eb211c80319c".into()),
            span_id: Some("b7ad6b7169203331".into()),
            tenant_id: Some("t\"1".into()),
            run_id: Some("r\u{1}n".into()),
            tool_id: Some("a.b".into()),
            ..Ids::default()
        };
        for outcome in ["ok", "handler-throw"] {
            let call = CallFacts {
                target: "tool",
                id: "we\\ird \"id\"\n",
                outcome,
                duration_ms: 12,
                ids: ids.clone(),
                pack_id: "p",
                artifact_version: "2026.1\u{7f}é",
            };
            let fast = call.json_line("2026-01-01T00:00:00.000Z");
            let slow = call.into_record().json_line("2026-01-01T00:00:00.000Z");
            assert_eq!(fast, slow);
            let parsed: Value = serde_json::from_slice(&fast).expect("a JSON line");
            assert_eq!(
                parsed["message"],
                format!("tool we\\ird \"id\"\n {outcome} 12ms")
            );
        }
    }

    #[test]
    fn json_strings_are_escaped_as_serde_json_does() {
        for text in [
            "plain",
            "quote\"",
            "back\\slash",
            "nl\n",
            "\u{0}\u{1f}",
            "é😀€",
            "",
        ] {
            let mut out = Vec::new();
            json_str(&mut out, text);
            assert_eq!(out, serde_json::to_vec(text).expect("a string"));
        }
    }

    /// Text a caller chose (a tool id, a run id) with a forged line and
    /// terminal commands in it.
    const FORGED: &str =
        "x\r\n2026-01-01T00:00:00.000Z INFO  forged\u{1b}[2J\u{7}\u{7f}\u{9b}31m\u{2028}\u{2029}\t";

    fn no_raw_control(line: &str) {
        let body = line.strip_suffix('\n').expect("one line");
        assert!(
            !body
                .chars()
                .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}'),
            "a raw control character in {body:?}"
        );
    }

    #[test]
    fn every_control_character_is_escaped_in_every_format() {
        let record = Record::lifecycle(Level::Warn, "call", format!("tool {FORGED} ok"))
            .ids(Ids {
                run_id: Some(FORGED.into()),
                tenant_id: Some(FORGED.into()),
                tool_id: Some(FORGED.into()),
                ..Ids::default()
            })
            .field("id", FORGED)
            .field("nested", serde_json::json!({"k": [FORGED]}));
        let pretty = record.pretty_line("2026-01-01T00:00:00.000Z");
        no_raw_control(&pretty);
        assert!(
            pretty.contains("x\\r\\n2026-01-01T00:00:00.000Z INFO  forged\\u{1b}[2J\\u{7}\\u{7f}\\u{9b}31m\\u{2028}\\u{2029}\\t"),
            "{pretty}"
        );
        let json = String::from_utf8(record.json_line("2026-01-01T00:00:00.000Z")).expect("UTF-8");
        no_raw_control(&json);
        let parsed: Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(parsed["runId"], FORGED);
        assert_eq!(parsed["nested"]["k"][0], FORGED);
        assert!(
            json.contains(r"\u001b[2J\u0007\u007f\u009b31m\u2028\u2029\t"),
            "{json}"
        );

        let call = CallFacts {
            target: "tool",
            id: FORGED,
            outcome: "tool-not-in-pack",
            duration_ms: 1,
            ids: Ids {
                run_id: Some(FORGED.into()),
                ..Ids::default()
            },
            pack_id: "p",
            artifact_version: "1",
        };
        let fast = String::from_utf8(call.json_line("2026-01-01T00:00:00.000Z")).expect("UTF-8");
        no_raw_control(&fast);
        assert_eq!(
            serde_json::from_str::<Value>(&fast).expect("JSON")["id"],
            FORGED
        );
        no_raw_control(&call.into_record().pretty_line("2026-01-01T00:00:00.000Z"));
    }

    #[test]
    fn the_time_is_cached_per_millisecond_but_moves_on() {
        let now = || with_now(str::to_owned);
        let first = now();
        assert_eq!(first.len(), "2026-01-01T00:00:00.000Z".len());
        std::thread::sleep(std::time::Duration::from_millis(3));
        assert_ne!(now(), first);
    }

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

    #[test]
    fn severities() {
        assert_eq!(Level::Warn.severity(), "WARNING");
        assert_eq!(Level::Trace.severity(), "DEBUG");
    }
}
