//! OpenTelemetry: with the `otel` feature and a collector named by the
//! standard variables ([`settings`]), every call is a server span in the
//! caller's trace (a child of its `traceparent`, a root span without one)
//! and counts in the calls' metrics, exported over OTLP/HTTP. A span
//! carries the call's ids and outcome — never its input, output,
//! secrets, connections or tokens — and shares its id with the call's
//! records (`spanId`).
//!
//! Without a collector, or without the feature, [`Telemetry`] is off and a
//! call pays one branch for it.

mod settings;

#[cfg(feature = "otel")]
mod export;

use std::time::{Duration, Instant};

pub(crate) use settings::{OtelSettings, is_credential_var, is_otel_var};

use crate::log::{CallSpan, Ids, Logger};
#[cfg(not(feature = "otel"))]
use crate::log::{Level, Record};

/// The pack the telemetry describes.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(feature = "otel"),
    allow(dead_code, reason = "read by the exporter")
)]
pub(crate) struct PackFacts<'a> {
    pub(crate) pack_id: &'a str,
    pub(crate) artifact_version: &'a str,
}

/// What a span needs of one ended call.
#[derive(Debug)]
#[cfg_attr(
    not(feature = "otel"),
    allow(dead_code, reason = "read by the exporter")
)]
pub(crate) struct CallEnd<'a> {
    /// `tool` or `check`.
    pub(crate) target: &'static str,
    pub(crate) id: &'a str,
    /// Whether the pack has it (else the caller chose the id).
    pub(crate) known: bool,
    /// `ok` or the error code.
    pub(crate) outcome: &'static str,
    pub(crate) started: Instant,
    pub(crate) ended: Instant,
    /// The call's ids, as its records carry them.
    pub(crate) ids: Ids<&'a str>,
    /// The caller's span (`traceparent`): its id and its flags.
    pub(crate) caller: Option<(u64, u8)>,
    /// The span's own ids, chosen as the call started.
    pub(crate) span: Option<CallSpan>,
}

/// The ids of a call's span, chosen as it starts: in the caller's trace
/// with the records' `spanId` when a `traceparent` came (`trace`: its
/// trace id and the span id the records carry), else new ones; sampled as
/// the caller's span is, else sampled.
pub(crate) fn call_span(trace: Option<&(String, String)>, caller: Option<(u64, u8)>) -> CallSpan {
    let parsed = trace.and_then(|(trace_id, span_id)| {
        Some((
            u128::from_str_radix(trace_id, 16).ok()?,
            u64::from_str_radix(span_id, 16).ok()?,
        ))
    });
    let (trace_id, span_id) =
        parsed.unwrap_or_else(|| (rand::random::<u128>().max(1), rand::random::<u64>().max(1)));
    CallSpan {
        trace_id,
        span_id,
        sampled: caller.is_none_or(|(_, flags)| flags & 1 == 1),
    }
}

/// `future` (a handler's) with the call's span as the current trace
/// context while it is polled: the `tracing` spans it opens nest under the
/// call's span.
pub(crate) fn within_call_span<F: std::future::Future>(
    span: Option<CallSpan>,
    future: F,
) -> impl std::future::Future<Output = F::Output> {
    #[cfg(feature = "otel")]
    {
        use futures::future::Either;
        use opentelemetry::trace::FutureExt as _;
        match span {
            Some(span) => Either::Left(future.with_context(export::parent_of_handler(span))),
            None => Either::Right(future),
        }
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = span;
        future
    }
}

/// Runs `work` (a blocking handler) with the call's span as the current
/// trace context.
pub(crate) fn in_call_span<R>(span: Option<CallSpan>, work: impl FnOnce() -> R) -> R {
    #[cfg(feature = "otel")]
    let _current = span.map(|span| export::parent_of_handler(span).attach());
    #[cfg(not(feature = "otel"))]
    let _ = span;
    work()
}

/// A `tracing` layer of the handlers' spans ([`Telemetry::tracing_layer`]).
pub(crate) type HandlerSpans =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// The service's telemetry: off, or exporting.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    exporting: Option<Box<export::Exporting>>,
}

impl Telemetry {
    /// Exports what `settings` ask for, for `pack`; off when they ask for
    /// nothing. Without the `otel` feature, a collector named is said to be
    /// ignored, once, as a `telemetry-off` warning.
    pub(crate) fn start(
        settings: Option<&OtelSettings>,
        pack: PackFacts<'_>,
        logger: &Logger,
    ) -> Result<Self, String> {
        let Some(settings) = settings else {
            return Ok(Self::default());
        };
        #[cfg(feature = "otel")]
        {
            let _ = logger;
            let exporting = export::Exporting::start(settings, &pack)?;
            Ok(Self {
                exporting: Some(Box::new(exporting)),
            })
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = (settings, pack);
            logger.log(
                Record::lifecycle(
                    Level::Warn,
                    "telemetry-off",
                    "An OTLP endpoint is set, but this pack was built without kindgi's `otel` feature: no span or metric is exported (add features = [\"otel\"] to its kindgi dependency)",
                ),
            );
            Ok(Self::default())
        }
    }

    /// A call started.
    #[inline]
    pub(crate) fn call_started(&self) {
        #[cfg(feature = "otel")]
        if let Some(exporting) = &self.exporting {
            exporting.call_started();
        }
    }

    /// The `tracing` layer that exports the spans a handler opens, as
    /// children of its call's span: when spans are exported.
    pub(crate) fn tracing_layer(&self) -> Option<HandlerSpans> {
        #[cfg(feature = "otel")]
        {
            let tracer = self.exporting.as_ref()?.tracer()?;
            Some(Box::new(tracing_opentelemetry::layer().with_tracer(tracer)))
        }
        #[cfg(not(feature = "otel"))]
        None
    }

    /// Whether anything is exported: a call ending builds its
    /// [`CallEnd`] only then.
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        #[cfg(feature = "otel")]
        return self.exporting.is_some();
        #[cfg(not(feature = "otel"))]
        false
    }

    /// A call ended.
    pub(crate) fn call_ended(&self, end: &CallEnd<'_>) {
        #[cfg(feature = "otel")]
        if let Some(exporting) = &self.exporting {
            exporting.call_ended(end);
        }
        #[cfg(not(feature = "otel"))]
        let _ = end;
    }

    /// A call refused 503 before it ran, by `reason` (`overloaded`,
    /// `draining`, `missing-env`).
    pub(crate) fn refused(&self, reason: &'static str) {
        #[cfg(feature = "otel")]
        if let Some(exporting) = &self.exporting {
            exporting.refused(reason);
        }
        #[cfg(not(feature = "otel"))]
        let _ = reason;
    }

    /// Exports what is waiting and stops, within `timeout`.
    pub(crate) fn shutdown(&self, timeout: Duration) {
        #[cfg(feature = "otel")]
        if let Some(exporting) = &self.exporting {
            exporting.shutdown(timeout);
        }
        #[cfg(not(feature = "otel"))]
        let _ = timeout;
    }
}
