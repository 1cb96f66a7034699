//! The OpenTelemetry SDK behind [`super::Telemetry`]: a tracer and a meter
//! exporting over OTLP/HTTP (protobuf), on the SDK's own threads. A call
//! only hands its span to a bounded queue: a slow or dead collector costs
//! dropped spans (counted, and logged once by the SDK), never a slower
//! call.

use std::cell::Cell;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider as _, UpDownCounter};
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    Tracer as _, TracerProvider as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, IdGenerator, RandomIdGenerator, Sampler, SdkTracer,
    SdkTracerProvider, Span, SpanData, SpanProcessor,
};

use super::settings::{Endpoint, OtelSettings, Root, Sampling};
use super::{CallEnd, PackFacts};
use crate::log::{CallSpan, REDACTED, is_secret_key, scrub_text};

/// The exporting half of the service's telemetry.
#[derive(Debug)]
pub(crate) struct Exporting {
    traces: Option<(SdkTracerProvider, SdkTracer)>,
    metrics: Option<(SdkMeterProvider, Instruments)>,
    pack_id: String,
    artifact_version: String,
}

/// The calls' instruments.
#[derive(Debug)]
struct Instruments {
    calls: Counter<u64>,
    duration: Histogram<f64>,
    in_flight: UpDownCounter<i64>,
    refused: Counter<u64>,
}

impl Exporting {
    /// Starts the exporters `settings` ask for.
    pub(crate) fn start(settings: &OtelSettings, pack: &PackFacts<'_>) -> Result<Self, String> {
        let resource = resource(settings, pack);
        let traces = match &settings.traces {
            None => None,
            Some(endpoint) => {
                let exporter = to(SpanExporter::builder().with_http(), endpoint)
                    .build()
                    .map_err(|e| format!("Cannot export traces to {}: {e}", endpoint.url))?;
                let batches = BatchConfigBuilder::default()
                    .with_max_queue_size(settings.span_queue)
                    .with_max_export_batch_size(settings.span_batch)
                    .with_scheduled_delay(settings.span_delay)
                    .build();
                let processor = Redacting(
                    BatchSpanProcessor::builder(exporter)
                        .with_batch_config(batches)
                        .build(),
                );
                let provider = SdkTracerProvider::builder()
                    .with_span_processor(processor)
                    .with_sampler(sampler(settings.sampling))
                    .with_id_generator(CallSpanIds)
                    .with_resource(resource.clone())
                    .build();
                let tracer = provider.tracer("kindgi");
                Some((provider, tracer))
            }
        };
        let metrics = match &settings.metrics {
            None => None,
            Some(endpoint) => {
                let exporter = to(MetricExporter::builder().with_http(), endpoint)
                    .build()
                    .map_err(|e| format!("Cannot export metrics to {}: {e}", endpoint.url))?;
                let reader = PeriodicReader::builder(exporter)
                    .with_interval(settings.metric_interval)
                    .build();
                let provider = SdkMeterProvider::builder()
                    .with_reader(reader)
                    .with_resource(resource)
                    .build();
                let instruments = Instruments::new(&provider.meter("kindgi"));
                Some((provider, instruments))
            }
        };
        Ok(Self {
            traces,
            metrics,
            pack_id: pack.pack_id.to_owned(),
            artifact_version: pack.artifact_version.to_owned(),
        })
    }

    /// The tracer the handlers' `tracing` spans are exported with.
    pub(crate) fn tracer(&self) -> Option<SdkTracer> {
        self.traces.as_ref().map(|(_, tracer)| tracer.clone())
    }

    /// A call started.
    pub(crate) fn call_started(&self) {
        if let Some((_, instruments)) = &self.metrics {
            instruments.in_flight.add(1, &[]);
        }
    }

    /// A call ended: its span, and its place in the metrics.
    pub(crate) fn call_ended(&self, end: &CallEnd<'_>) {
        if let Some((_, instruments)) = &self.metrics {
            instruments.in_flight.add(-1, &[]);
            // A tool the pack lacks is named by its caller: one name for
            // all of them, so that no caller can grow the metrics.
            let id = if end.known { end.id } else { "(not in pack)" };
            let attributes = [
                KeyValue::new("kindgi.target", end.target),
                KeyValue::new("kindgi.id", id.to_owned()),
                KeyValue::new("kindgi.outcome", end.outcome),
            ];
            instruments.calls.add(1, &attributes);
            let seconds = end
                .ended
                .saturating_duration_since(end.started)
                .as_secs_f64();
            instruments.duration.record(seconds, &attributes);
        }
        if let Some((_, tracer)) = &self.traces {
            self.span(tracer, end);
        }
    }

