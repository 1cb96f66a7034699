//! Running one tool call: resolve the tool, validate its input, run the
//! handler under its deadline and cancellation, validate what it produced.
//! (A check call is [`super::check`].)

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::{Duration, Instant};

use kindgi_protocol::{
    CallContext, ErrorCode, ErrorResponse, Issue, Response, ToolInvoke, ToolPause, ToolRef,
};

use super::first_poll::{FirstPoll, first_poll, run_of};
use super::read::ReadInput;
use super::state::{Invoker, ToolRuntime};
use crate::authoring::input::ToolInput;
use crate::authoring::tool::{Outcome, ReplyValue, Run};
use crate::error::{cause_of_dyn, cause_of_panic};
use crate::files::{Files, FilesNotAvailable};
use crate::log::{CallFacts, Ids, Level, Record, TransportIds, call_ids};
use crate::log_events::in_blocking_call;
use crate::{CancelReason, Cancellation, ToolContext, ToolError};

/// A tool call as the service runs it: a tool invoke whose input may still
/// be its text (see [`super::read`]).
#[derive(Debug)]
pub(crate) struct ToolCall {
    pub(crate) tool: ToolRef,
    pub(crate) input: ReadInput,
    /// Boxed as it is read (see [`ToolInvoke::ctx`]).
    pub(crate) ctx: Box<CallContext>,
}

impl From<ToolInvoke> for ToolCall {
    fn from(invoke: ToolInvoke) -> ToolCall {
        ToolCall {
            tool: invoke.tool,
            input: ReadInput::Tree(invoke.input),
            ctx: invoke.ctx,
        }
    }
}

/// What an invoke answers: a message (200), a tenant refusal (421: the
/// message's `ctx.tenantId` is not the pinned tenant), or 503 `overloaded`
/// for a blocking handler with no slot free (it did not run).
#[derive(Debug)]
pub(crate) enum Answer {
    Message(Response),
    TenantMismatch,
    Overloaded,
}

/// The most blocking handlers running at once (with the service's
/// concurrency cap, when lower), counting those still running after their
/// call ended (past its deadline, cancelled): a blocking handler can't be
/// stopped, so one that ignores its cancellation keeps its thread. A
/// blocking call that finds no slot is refused 503 `overloaded` at once,
/// rather than queued for a thread past its deadline; the blocking pool
/// (512 threads) keeps the rest for the runtime's own blocking work.
pub(crate) const MAX_BLOCKING_HANDLERS: usize = 256;

/// A blocking handler's slot, taken before the call is logged and moved
/// to the handler's thread, which gives it back when the handler returns.
/// (Held in the call's [`CallMeta`]: no allocation for a call that takes
/// none.)
pub(crate) type BlockingSlot = std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>;

/// Request bodies from this size on are parsed and checked against their
/// schemas through [`off_worker`].
pub(crate) const LARGE_BODY_BYTES: usize = 256 * 1024;

/// Runs CPU-bound work of a large call (parsing, default filling,
/// validation: tens of milliseconds for a few megabytes, more for a body
/// full of wrong values; an async handler's first poll,
/// [`super::first_poll`]) without holding up the other calls of this async
/// worker: on the multi-thread runtime, on the first free of a few
/// threads kept for it ([`super::lanes`]), so that one call after another
/// works on the same thread and its allocator pages serve them all. (With
/// `block_in_place` the worker's role moved to another thread at every
/// call, and each thread kept a call's worth of freed pages.) A panic in
/// `work` goes on in the caller. Small work runs in place: handing over
/// costs more than it saves.
pub(crate) async fn off_worker<R: Send + 'static>(
    large: bool,
    work: impl FnOnce() -> R + Send + 'static,
) -> R {
    if stays_on_worker(large) {
        return work();
    }
    // A test's process env for this call goes along to the thread.
    let env = crate::env::overrides();
    super::lanes::run(move || crate::env::in_thread(env, work)).await
}

/// [`off_worker`] for work on `data`, which is cloned only when the work
/// goes to another thread: small work runs on `data` where it is (the
/// first clone of a `Bytes` made from a `Vec` allocates).
pub(crate) async fn off_worker_on<D, R>(
    large: bool,
    data: &D,
    work: impl FnOnce(&D) -> R + Send + 'static,
) -> R
where
    D: Clone + Send + 'static,
    R: Send + 'static,
{
    if stays_on_worker(large) {
        return work(data);
    }
    let data = data.clone();
    off_worker(large, move || work(&data)).await
}

