//! `tracing` events from pack code as the service's own log records
//! (CONTRACT §2): the same formatter and redaction, the call's correlation
//! ids, the pack's id and artifact version; under the subsystem `pack.tool`
//! during a call (its own level in `KINDGI_LOG_LEVELS`), else `pack`.
//!
//! The service runs each handler with its call's [`ToolContext`] in scope (a
//! task-local for an async handler, a thread-local for a blocking one), so
//! an event knows its call without a span per call. An event outside any
//! call (at boot, on a task the handler spawned without the scope) carries
//! no call ids.

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use crate::ToolContext;
use crate::log::{Level, Logger, PACK_TOOL, Record};
use crate::telemetry::HandlerSpans;

tokio::task_local! {
    static ASYNC_CALL: ToolContext;
}

thread_local! {
    static BLOCKING_CALL: RefCell<Option<ToolContext>> = const { RefCell::new(None) };
}

/// Runs `future` (an async handler) as part of `call`.
pub(crate) fn in_call<F: Future>(call: ToolContext, future: F) -> impl Future<Output = F::Output> {
    let future = crate::telemetry::within_call_span(call.call_span(), future);
    ASYNC_CALL.scope(call, future)
}

/// Runs `work` (a blocking handler) as part of `call`, on this thread.
pub(crate) fn in_blocking_call<R>(call: ToolContext, work: impl FnOnce() -> R) -> R {
    let span = call.call_span();
    BLOCKING_CALL.with(|current| *current.borrow_mut() = Some(call));
    // Cleared also when `work` panics: the thread goes back to the pool.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            BLOCKING_CALL.with(|current| current.borrow_mut().take());
        }
    }
    let _clear = Clear;
    crate::telemetry::in_call_span(span, work)
}

/// The call the current code runs as part of, if any.
fn current_call() -> Option<ToolContext> {
    ASYNC_CALL
        .try_with(ToolContext::clone)
        .ok()
        .or_else(|| BLOCKING_CALL.with(|current| current.borrow().clone()))
}

/// Makes every `tracing` event of the process a record of `logger`, unless
/// the binary installed a subscriber of its own first.
/// `spans`, when given, also sees every span and event (the telemetry's
/// export of the handlers' spans).
pub(crate) fn install(
    logger: Arc<Logger>,
    pack_id: &str,
    artifact_version: &str,
    spans: Option<HandlerSpans>,
) {
    use tracing_subscriber::layer::SubscriberExt as _;
    let layer = PackEvents {
        logger,
        pack_id: pack_id.to_owned(),
        artifact_version: artifact_version.to_owned(),
    };
    let subscriber = tracing_subscriber::registry().with(spans).with(layer);
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// The layer that writes events as records.
struct PackEvents {
    logger: Arc<Logger>,
    pack_id: String,
    artifact_version: String,
}

fn level_of(metadata: &Metadata<'_>) -> Level {
    match *metadata.level() {
        tracing::Level::ERROR => Level::Error,
        tracing::Level::WARN => Level::Warn,
        tracing::Level::INFO => Level::Info,
        tracing::Level::DEBUG => Level::Debug,
        tracing::Level::TRACE => Level::Trace,
    }
}

/// Whether an event is the OpenTelemetry SDK's own below a warning (how
/// it batches, when it exports): not a record of the service's. Its
/// warnings (spans dropped, a collector that fails) are.
fn sdk_chatter(metadata: &Metadata<'_>, level: Level) -> bool {
    level > Level::Warn && metadata.target().starts_with("opentelemetry")
}

/// The fields this layer adds to every event's record, after its own.
const ADDED: &[&str] = &["packId", "artifactVersion", "event", "kind"];

/// Whether an event's field `name` would clash with a field the record has
/// anyway: such a field is written as `field.<name>`.
fn clashes(name: &str) -> bool {
    crate::log::is_head_or_id_key(name) || ADDED.contains(&name)
}

impl<S: Subscriber> Layer<S> for PackEvents {
    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        let level = level_of(metadata);
        self.logger.enabled_in_any(level) && !sdk_chatter(metadata, level)
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let level = level_of(event.metadata());
        if sdk_chatter(event.metadata(), level) {
            return;
        }
        // A handler's, during its call: `pack.tool`; else the service's.
        let call = current_call();
        let subsystem = if call.is_some() { PACK_TOOL } else { "pack" };
        if !self.logger.enabled_in(subsystem, level) {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut record =
            Record::new(level, fields.message.unwrap_or_default()).subsystem(subsystem);
        if let Some(call) = call {
            record = record.ids(call.log_ids().owned());
        }
        for (name, value) in fields.values {
            record = record.field_owned(name, value);
        }
        record = record
            .field("packId", self.pack_id.as_str())
            .field("artifactVersion", self.artifact_version.as_str());
        self.logger.log(record);
    }
}

/// An event's message and fields, as JSON values.
#[derive(Default)]
struct Fields {
    message: Option<String>,
    values: Vec<(String, Value)>,
}

impl Fields {
    fn push(&mut self, field: &Field, value: Value) {
        let name = field.name();
        if name == "message" {
            self.message = Some(match value {
                Value::String(text) => text,
                other => other.to_string(),
            });
            return;
        }
        let name = if clashes(name) {
            format!("field.{name}")
        } else {
            name.to_owned()
        };
        self.values.push((name, value));
    }
}

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::from(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, Value::from(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.push(field, Value::from(value.to_string()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.push(field, Value::from(format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use super::clashes;

    #[test]
    fn an_event_field_may_not_take_a_name_the_record_has() {
        for name in ["time", "message", "traceId", "toolId", "packId", "kind"] {
            assert!(clashes(name), "{name}");
        }
        for name in ["order", "ticket", "created"] {
            assert!(!clashes(name), "{name}");
        }
    }
}
