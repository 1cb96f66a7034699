//! What every call shares, whichever kind it is and whoever runs it: its
//! facts from the transport ([`CallMeta`]) and its `call` record
//! ([`CallRecord`]), logged once it ends.

use crate::telemetry::CallEnd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kindgi_protocol::{ErrorCode, Issue, Response};

use super::invoker::Invoker;
use super::placement::Placement;
use crate::error::cause_of_panic;
use crate::log::{CallFacts, Ids, TransportIds};
use crate::{CancelReason, Cancellation, ToolContext, ToolError};

/// A blocking handler's slot, taken before the call is logged and moved
/// to the handler's thread, which gives it back when the handler returns.
pub(crate) type BlockingSlot = std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>;

/// The transport's facts about a call.
#[derive(Debug)]
pub(crate) struct CallMeta {
    /// Where its CPU-bound work runs.
    pub(crate) placement: Placement,
    /// When its body was in.
    pub(crate) started: Instant,
    /// When it must be answered (`kindgi-timeout-ms` from `started`).
    pub(crate) deadline: Instant,
    /// The ids the transport gave the call: its trace (`traceparent`)
    /// and its `kindgi-request-id`.
    pub(crate) transport: TransportIds,
    /// A blocking handler's slot, when the call took one.
    pub(crate) blocking_slot: BlockingSlot,
    /// When the call ended: see [`CallMeta::ended`].
    ended: OnceLock<Instant>,
}

impl CallMeta {
    /// The facts of a call started at `started`, due `timeout_ms` later.
    pub(crate) fn new(
        placement: Placement,
        started: Instant,
        timeout_ms: u64,
        transport: TransportIds,
    ) -> Self {
        Self {
            placement,
            started,
            deadline: deadline_after(started, timeout_ms),
            transport,
            blocking_slot: BlockingSlot::default(),
            ended: OnceLock::new(),
        }
    }

    /// When the call ended: the clock read once, by whichever asks first
    /// (its `call` record, or its answer), so that the record's
    /// `durationMs` and the answer's `kindgi-duration-ms` are one number.
    pub(crate) fn ended(&self) -> Instant {
        *self.ended.get_or_init(Instant::now)
    }

    /// How long the call took, up to [`CallMeta::ended`].
    pub(crate) fn duration(&self) -> Duration {
        self.ended().saturating_duration_since(self.started)
    }
}

/// The deadline of a call started at `started` with `timeout_ms`.
fn deadline_after(started: Instant, timeout_ms: u64) -> Instant {
    started
        .checked_add(Duration::from_millis(timeout_ms))
        .unwrap_or(started + Duration::from_secs(365 * 24 * 3600))
}

/// Whose `call` record it is, and where its ids come from.
pub(crate) enum Called {
    /// A tool call that has its context: the ids are read from it when the
    /// record is written (the record's id is its tool's).
    Tool(ToolContext),
    /// A check call: the check's id, and the ids the transport gave it.
    Check(String, TransportIds),
    /// A call of a tool this pack doesn't have, with the ids of its call.
    UnknownTool(Box<(String, Ids)>),
}

/// Logs the call's `call` record when it ends — also when the caller goes
/// away and the call's future is dropped, which makes it `cancelled`.
pub(crate) struct CallRecord<'a> {
    invoker: &'a Invoker,
    called: Called,
    meta: &'a CallMeta,
    outcome: Option<&'static str>,
    cancellation: Cancellation,
}

impl<'a> CallRecord<'a> {
    /// The record of the call `called`, of `meta`; if it is dropped
    /// unanswered, it marks the call ended and cancels it (`disconnected`).
    pub(crate) fn new(
        invoker: &'a Invoker,
        called: Called,
        meta: &'a CallMeta,
        cancellation: Cancellation,
    ) -> Self {
        invoker.telemetry.call_started();
        Self {
            invoker,
            called,
            meta,
            outcome: None,
            cancellation,
        }
    }

    /// The call answered `response`: its outcome.
    pub(crate) fn finish(&mut self, response: &Response) {
        self.outcome = Some(
            response
                .error_code()
                .map_or("ok", |c| c.built_in_str().unwrap_or("error")),
        );
    }
}

impl Drop for CallRecord<'_> {
    fn drop(&mut self) {
        let outcome = match self.outcome.take() {
            Some(outcome) => outcome,
            None => {
                self.cancellation.end(CancelReason::Disconnected);
                ErrorCode::Cancelled.as_str()
            }
        };
        let (target, id, ids) = match &self.called {
            Called::Tool(ctx) => ("tool", ctx.tool_id(), ctx.log_ids()),
            Called::Check(id, transport) => ("check", id.as_str(), transport.ids()),
            Called::UnknownTool(called) => ("tool", called.0.as_str(), called.1.borrowed()),
        };
        self.invoker.logger.log_call(CallFacts {
            target,
            id,
            outcome,
            duration_ms: self.meta.duration().as_millis() as u64,
            ended: self.meta.ended(),
            ids: ids.clone(),
            pack: &self.invoker.call_pack,
        });
        let telemetry = &self.invoker.telemetry;
        if telemetry.is_on() {
            telemetry.call_ended(&CallEnd {
                target,
                id,
                known: !matches!(self.called, Called::UnknownTool(_)),
                outcome,
                started: self.meta.started,
                ended: self.meta.ended(),
                ids,
                caller: self.meta.transport.caller,
                span: self.meta.transport.call_span,
            });
        }
    }
}

/// A panic's payload as the error a handler (or a check) threw.
pub(crate) fn panic_error(payload: &(dyn std::any::Any + Send)) -> ToolError {
    let cause = cause_of_panic(payload);
    ToolError::new(cause.name, cause.message)
}

/// An issue from serde rather than a schema keyword, at the JSON pointer
/// `at` (`""`: the whole value).
pub(crate) fn plain_issue(at: String, message: String) -> Issue {
    Issue {
        instance_path: at,
        schema_path: None,
        keyword: None,
        params: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_ends_once_whoever_asks_first() {
        let started = Instant::now();
        let meta = CallMeta::new(Placement::InPlace, started, 1000, TransportIds::default());
        std::thread::sleep(Duration::from_millis(3));
        // The `call` record asks first; the answer's header, later, gets
        // the same duration.
        let recorded = meta.duration();
        std::thread::sleep(Duration::from_millis(3));
        assert_eq!(meta.duration(), recorded);
        assert_eq!(meta.ended(), started + recorded);
        assert!(recorded >= Duration::from_millis(3), "{recorded:?}");
    }

    #[test]
    fn a_deadline_past_the_clock_s_end_is_a_year_away() {
        let started = Instant::now();
        let meta = CallMeta::new(
            Placement::InPlace,
            started,
            u64::MAX,
            TransportIds::default(),
        );
        assert!(meta.deadline >= started + Duration::from_secs(364 * 24 * 3600));
    }
}
