//! What a log record holds (CONTRACT §2): its level, its correlation ids,
//! and its own fields in the order they are written. How a record becomes
//! bytes is [`super::format`]; where the bytes go, [`super::writer`].

use std::borrow::Cow;

use kindgi_protocol::CallContext;
use serde_json::Value;

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
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }

    /// The level's severity, as written in every line (see the line's
    /// fixed pieces in `format`).
    #[cfg(test)]
    pub(super) fn severity(self) -> &'static str {
        match self {
            Self::Error => "ERROR",
            Self::Warn => "WARNING",
            Self::Info => "INFO",
            Self::Debug | Self::Trace => "DEBUG",
        }
    }

    pub(super) fn parse(raw: &str) -> Option<Self> {
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

/// The correlation ids a record may carry, in the order they are written:
/// owned by a [`Record`], borrowed (`Ids<&str>`) by the `call` record,
/// which reads them from its call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ids<S = String> {
    pub(crate) trace_id: Option<S>,
    pub(crate) span_id: Option<S>,
    pub(crate) request_id: Option<S>,
    pub(crate) tenant_id: Option<S>,
    pub(crate) project_id: Option<S>,
    pub(crate) org_id: Option<S>,
    pub(crate) run_id: Option<S>,
    pub(crate) tool_id: Option<S>,
}

impl<S: AsRef<str>> Ids<S> {
    pub(super) fn pairs(&self) -> [(&'static str, Option<&str>); 8] {
        let ids = self.borrowed();
        [
            ("traceId", ids.trace_id),
            ("spanId", ids.span_id),
            ("requestId", ids.request_id),
            ("tenantId", ids.tenant_id),
            ("projectId", ids.project_id),
            ("orgId", ids.org_id),
            ("runId", ids.run_id),
            ("toolId", ids.tool_id),
        ]
    }

    /// The same ids, borrowed.
    pub(crate) fn borrowed(&self) -> Ids<&str> {
        self.map(|id| id.as_ref().map(AsRef::as_ref))
    }

    /// The same ids, owned.
    pub(crate) fn owned(&self) -> Ids {
        self.map(|id| id.as_ref().map(|id| id.as_ref().to_owned()))
    }

    /// Whether any id could hold a secret shape ([`super::redact`]).
    pub(super) fn may_hold_a_secret(&self) -> bool {
        self.pairs()
            .iter()
            .any(|(_, id)| id.is_some_and(super::redact::may_hold_a_secret))
    }

    /// Every id through `f`, in place.
    fn map<'a, T>(&'a self, f: impl Fn(&'a Option<S>) -> Option<T>) -> Ids<T> {
        Ids {
            trace_id: f(&self.trace_id),
            span_id: f(&self.span_id),
            request_id: f(&self.request_id),
            tenant_id: f(&self.tenant_id),
            project_id: f(&self.project_id),
            org_id: f(&self.org_id),
            run_id: f(&self.run_id),
            tool_id: f(&self.tool_id),
        }
    }
}

impl Ids {
    /// Every id with its secret shapes masked.
    fn scrub(&mut self) {
        for id in [
            &mut self.trace_id,
            &mut self.span_id,
            &mut self.request_id,
            &mut self.tenant_id,
            &mut self.project_id,
            &mut self.org_id,
            &mut self.run_id,
            &mut self.tool_id,
        ]
        .into_iter()
        .flatten()
        {
            if let Cow::Owned(scrubbed) = super::redact::scrub_text(id) {
                *id = scrubbed;
            }
        }
    }
}

/// The ids of a call's span in the telemetry ([`TransportIds::call_span`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallSpan {
    pub(crate) trace_id: u128,
    pub(crate) span_id: u64,
    pub(crate) sampled: bool,
}

/// The ids the transport gave a call, for its records: its trace and the
/// service's span in it (`traceparent`), and its `kindgi-request-id`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransportIds {
    pub(crate) trace: Option<(String, String)>,
    /// The caller's span in that trace (`traceparent`'s parent id, and its
    /// flags): the parent of the call's span when telemetry is on.
    pub(crate) caller: Option<(u64, u8)>,
    /// When telemetry is on, the call span's trace and span ids (the
    /// caller's trace or a new one; the records' `spanId` or a new one)
    /// and whether it is sampled: chosen as the call starts, so that what
    /// its handler traces nests under it.
    pub(crate) call_span: Option<CallSpan>,
    pub(crate) request_id: Option<String>,
}

impl TransportIds {
    /// These ids, as a record's.
    pub(crate) fn ids(&self) -> Ids<&str> {
        Ids {
            trace_id: self.trace.as_ref().map(|t| t.0.as_str()),
            span_id: self.trace.as_ref().map(|t| t.1.as_str()),
            request_id: self.request_id.as_deref(),
            ..Ids::default()
        }
    }
}

/// The ids of a call of tool `tool_id` in `call`, which the transport gave
/// `transport`: the context's and the transport's (the context's request
/// id first).
pub(crate) fn call_ids<'a>(
    tool_id: &'a str,
    call: &'a CallContext,
    transport: &'a TransportIds,
) -> Ids<&'a str> {
    let header = transport.ids();
    Ids {
        request_id: call.request_id.as_deref().or(header.request_id),
        tenant_id: Some(call.tenant_id.as_str()),
        project_id: call.project_id.as_deref(),
        org_id: call.org_id.as_deref(),
        run_id: Some(call.run_id.as_str()),
        tool_id: Some(tool_id),
        ..header
    }
}