/// Whether work of this size runs where it is: small work, or any on a
/// runtime of one thread (which has no other worker to keep free).
fn stays_on_worker(large: bool) -> bool {
    !(large && multi_thread())
}

/// Whether this thread runs on a multi-thread tokio runtime.
fn multi_thread() -> bool {
    use tokio::runtime::{Handle, RuntimeFlavor};
    Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// The transport's facts about a call.
#[derive(Debug)]
pub(crate) struct CallMeta {
    /// Whether the body was large: see [`off_worker`].
    pub(crate) large: bool,
    pub(crate) started: Instant,
    pub(crate) deadline: Instant,
    /// The ids the transport gave the call: its trace (`traceparent`)
    /// and its `kindgi-request-id`.
    pub(crate) transport: TransportIds,
    /// A blocking handler's slot, when the call took one.
    pub(crate) blocking_slot: BlockingSlot,
    /// When the call ended: see [`CallMeta::ended`].
    pub(crate) ended: OnceLock<Instant>,
}

impl CallMeta {
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

/// Whose `call` record it is, and where its ids come from.
pub(super) enum Called {
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
pub(super) struct CallRecord<'a> {
    state: &'a Invoker,
    called: Called,
    meta: &'a CallMeta,
    outcome: Option<&'static str>,
    cancellation: Cancellation,
}

impl<'a> CallRecord<'a> {
    /// The record of the call `called`, of `meta`; if it is dropped
    /// unanswered, it marks the call ended and cancels it (`disconnected`).
    pub(super) fn new(
        state: &'a Invoker,
        called: Called,
        meta: &'a CallMeta,
        cancellation: Cancellation,
    ) -> Self {
        Self {
            state,
            called,
            meta,
            outcome: None,
            cancellation,
        }
    }
}

impl CallRecord<'_> {
    /// The call answered `response`: its outcome.
    pub(super) fn finish(&mut self, response: &Response) {
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
        self.state.logger.log_call(CallFacts {
            target,
            id,
            outcome,
            duration_ms: self.meta.duration().as_millis() as u64,
            ended: self.meta.ended(),
            ids,
            pack: &self.state.call_pack,
        });
    }
}

fn tool_error(code: ErrorCode, tool_id: &str, message: String) -> Response {
    Response::Error(ErrorResponse::new(code, message).for_tool(tool_id))
}

/// Runs a tool call.
///
/// This and [`tool_response`] are plain functions around an `async move`
/// block rather than `async fn`s: an `async fn` keeps a second copy of
/// each argument it takes by value.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold its call twice"
)]
pub(crate) fn run_tool<'a>(
    state: &'a Invoker,
    invoke: ToolCall,
    meta: &'a CallMeta,
) -> impl Future<Output = Answer> + Send + 'a {
    async move {
        let cancellation = Cancellation::new();
        let Some(tool) = state.tools.get(&invoke.tool.id) else {
            // The one tool call without a context: its ids are copied.
            let ids = call_ids(&invoke.tool.id, &invoke.ctx, &meta.transport).owned();
            let called = Called::UnknownTool(Box::new((invoke.tool.id.clone(), ids)));
            let mut record = CallRecord::new(state, called, meta, cancellation);
            let response = not_in_pack(&invoke.tool.id);
            record.finish(&response);
            return Answer::Message(response);
        };
        if tool.handler.is_blocking() {
            match Arc::clone(&state.blocking).try_acquire_owned() {
                Ok(slot) => {
                    *meta
                        .blocking_slot
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(slot);
                }
                Err(_) => return Answer::Overloaded,
            }
        }
        let ToolCall {
            tool: ToolRef { id, version },
            input,
            ctx,
        } = invoke;
        let ctx = context_for(state, tool, id, ctx, meta, cancellation.clone());
        let called = Called::Tool(ctx.clone());
        let mut record = CallRecord::new(state, called, meta, cancellation.clone());
        let response = answer_tool(state, tool, version, input, ctx, meta, &cancellation).await;
        record.finish(&response);
        Answer::Message(response)
    }
}