    /// A call refused 503 before it ran, by `reason`.
    pub(crate) fn refused(&self, reason: &'static str) {
        if let Some((_, instruments)) = &self.metrics {
            instruments
                .refused
                .add(1, &[KeyValue::new("kindgi.reason", reason)]);
        }
    }

    fn span(&self, tracer: &SdkTracer, end: &CallEnd<'_>) {
        let parent = caller_context(end).unwrap_or_default();
        let (name, mut attributes) = match end.target {
            "tool" => (
                format!("execute_tool {}", end.id),
                vec![
                    KeyValue::new("gen_ai.operation.name", "execute_tool"),
                    KeyValue::new("gen_ai.tool.name", scrub(end.id)),
                ],
            ),
            _ => (
                format!("check {}", end.id),
                vec![KeyValue::new("kindgi.check.id", scrub(end.id))],
            ),
        };
        attributes.push(KeyValue::new("kindgi.target", end.target));
        attributes.push(KeyValue::new("kindgi.outcome", end.outcome));
        if end.outcome != "ok" {
            attributes.push(KeyValue::new("error.type", end.outcome));
        }
        attributes.push(KeyValue::new("kindgi.pack.id", self.pack_id.clone()));
        attributes.push(KeyValue::new(
            "kindgi.artifact.version",
            self.artifact_version.clone(),
        ));
        let ids = [
            ("kindgi.request.id", end.ids.request_id),
            ("kindgi.tenant.id", end.ids.tenant_id),
            ("kindgi.project.id", end.ids.project_id),
            ("kindgi.org.id", end.ids.org_id),
            ("kindgi.run.id", end.ids.run_id),
        ];
        for (key, id) in ids {
            if let Some(id) = id {
                attributes.push(KeyValue::new(key, scrub(id)));
            }
        }
        let builder = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_start_time(wall_clock(end.started))
            .with_attributes(attributes);
        // The span takes the ids chosen as the call started (its records'
        // `spanId`, the parent its handler's spans already name).
        let own = end.span.map(|span| {
            (
                TraceId::from_bytes(span.trace_id.to_be_bytes()),
                SpanId::from_bytes(span.span_id.to_be_bytes()),
            )
        });
        NEXT_TRACE_ID.with(|next| next.set(own.map(|(trace, _)| trace)));
        NEXT_SPAN_ID.with(|next| next.set(own.map(|(_, span)| span)));
        let mut span = tracer.build_with_context(builder, &parent);
        NEXT_TRACE_ID.with(|next| next.set(None));
        NEXT_SPAN_ID.with(|next| next.set(None));
        use opentelemetry::trace::Span as _;
        if end.outcome != "ok" {
            span.set_status(Status::error(end.outcome));
        }
        span.end_with_timestamp(wall_clock(end.ended));
    }

    /// Exports what is waiting, and stops, within `timeout` each.
    pub(crate) fn shutdown(&self, timeout: Duration) {
        if let Some((provider, _)) = &self.traces {
            let _ = provider.shutdown_with_timeout(timeout);
        }
        if let Some((provider, _)) = &self.metrics {
            let _ = provider.shutdown_with_timeout(timeout);
        }
    }
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
        Self {
            calls: meter
                .u64_counter("kindgi.pack.calls")
                .with_description("Calls answered, by target, id and outcome")
                .with_unit("{call}")
                .build(),
            duration: meter
                .f64_histogram("kindgi.pack.call.duration")
                .with_description("How long calls took, from their request's head to their answer")
                .with_unit("s")
                .build(),
            in_flight: meter
                .i64_up_down_counter("kindgi.pack.calls.in_flight")
                .with_description("Calls running")
                .with_unit("{call}")
                .build(),
            refused: meter
                .u64_counter("kindgi.pack.calls.refused")
                .with_description("Calls refused 503 before they ran, by reason")
                .with_unit("{call}")
                .build(),
        }
    }
}

/// The trace context a handler runs in: the call's span, not exported yet,
/// as the parent of the spans it opens.
pub(crate) fn parent_of_handler(span: CallSpan) -> Context {
    let flags = if span.sampled {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let call = SpanContext::new(
        TraceId::from_bytes(span.trace_id.to_be_bytes()),
        SpanId::from_bytes(span.span_id.to_be_bytes()),
        flags,
        false,
        TraceState::default(),
    );
    Context::new().with_remote_span_context(call)
}

/// The caller's span (`traceparent`) as the call span's parent.
fn caller_context(end: &CallEnd<'_>) -> Option<Context> {
    let trace_id = TraceId::from_hex(end.ids.trace_id?).ok()?;
    let (span, flags) = end.caller?;
    let span_id = SpanId::from_bytes(span.to_be_bytes());
    let caller = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags),
        true,
        TraceState::default(),
    );
    Some(Context::new().with_remote_span_context(caller))
}