/// The keys of a record's head, before its ids.
const HEAD_KEYS: [&str; 5] = ["time", "level", "severity", "subsystem", "message"];

/// Whether `name` is a key of a record's head or one of its ids.
pub(crate) fn is_head_or_id_key(name: &str) -> bool {
    HEAD_KEYS.contains(&name)
        || Ids::<String>::default()
            .pairs()
            .iter()
            .any(|(key, _)| *key == name)
}

/// The subsystem of the service's own records.
pub(crate) const PACK: &str = "pack";
/// The subsystem of what a tool's handler logs during its call.
pub(crate) const PACK_TOOL: &str = "pack.tool";

/// The lifecycle events a supervisor reads to know where the service is:
/// written whatever the levels say.
const SUPERVISED: [&str; 5] = [
    "listening",
    "config-invalid",
    "boot-failed",
    "draining",
    "stopped",
];

/// One log record: level, subsystem, message, ids, then its own fields in
/// order.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(super) level: Level,
    pub(super) subsystem: &'static str,
    /// Written whatever the levels say (a [`SUPERVISED`] event).
    pub(super) always: bool,
    pub(super) message: String,
    pub(super) ids: Option<Ids>,
    pub(super) fields: Vec<(Cow<'static, str>, Value)>,
}

impl Record {
    pub(crate) fn new(level: Level, message: impl Into<String>) -> Self {
        Self {
            level,
            subsystem: PACK,
            always: false,
            message: message.into(),
            ids: None,
            fields: Vec::new(),
        }
    }

    /// A lifecycle record: `event` and `kind` both set to its name.
    pub(crate) fn lifecycle(level: Level, kind: &'static str, message: impl Into<String>) -> Self {
        let mut record = Self::new(level, message)
            .field("event", kind)
            .field("kind", kind);
        record.always = SUPERVISED.contains(&kind);
        record
    }

    /// The record under `subsystem` ([`PACK`] unless set).
    pub(crate) fn subsystem(mut self, subsystem: &'static str) -> Self {
        self.subsystem = subsystem;
        self
    }

    /// The record with what no record may carry taken out
    /// ([`super::redact`]): secret-looking fields' values, and secret
    /// shapes in its message, ids and fields' strings.
    pub(super) fn redacted(mut self) -> Self {
        use super::redact::{REDACTED, is_secret_key, redact_value, scrub_text};
        if let Cow::Owned(message) = scrub_text(&self.message) {
            self.message = message;
        }
        if let Some(ids) = &mut self.ids {
            ids.scrub();
        }
        for (key, value) in &mut self.fields {
            if is_secret_key(key) {
                *value = Value::from(REDACTED);
            } else {
                redact_value(value);
            }
        }
        self
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
}

/// The facts of one `call` record (CONTRACT §2), the record every call
/// logs: [`super::Logger::log_call`] writes it without building a [`Record`].
#[derive(Debug)]
pub(crate) struct CallFacts<'a> {
    /// `tool` or `check`.
    pub(crate) target: &'static str,
    pub(crate) id: &'a str,
    /// `ok`, or an error code of the protocol's own (`error` for one a
    /// handler chose): this crate's words, which need no escaping.
    pub(crate) outcome: &'static str,
    pub(crate) duration_ms: u64,
    /// When the call ended: the record's time.
    pub(crate) ended: std::time::Instant,
    pub(crate) ids: Ids<&'a str>,
    pub(crate) pack: &'a CallPack,
}

/// The pack every `call` record names: its id and artifact version, and
/// the two as the JSON line's last fields, written once
/// ([`CallPack::new`]) rather than escaped again for every call.
#[derive(Debug)]
pub(crate) struct CallPack {
    pub(super) pack_id: String,
    pub(super) artifact_version: String,
    /// `,"packId":…,"artifactVersion":…`.
    pub(super) json_fields: Box<[u8]>,
    /// `,"inMessage":[…]`: [`CALL_IN_MESSAGE`], which a readable line
    /// leaves out (as `@kindgi/log` marks them).
    pub(super) in_message_json: Box<[u8]>,
}

impl CallFacts<'_> {
    pub(super) fn level(&self) -> Level {
        if self.outcome == "ok" {
            Level::Info
        } else {
            Level::Warn
        }
    }

    /// The same record as a [`Record`], for the readable format.
    pub(super) fn into_record(self) -> Record {
        let record = Record::lifecycle(
            self.level(),
            "call",
            format!(
                "{} {} {} {}ms",
                self.target, self.id, self.outcome, self.duration_ms
            ),
        )
        .ids(self.ids.owned())
        .field("id", self.id)
        .field("target", self.target)
        .field("outcome", self.outcome)
        .field("durationMs", self.duration_ms)
        .field("packId", self.pack.pack_id.as_str())
        .field("artifactVersion", self.pack.artifact_version.as_str());
        let record = if self.target == "check" {
            record.field("checkId", self.id)
        } else {
            record
        };
        record.field("inMessage", CALL_IN_MESSAGE.to_vec())
    }
}

/// The fields a `call` record's message states (`inMessage`).
pub(super) const CALL_IN_MESSAGE: [&str; 4] = ["target", "id", "outcome", "durationMs"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities() {
        assert_eq!(Level::Warn.severity(), "WARNING");
        assert_eq!(Level::Trace.severity(), "DEBUG");
    }
}