/// A tool call's answer, without its `call` record: what
/// [`crate::testing`] calls. (Not an `async fn`: see [`run_tool`].)
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold its call twice"
)]
pub(crate) fn tool_response<'a>(
    state: &'a Invoker,
    invoke: ToolCall,
    meta: &'a CallMeta,
    cancellation: Cancellation,
) -> impl Future<Output = Response> + Send + 'a {
    async move {
        let Some(tool) = state.tools.get(&invoke.tool.id) else {
            return not_in_pack(&invoke.tool.id);
        };
        let ToolRef { id, version } = invoke.tool;
        let ctx = context_for(state, tool, id, invoke.ctx, meta, cancellation.clone());
        answer_tool(state, tool, version, invoke.input, ctx, meta, &cancellation).await
    }
}

/// `tool-not-in-pack` for tool `id`.
fn not_in_pack(id: &str) -> Response {
    tool_error(
        ErrorCode::ToolNotInPack,
        id,
        format!("This pack has no tool \"{id}\""),
    )
}

/// The answer of `tool`, called for its version `asked` (if the caller
/// named one) with `input` in `ctx`: the version and the input checked,
/// the handler run under its deadline, its output checked.
async fn answer_tool(
    state: &Invoker,
    tool: &Arc<ToolRuntime>,
    asked: Option<String>,
    input: ReadInput,
    ctx: ToolContext,
    meta: &CallMeta,
    cancellation: &Cancellation,
) -> Response {
    let id = tool.entry.id.as_str();
    let have = tool.entry.version.as_deref().unwrap_or_default();
    if let Some(asked) = &asked
        && asked != have
    {
        return tool_error(
            ErrorCode::ToolVersionMismatch,
            id,
            format!("Tool \"{id}\" is {have} in this pack; the caller asked for {asked}"),
        );
    }
    let likely_invalid = matches!(input, ReadInput::Refused(_));
    let input = match input {
        // Checked as it was read into the handler's type.
        ReadInput::Typed(value) => ToolInput::Read(value),
        // As a panic in the handler's own read of its input is answered.
        ReadInput::Panicked(payload) => {
            return failure_response(id, &panic_error(&*payload));
        }
        ReadInput::Invalid(issues) => return bad_input(id, issues),
        ReadInput::Tree(mut input) | ReadInput::Refused(mut input) => {
            let runtime = Arc::clone(tool);
            // An input refused is freed in the closure, on the thread that
            // read it: freeing a large tree from another thread costs the
            // allocator more than building it did.
            let checked = off_worker(meta.large, move || {
                runtime.input.fill_defaults(&mut input);
                let checked = if likely_invalid {
                    runtime.input.validate_likely_invalid(&input)
                } else {
                    runtime.input.validate(&input)
                };
                checked.map(|()| input)
            })
            .await;
            match checked {
                Ok(input) => ToolInput::Tree(input),
                Err(issues) => return bad_input(id, issues),
            }
        }
    };
    let can_pause = ctx.can_pause();
    let outcome = run_handler(state, tool, input, ctx, meta, cancellation).await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(code) => {
            let message = match code {
                ErrorCode::DeadlineExceeded => format!("{id} passed its deadline"),
                _ => format!("{id} was cancelled"),
            };
            return tool_error(code, id, message);
        }
    };
    match outcome {
        Outcome::Reply(ReplyValue::Output(output)) => {
            let runtime = Arc::clone(tool);
            let (output, checked) = off_worker(meta.large, move || {
                let checked = runtime.output.validate(&output);
                (output, checked)
            })
            .await;
            match checked {
                Ok(()) => Response::result(output),
                Err(issues) => bad_output(id, issues),
            }
        }
        Outcome::Reply(ReplyValue::Pause(pause)) => pause_response(tool, can_pause, pause),
        Outcome::BadInput(message) => bad_input(id, vec![plain_issue(message)]),
        Outcome::BadOutput(message) => bad_output(id, vec![plain_issue(message)]),
        Outcome::Failed(error) => failure_response(id, &error),
    }
}

/// `input-validation-failed` for tool `id`, with its `issues`.
fn bad_input(id: &str, issues: Vec<Issue>) -> Response {
    Response::Error(
        ErrorResponse::new(
            ErrorCode::InputValidationFailed,
            format!("Tool \"{id}\" input failed validation"),
        )
        .for_tool(id)
        .with_issues(issues),
    )
}

/// `output-validation-failed` for tool `id`, with its `issues`.
fn bad_output(id: &str, issues: Vec<Issue>) -> Response {
    Response::Error(
        ErrorResponse::new(
            ErrorCode::OutputValidationFailed,
            format!("Tool \"{id}\" handler produced output that failed validation"),
        )
        .for_tool(id)
        .with_issues(issues),
    )
}

