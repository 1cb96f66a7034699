//! How a record is written: one JSON object a line (built straight into
//! one buffer, escaped exactly as serde_json escapes, plus the characters
//! a log viewer may take for a line's end), or a readable line for a
//! terminal. This is the one place that formats records.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::macros::format_description;

use super::record::{CALL_IN_MESSAGE, CallFacts, CallPack, Ids, Level, PACK, Record};

impl Record {
    /// The record as a JSON line, on its own.
    #[cfg(test)]
    pub(super) fn json_line(&self, time: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(320);
        self.write_json_line(&mut out, time);
        out
    }

    /// Appends the record as a JSON line to `out` (the writer's queue),
    /// written straight into it: no `Value` or `String` per key and value.
    pub(super) fn write_json_line(&self, out: &mut Vec<u8>, time: &str) {
        line_head(out, time, self.level, self.subsystem);
        key(out, "message");
        json_str(out, &self.message);
        if let Some(ids) = &self.ids {
            ids_fields(out, ids, None);
        }
        for (name, value) in &self.fields {
            out.push(b',');
            json_str(out, name);
            out.push(b':');
            json_value(out, value);
        }
        line_end(out);
    }

    /// The readable line: every control character of the message, the ids
    /// and the fields escaped, so that what a caller sent (a tool id, a run
    /// id) can neither end the line nor reach the terminal as a command.
    pub(super) fn pretty_line(&self, time: &str) -> String {
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
        let stated: Vec<&str> = self
            .fields
            .iter()
            .find(|(key, _)| key == "inMessage")
            .and_then(|(_, value)| value.as_array())
            .map(|names| names.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        for (key, value) in &self.fields {
            if key != "event"
                && key != "kind"
                && key != "inMessage"
                && !stated.contains(&key.as_ref())
            {
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
pub(super) fn with_now<R>(write: impl FnOnce(&str) -> R) -> R {
    with_time_of(Instant::now(), write)
}

/// How long a thread places instants on the wall clock from one reading of
/// it ([`RecordClock`]): a wall clock set anew shows in the records within
/// this much.
const WALL_CLOCK_READ_EVERY: Duration = Duration::from_secs(1);

/// Calls `write` with the time of `at` as the records write it.
///
/// Formatted once a millisecond per thread: under load many records share
/// a millisecond. The wall clock is read about once a second per thread,
/// not for each record: a record whose instant the caller has (a call's
/// end) reads no clock at all.
pub(super) fn with_time_of<R>(at: Instant, write: impl FnOnce(&str) -> R) -> R {
    use std::cell::RefCell;
    thread_local! {
        static CLOCK: RefCell<RecordClock> = const { RefCell::new(RecordClock::new()) };
    }
    CLOCK.with(|clock| {
        let mut clock = clock.borrow_mut();
        let since_epoch = clock.since_epoch(at);
        write(clock.text_of(since_epoch))
    })
}

/// A thread's record times: where its instants are on the wall clock, and
/// the last millisecond written.
struct RecordClock {
    /// An instant, and the wall clock's time since the epoch read with it.
    anchor: Option<(Instant, Duration)>,
    /// The millisecond since the epoch `text` writes.
    millis: u64,
    text: String,
}

impl RecordClock {
    const fn new() -> Self {
        Self {
            anchor: None,
            millis: u64::MAX,
            text: String::new(),
        }
    }

    /// `at` as a duration since the epoch: placed from the anchor while it
    /// is less than [`WALL_CLOCK_READ_EVERY`] away, else from a new one.
    fn since_epoch(&mut self, at: Instant) -> Duration {
        if let Some(anchor) = self.anchor {
            let (placed, away) = place(anchor, at);
            if away < WALL_CLOCK_READ_EVERY {
                return placed;
            }
        }
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let anchor = (Instant::now(), wall);
        self.anchor = Some(anchor);
        place(anchor, at).0
    }

    /// The text of `since_epoch`, formatted again only for a new
    /// millisecond. Its millisecond is a multiply and an add, where
    /// `OffsetDateTime` divides 128-bit nanoseconds on every record.
    fn text_of(&mut self, since_epoch: Duration) -> &str {
        let millis = since_epoch
            .as_secs()
            .saturating_mul(1000)
            .saturating_add(u64::from(since_epoch.subsec_millis()));
        if self.millis != millis {
            self.millis = millis;
            self.text = timestamp(since_epoch);
        }
        &self.text
    }
}

/// `at` as a duration since the epoch, from an instant and the wall
/// clock's time read with it; and how far `at` is from that instant. (Mostly
/// after it: one subtraction.)
fn place((instant, wall): (Instant, Duration), at: Instant) -> (Duration, Duration) {
    match at.checked_duration_since(instant) {
        Some(after) => (wall + after, after),
        None => {
            let before = instant - at;
            (wall.saturating_sub(before), before)
        }
    }
}

/// `since_epoch` as a record's time, to the millisecond (truncated), e.g.
/// `2026-01-01T00:00:00.000Z`; the epoch itself past year 9999.
fn timestamp(since_epoch: Duration) -> String {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    let seconds = i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX);
    OffsetDateTime::UNIX_EPOCH
        .checked_add(time::Duration::seconds(seconds))
        .and_then(|at| {
            at.replace_millisecond(since_epoch.subsec_millis() as u16)
                .ok()
        })
        .and_then(|at| at.format(&format).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_owned())
}

/// Writes `value` as a JSON string, escaped exactly as serde_json escapes.
fn json_str(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    json_str_contents(out, value);
    out.push(b'"');
}

/// Writes a JSON string whose contents `out` already holds, escaped, at
/// `escaped`: a copy, not a second look at every character.
fn json_str_copied(out: &mut Vec<u8>, escaped: std::ops::Range<usize>) {
    out.push(b'"');
    out.extend_from_within(escaped);
    out.push(b'"');
}

/// Writes `value` escaped as inside a JSON string (`"`, `\\` and every
/// character of [`is_escaped`]), without the quotes; without serde_json when
/// nothing needs escaping — the common case for ids and messages.
fn json_str_contents(out: &mut Vec<u8>, value: &str) {
    if !needs_escape(value.as_bytes()) {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    let mut quoted = Vec::with_capacity(value.len() + 8);
    json_value(&mut quoted, value);
    let contents = quoted.get(1..quoted.len().saturating_sub(1));
    out.extend_from_slice(contents.unwrap_or_default());
}

/// Writes `value`, one of this crate's own words (a call's target, an
/// outcome), which needs no escaping, as it is.
fn raw_str_contents(out: &mut Vec<u8>, value: &'static str) {
    debug_assert!(!needs_escape(value.as_bytes()), "{value}");
    out.extend_from_slice(value.as_bytes());
}

/// Whether `byte` may be part of a character written as an escape: `"`,
/// `\\`, C0, DEL, or a lead byte of the C1 controls (0xC2) or the
/// separators (0xE2) — those two also start other characters, which then
/// go the slow way to be sure. Without short-circuits, so that a fold of
/// it checks many bytes at once.
const fn escaped(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\') | (b == 0x7f) | (b == 0xc2) | (b == 0xe2)
}

/// Whether `bytes` may hold a character written as an escape ([`escaped`]).
fn needs_escape(bytes: &[u8]) -> bool {
    /// [`escaped`] as a table: one lookup a byte.
    const ESCAPED: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            table[b] = escaped(b as u8);
            b += 1;
        }
        table
    };
    if bytes.len() < 32 {
        // Most strings of a record are short ids: a lookup a byte.
        return bytes.iter().any(|&b| ESCAPED[usize::from(b)]);
    }
    // A fold rather than `any`: no early exit, so the compiler checks many
    // bytes at once.
    bytes.iter().fold(false, |any, &b| any | escaped(b))
}

/// Writes `,"name":`: every key comes after the line's head. Names are
/// this crate's own field names, which need no escaping.
fn key(out: &mut Vec<u8>, name: &'static str) {
    debug_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric()));
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Opens a line: `{"time":…,"level":…,"severity":…,"subsystem":…`.
fn line_head(out: &mut Vec<u8>, time: &str, level: Level, subsystem: &'static str) {
    // The time is [`with_now`]'s digits and punctuation: nothing to escape.
    debug_assert!(!needs_escape(time.as_bytes()), "{time}");
    out.extend_from_slice(br#"{"time":""#);
    out.extend_from_slice(time.as_bytes());
    out.extend_from_slice(after_time(level));
    if subsystem == PACK {
        out.extend_from_slice(br#","subsystem":"pack""#);
    } else {
        out.extend_from_slice(br#","subsystem":""#);
        raw_str_contents(out, subsystem);
        out.push(b'"');
    }
}

/// What follows a line's time, through its severity, at `level`: one
/// piece to copy, where its level's name and severity are four (every
/// `call` record writes it).
fn after_time(level: Level) -> &'static [u8] {
    match level {
        Level::Error => br#"","level":"error","severity":"ERROR""#,
        Level::Warn => br#"","level":"warn","severity":"WARNING""#,
        Level::Info => br#"","level":"info","severity":"INFO""#,
        Level::Debug => br#"","level":"debug","severity":"DEBUG""#,
        Level::Trace => br#"","level":"trace","severity":"DEBUG""#,
    }
}

/// The key of each id of [`Ids::pairs`], in that order, with the quote that
/// opens its value: `,"traceId":"`, one piece to copy.
const ID_KEYS: [&[u8]; 8] = [
    br#","traceId":""#,
    br#","spanId":""#,
    br#","requestId":""#,
    br#","tenantId":""#,
    br#","projectId":""#,
    br#","orgId":""#,
    br#","runId":""#,
    br#","toolId":""#,
];

/// Writes the ids that are set, in their order. An id that is `written`'s
/// string itself (a tool call's `toolId` is its id) is copied from where
/// `out` already holds it escaped.
fn ids_fields<S: AsRef<str>>(
    out: &mut Vec<u8>,
    ids: &Ids<S>,
    written: Option<(&str, std::ops::Range<usize>)>,
) {
    for ((_, value), key) in ids.pairs().into_iter().zip(ID_KEYS) {
        let Some(value) = value else { continue };
        out.extend_from_slice(key);
        match &written {
            Some((text, at)) if std::ptr::eq(value, *text) => out.extend_from_within(at.clone()),
            _ => json_str_contents(out, value),
        }
        out.push(b'"');
    }
}

/// Closes a line. (Everything in it is UTF-8: `&str`s and serde_json's
/// output.)
fn line_end(out: &mut Vec<u8>) {
    out.extend_from_slice(b"}\n");
}

impl CallFacts<'_> {
    /// The `call` record as a JSON line, on its own.
    #[cfg(test)]
    pub(super) fn json_line(&self, time: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(384);
        self.write_json_line(&mut out, time);
        out
    }

    /// Appends the `call` record as a JSON line to `out` (the writer's
    /// queue): written without building a [`Record`] or a buffer of its
    /// own, as every call logs one.
    pub(super) fn write_json_line(&self, out: &mut Vec<u8>, time: &str) {
        let mut ms = itoa::Buffer::new();
        let ms = ms.format(self.duration_ms);
        line_head(out, time, self.level(), PACK);
        // `"<target> <id> <outcome> <ms>ms"`: escaping the parts one by one
        // is escaping the whole, as JSON escapes character by character.
        out.extend_from_slice(br#","message":""#);
        raw_str_contents(out, self.target);
        out.push(b' ');
        // The id, escaped once: its other places (`id`, and `toolId` where
        // that is the same string, as a tool call's is) copy it from here.
        let id_at = out.len();
        json_str_contents(out, self.id);
        let id_escaped = id_at..out.len();
        out.push(b' ');
        raw_str_contents(out, self.outcome);
        out.push(b' ');
        out.extend_from_slice(ms.as_bytes());
        out.extend_from_slice(b"ms\"");
        ids_fields(out, &self.ids, Some((self.id, id_escaped.clone())));
        out.extend_from_slice(br#","event":"call","kind":"call","id":"#);
        json_str_copied(out, id_escaped.clone());
        out.extend_from_slice(br#","target":""#);
        raw_str_contents(out, self.target);
        out.extend_from_slice(br#"","outcome":""#);
        raw_str_contents(out, self.outcome);
        out.extend_from_slice(br#"","durationMs":"#);
        out.extend_from_slice(ms.as_bytes());
        out.extend_from_slice(&self.pack.json_fields);
        if self.target == "check" {
            out.extend_from_slice(br#","checkId":"#);
            json_str_copied(out, id_escaped);
        }
        out.extend_from_slice(&self.pack.in_message_json);
        line_end(out);
    }
}

impl CallPack {
    /// The pack `pack_id` at `artifact_version`, as `call` records name it.
    pub(crate) fn new(pack_id: &str, artifact_version: &str) -> Self {
        let mut json_fields = Vec::new();
        json_fields.extend_from_slice(br#","packId":"#);
        json_str(&mut json_fields, pack_id);
        json_fields.extend_from_slice(br#","artifactVersion":"#);
        json_str(&mut json_fields, artifact_version);
        let mut in_message_json = br#","inMessage":"#.to_vec();
        json_value(
            &mut in_message_json,
            &serde_json::Value::from(CALL_IN_MESSAGE.to_vec()),
        );
        Self {
            pack_id: pack_id.to_owned(),
            artifact_version: artifact_version.to_owned(),
            json_fields: json_fields.into_boxed_slice(),
            in_message_json: in_message_json.into_boxed_slice(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn a_line_s_fixed_pieces_are_its_names() {
        for level in [
            Level::Error,
            Level::Warn,
            Level::Info,
            Level::Debug,
            Level::Trace,
        ] {
            let (name, severity) = (level.name(), level.severity());
            assert_eq!(
                after_time(level),
                format!(r#"","level":"{name}","severity":"{severity}""#).as_bytes()
            );
        }
        let names = Ids::<String>::default().pairs().map(|(name, _)| name);
        for (name, key) in names.into_iter().zip(ID_KEYS) {
            assert_eq!(key, format!(r#","{name}":""#).as_bytes());
        }
    }

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
        // A tool call's `toolId` is its id, the same string (copied once
        // escaped); another id is escaped on its own.
        let id = String::from("we\\ird \"id\"\n");
        for (outcome, tool_id) in [("ok", id.as_str()), ("handler-throw", "a.b\t")] {
            let ids = Ids {
                trace_id: Some("0af7651916cd43dd8448eb211c80319c"),
                span_id: Some("b7ad6b7169203331"),
                tenant_id: Some("t\"1"),
                run_id: Some("r\u{1}n"),
                tool_id: Some(tool_id),
                ..Ids::default()
            };
            let call = CallFacts {
                target: "tool",
                id: &id,
                outcome,
                duration_ms: 12,
                ended: Instant::now(),
                ids,
                pack: &CallPack::new("p", "2026.1\u{7f}é"),
            };
            let fast = call.json_line("2026-01-01T00:00:00.000Z");
            let slow = call.into_record().json_line("2026-01-01T00:00:00.000Z");
            assert_eq!(fast, slow);
            let parsed: Value = serde_json::from_slice(&fast).expect("a JSON line");
            assert_eq!(
                parsed["message"],
                format!("tool we\\ird \"id\"\n {outcome} 12ms")
            );
            assert_eq!(parsed["toolId"], tool_id);
            assert_eq!(parsed["id"], id.as_str());
        }
    }

    #[test]
    fn short_and_long_strings_are_screened_alike() {
        for b in 0..=255u8 {
            let escaped = b < 0x20 || b"\"\\\x7f\xc2\xe2".contains(&b);
            assert_eq!(needs_escape(&[b]), escaped, "{b:#x}");
            for len in [31, 32, 100] {
                let mut text = vec![b'a'; len];
                text[len - 1] = b;
                assert_eq!(needs_escape(&text), escaped, "{b:#x} at {len}");
                text[len - 1] = b'a';
                text[0] = b;
                assert_eq!(needs_escape(&text), escaped, "{b:#x} first of {len}");
            }
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
            ended: Instant::now(),
            ids: Ids {
                run_id: Some(FORGED),
                ..Ids::default()
            },
            pack: &CallPack::new("p", "1"),
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
    fn an_instant_is_placed_on_the_wall_clock_it_was_read_near() {
        let wall = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("after the epoch")
        };
        let mut clock = RecordClock::new();
        let (before, at, after) = (wall(), Instant::now(), wall());
        // The first record of a thread reads the wall clock.
        let placed = clock.since_epoch(at);
        assert!(
            before <= placed + Duration::from_millis(1),
            "{before:?} {placed:?}"
        );
        assert!(placed <= after, "{placed:?} {after:?}");
        let anchor = clock.anchor.expect("an anchor");
        // The next ones are placed from it, before and after it.
        let later = at + Duration::from_millis(300);
        assert_eq!(
            clock.since_epoch(later),
            placed + Duration::from_millis(300)
        );
        assert_eq!(clock.anchor, Some(anchor));
        let earlier = anchor.0 - Duration::from_millis(200);
        assert_eq!(
            clock.since_epoch(earlier),
            anchor.1 - Duration::from_millis(200)
        );
        assert_eq!(clock.anchor, Some(anchor));
        // A second from it, the wall clock is read again.
        std::thread::sleep(Duration::from_millis(2));
        let much_earlier = anchor.0 - WALL_CLOCK_READ_EVERY;
        let placed = clock.since_epoch(much_earlier);
        let new_anchor = clock.anchor.expect("an anchor");
        assert!(new_anchor.0 > anchor.0);
        assert_eq!(placed, new_anchor.1 - (new_anchor.0 - much_earlier));
        // The text is of the millisecond.
        assert_eq!(
            clock.text_of(Duration::from_millis(1_767_225_600_123)),
            "2026-01-01T00:00:00.123Z"
        );
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
    fn a_time_is_written_to_the_millisecond_in_utc() {
        for (millis, text) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_767_225_600_123, "2026-01-01T00:00:00.123Z"),
            (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            // Past what the format writes: the epoch, not a panic.
            (253_402_300_800_000, "1970-01-01T00:00:00.000Z"),
        ] {
            assert_eq!(timestamp(Duration::from_millis(millis)), text, "{millis}");
        }
        // Truncated, not rounded, as the clock's millisecond.
        assert_eq!(
            timestamp(Duration::new(1_767_225_600, 999_999_999)),
            "2026-01-01T00:00:00.999Z"
        );
        // The same text `OffsetDateTime` writes for the same instant.
        let now = OffsetDateTime::now_utc();
        let since_epoch =
            Duration::from_nanos(u64::try_from(now.unix_timestamp_nanos()).expect("after 1970"));
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        assert_eq!(
            timestamp(since_epoch),
            now.format(&format).expect("formatted")
        );
    }
}