/// `text` with secret shapes masked, as every log record's strings are.
fn scrub(text: &str) -> String {
    scrub_text(text).into_owned()
}

/// `at` on the wall clock.
fn wall_clock(at: Instant) -> SystemTime {
    let ago = Instant::now().saturating_duration_since(at);
    SystemTime::now()
        .checked_sub(ago)
        .unwrap_or_else(SystemTime::now)
}

/// An OTLP/HTTP exporter's builder (of spans or of metrics) sending
/// protobuf to `endpoint`.
fn to<B: WithExportConfig + WithHttpConfig>(builder: B, endpoint: &Endpoint) -> B {
    let headers: HashMap<String, String> = endpoint.headers.iter().cloned().collect();
    builder
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint.url.clone())
        .with_timeout(endpoint.timeout)
        .with_headers(headers)
}

fn resource(settings: &OtelSettings, pack: &PackFacts<'_>) -> Resource {
    let name = settings
        .service_name
        .clone()
        .unwrap_or_else(|| pack.pack_id.to_owned());
    let attributes = settings
        .resource
        .iter()
        .filter(|(key, _)| key != "service.name")
        .map(|(key, value)| KeyValue::new(key.clone(), value.clone()));
    Resource::builder_empty()
        .with_service_name(name)
        .with_attributes(attributes)
        .with_attribute(KeyValue::new(
            "service.version",
            pack.artifact_version.to_owned(),
        ))
        .with_attribute(KeyValue::new("kindgi.pack.id", pack.pack_id.to_owned()))
        .with_attribute(KeyValue::new("telemetry.sdk.language", "rust"))
        .build()
}

fn sampler(sampling: Sampling) -> Sampler {
    let root = |root: Root| match root {
        Root::AlwaysOn => Sampler::AlwaysOn,
        Root::AlwaysOff => Sampler::AlwaysOff,
        Root::Ratio(ratio) => Sampler::TraceIdRatioBased(ratio),
    };
    match sampling {
        Sampling::AlwaysOn => Sampler::AlwaysOn,
        Sampling::AlwaysOff => Sampler::AlwaysOff,
        Sampling::Ratio(ratio) => Sampler::TraceIdRatioBased(ratio),
        Sampling::ParentBased(inner) => Sampler::ParentBased(Box::new(root(inner))),
    }
}

thread_local! {
    /// The span id the next span built on this thread takes.
    static NEXT_SPAN_ID: Cell<Option<SpanId>> = const { Cell::new(None) };
    /// The trace id the next root span built on this thread takes.
    static NEXT_TRACE_ID: Cell<Option<TraceId>> = const { Cell::new(None) };
}

/// Ids: those a call's span was given as the call started
/// ([`NEXT_SPAN_ID`], [`NEXT_TRACE_ID`]: the records' `spanId`, the
/// caller's trace), so that its span, its records and its handler's spans
/// agree; else random.
#[derive(Debug)]
struct CallSpanIds;

impl IdGenerator for CallSpanIds {
    fn new_trace_id(&self) -> TraceId {
        NEXT_TRACE_ID
            .with(Cell::take)
            .unwrap_or_else(|| RandomIdGenerator::default().new_trace_id())
    }

    fn new_span_id(&self) -> SpanId {
        NEXT_SPAN_ID
            .with(Cell::take)
            .unwrap_or_else(|| RandomIdGenerator::default().new_span_id())
    }
}

/// The span processor that takes out of every span what no log record may
/// carry, before it is queued: the handler's own spans and their events
/// carry what its code put there (the call's span carries only ids).
#[derive(Debug)]
struct Redacting(BatchSpanProcessor);

impl SpanProcessor for Redacting {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.0.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        redact_attributes(&mut span.attributes);
        for event in &mut span.events.events {
            // A `tracing` event's message is its name.
            if let std::borrow::Cow::Owned(scrubbed) = scrub_text(&event.name) {
                event.name = scrubbed.into();
            }
            redact_attributes(&mut event.attributes);
        }
        self.0.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
    }
}

/// A secret-looking key's value replaced, secret shapes masked in every
/// string, as in a log record.
fn redact_attributes(attributes: &mut [KeyValue]) {
    for attribute in attributes {
        if is_secret_key(attribute.key.as_str()) {
            attribute.value = Value::from(REDACTED);
            continue;
        }
        match &attribute.value {
            Value::String(text) => {
                if let std::borrow::Cow::Owned(scrubbed) = scrub_text(text.as_str()) {
                    attribute.value = Value::from(scrubbed);
                }
            }
            Value::Array(Array::String(texts)) => {
                let scrubbed = texts
                    .iter()
                    .map(|t| StringValue::from(scrub_text(t.as_str()).into_owned()))
                    .collect();
                attribute.value = Value::Array(Array::String(scrubbed));
            }
            _ => {}
        }
    }
}