/// An issue from serde rather than a schema keyword.
pub(super) fn plain_issue(message: String) -> Issue {
    Issue {
        instance_path: String::new(),
        schema_path: None,
        keyword: None,
        params: None,
        message,
    }
}

fn pause_response(tool: &ToolRuntime, can_pause: bool, pause: crate::Pause) -> Response {
    let id = tool.entry.id.as_str();
    if !tool.entry.pauses || !can_pause {
        return pause_not_available(id);
    }
    let timeout_ms = pause.timeout.map(|t| t.as_millis());
    if let Some(ms) = timeout_ms
        && ms > u128::from(ToolPause::MAX_TIMEOUT_MS)
    {
        return tool_error(
            ErrorCode::HandlerShapeInvalid,
            id,
            format!(
                "Tool \"{id}\" paused with timeoutMs {ms}: a pause waits from 0 ms to 24 days ({} ms)",
                ToolPause::MAX_TIMEOUT_MS
            ),
        );
    }
    Response::Pause(ToolPause {
        v: kindgi_protocol::ProtocolV2,
        timeout_ms: timeout_ms.map(|ms| ms as u64),
        name: pause.name,
    })
}

fn pause_not_available(id: &str) -> Response {
    tool_error(
        ErrorCode::PauseNotAvailable,
        id,
        format!("Tool \"{id}\" tried to pause, but the call carries no wait token"),
    )
}

fn failure_response(id: &str, error: &ToolError) -> Response {
    if let Some(connection) = error.rejected_connection() {
        let mut e = ErrorResponse::new(
            ErrorCode::ConnectionRejected,
            format!("Tool \"{id}\" was refused by the app of connection \"{connection}\""),
        )
        .for_tool(id);
        e.connection = Some(connection.to_owned());
        return Response::Error(e);
    }
    if error.is_pause_not_available() {
        return pause_not_available(id);
    }
    let cause = error
        .cause()
        .cloned()
        .unwrap_or_else(|| cause_of_dyn("Error", &std::fmt::Error));
    Response::Error(
        ErrorResponse::new(
            ErrorCode::HandlerThrow,
            format!(
                "Handler for tool \"{id}\" threw: {}: {}",
                cause.name, cause.message
            ),
        )
        .for_tool(id)
        .with_cause(cause),
    )
}

/// The context of a call of `tool` (called by its id, `tool_id`) in `call`.
fn context_for(
    state: &Invoker,
    tool: &ToolRuntime,
    tool_id: String,
    mut call: Box<CallContext>,
    meta: &CallMeta,
    cancellation: Cancellation,
) -> ToolContext {
    let wait_token = if tool.entry.pauses {
        call.wait_token.take()
    } else {
        None
    };
    let files = match call.tool_files.take() {
        _ if !tool.entry.stores_files && !tool.entry.reads_files => {
            Err(FilesNotAvailable::NotDeclared)
        }
        Some(grant) => Ok(Files::new(
            state.http(),
            grant.url,
            grant.token,
            (tool.entry.stores_files, tool.entry.reads_files),
            call.idempotency_key.is_some(),
            meta.deadline,
        )),
        None => Err(FilesNotAvailable::NoGrant),
    };
    ToolContext::new(
        tool_id,
        call,
        wait_token,
        files,
        cancellation,
        meta.deadline,
        meta.transport.clone(),
    )
}

/// Runs the handler until it answers or the deadline passes. A panic is a
/// thrown error; an async handler still running at the deadline is dropped,
/// a blocking one is told through its cancellation and, if it finishes
/// later, logged `handler-finished-late`.
async fn run_handler(
    state: &Invoker,
    tool: &ToolRuntime,
    input: ToolInput,
    ctx: ToolContext,
    meta: &CallMeta,
    cancellation: &Cancellation,
) -> Result<Outcome, ErrorCode> {
    // The handler's `tracing` events carry the call's ids.
    let call_log = ctx.clone();
    // The handler's outcome (a panic is a thrown error), or the code of a
    // call that ended without one; `Err` when the deadline passed first.
    // Pinned where it is made: `select!` then moves a pointer, not the
    // future with the call's input and context.
    let work = std::pin::pin!(async {
        match &tool.handler.run {
            Run::Async(handler) => {
                // Polled on the call's own task: no task to spawn and wake
                // per call. Dropping the call (a caller that went away, the
                // deadline) drops the handler's future with it. Making the
                // future reads the input into the handler's type.
                let handler = Arc::clone(handler);
                let make =
                    move || std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx)));
                let ran = if meta.large {
                    // Made and first polled where the input was read (see
                    // `first_poll`).
                    match first_poll(call_log, make).await {
                        FirstPoll::Done(ran) => Ok(ran),
                        FirstPoll::Running(run) => {
                            tokio::time::timeout_at(meta.deadline.into(), run).await
                        }
                    }
                } else {
                    match make() {
                        Ok(future) => {
                            let mut run = std::pin::pin!(run_of(call_log, future));
                            // A handler done at its first poll, as many
                            // are, needs no timer for its deadline.
                            match futures::poll!(run.as_mut()) {
                                Poll::Ready(ran) => Ok(ran),
                                Poll::Pending => {
                                    tokio::time::timeout_at(meta.deadline.into(), run).await
                                }
                            }
                        }
                        Err(payload) => Ok(Err(payload)),
                    }
                };
                ran.map(|ran| Ok(ran.unwrap_or_else(|payload| panicked(&*payload))))
            }
            Run::Blocking(handler) => {
                let handler = Arc::clone(handler);
                let logger = Arc::clone(&state.logger);
                let id = tool.entry.id.clone();
                let ended = cancellation.clone();
                // A test's process env for this call goes along to the thread.
                let env = crate::env::overrides();
                // Held until the handler returns, however long after its call.
                let slot = meta
                    .blocking_slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                let task = tokio::task::spawn_blocking(move || {
                    let _slot = slot;
                    let outcome = crate::env::in_thread(env, || {
                        in_blocking_call(call_log, || handler(input, ctx))
                    });
                    if let Some(at) = ended.ended_at() {
                        let after = at.elapsed().as_millis() as u64;
                        logger.log(
                            Record::lifecycle(
                                Level::Warn,
                                "handler-finished-late",
                                format!("tool {id} finished {after} ms after its call ended"),
                            )
                            .field("afterMs", after),
                        );
                    }
                    outcome
                });
                tokio::time::timeout_at(meta.deadline.into(), task)
                    .await
                    .map(|joined| {
                        // Not a panic: the runtime is shutting down.
                        joined.or_else(|error| {
                            error
                                .try_into_panic()
                                .map(|payload| panicked(&*payload))
                                .map_err(|_| ErrorCode::Cancelled)
                        })
                    })
            }
        }
    });
    // The drain window closing ends the call as its deadline would: the
    // handler is told (reason `shutdown`), and the call is answered
    // `cancelled` before the service closes its connection.
    // The handler first: one done at once never waits for the window.
    let ran = tokio::select! {
        biased;
        ran = work => ran,
        () = state.window_closed.cancelled() => {
            cancellation.end(CancelReason::Shutdown);
            return Err(ErrorCode::Cancelled);
        }
    };
    ran.unwrap_or_else(|_elapsed| {
        cancellation.end(CancelReason::Deadline);
        Err(ErrorCode::DeadlineExceeded)
    })
}

/// A handler's panic, as the thrown error of its call.
fn panicked(payload: &(dyn std::any::Any + Send)) -> Outcome {
    Outcome::Failed(panic_error(payload))
}

/// A panic's payload as the error a handler threw.
pub(super) fn panic_error(payload: &(dyn std::any::Any + Send)) -> ToolError {
    let cause = cause_of_panic(payload);
    ToolError::new(cause.name, cause.message)
}

/// The deadline of a call started at `started` with `timeout_ms`.
pub(crate) fn deadline_after(started: Instant, timeout_ms: u64) -> Instant {
    started
        .checked_add(Duration::from_millis(timeout_ms))
        .unwrap_or(started + Duration::from_secs(365 * 24 * 3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_ends_once_whoever_asks_first() {
        let started = Instant::now();
        let meta = CallMeta {
            large: false,
            started,
            deadline: started + Duration::from_secs(1),
            transport: TransportIds::default(),
            blocking_slot: Default::default(),
            ended: Default::default(),
        };
        std::thread::sleep(Duration::from_millis(3));
        // The `call` record asks first; the answer's header, later, gets
        // the same duration.
        let recorded = meta.duration();
        std::thread::sleep(Duration::from_millis(3));
        assert_eq!(meta.duration(), recorded);
        assert_eq!(meta.ended(), started + recorded);
        assert!(recorded >= Duration::from_millis(3), "{recorded:?}");
    }
}
