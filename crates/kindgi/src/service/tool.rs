//! Running one tool call: resolve the tool, check its input, run the
//! handler under its deadline and cancellation, check what it produced.
//! (A check call is [`super::check`].)

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt as _;
use kindgi_protocol::{CallContext, ErrorCode, ErrorResponse, Issue, Response, ToolPause, ToolRef};

use super::call::{CallMeta, CallRecord, Called, panic_error, plain_issue};
use super::decode::{Input, ToolCall};
use super::invoker::{Invoker, ToolRuntime};
use super::refusal::Refusal;
use crate::authoring::handler::Run;
use crate::authoring::input::ToolInput;
use crate::authoring::reply::{Outcome, ReplyValue};
use crate::error::cause_of_dyn;
use crate::files::{Files, FilesNotAvailable};
use crate::log::{Level, Record, call_ids};
use crate::log_events::{in_blocking_call, in_call};
use crate::{CancelReason, Cancellation, ToolContext, ToolError};

/// The most blocking handlers running at once (with the service's
/// concurrency cap, when lower), counting those still running after their
/// call ended (past its deadline, cancelled): a blocking handler can't be
/// stopped, so one that ignores its cancellation keeps its thread. A
/// blocking call that finds no slot is refused 503 `overloaded` at once,
/// rather than queued for a thread past its deadline; the blocking pool
/// (512 threads) keeps the rest for the runtime's own blocking work.
pub(crate) const MAX_BLOCKING_HANDLERS: usize = 256;

fn tool_error(code: ErrorCode, tool_id: &str, message: String) -> Response {
    Response::Error(ErrorResponse::new(code, message).for_tool(tool_id))
}

/// Runs a tool call, logging its `call` record.
///
/// # Errors
///
/// 503 `overloaded` for a blocking tool when every blocking handler's slot
/// is taken: the call did not run.
pub(crate) async fn run_tool(
    state: &Invoker,
    invoke: ToolCall,
    meta: &CallMeta,
) -> Result<Response, Refusal> {
    let cancellation = Cancellation::new();
    let Some(tool) = state.tools.get(&invoke.tool.id) else {
        // The one tool call without a context: its ids are copied.
        let ids = call_ids(&invoke.tool.id, &invoke.ctx, &meta.transport).owned();
        let called = Called::UnknownTool(Box::new((invoke.tool.id.clone(), ids)));
        let mut record = CallRecord::new(state, called, meta, cancellation);
        let response = not_in_pack(&invoke.tool.id);
        record.finish(&response);
        return Ok(response);
    };
    if tool.handler.is_blocking() {
        match Arc::clone(&state.blocking).try_acquire_owned() {
            Ok(slot) => {
                *meta
                    .blocking_slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(slot);
            }
            Err(_) => return Err(Refusal::Overloaded),
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
    Ok(response)
}

/// A tool call's answer, without its `call` record: what
/// [`crate::testing`] calls.
pub(crate) async fn tool_response(
    state: &Invoker,
    invoke: ToolCall,
    meta: &CallMeta,
    cancellation: Cancellation,
) -> Response {
    let Some(tool) = state.tools.get(&invoke.tool.id) else {
        return not_in_pack(&invoke.tool.id);
    };
    let ToolRef { id, version } = invoke.tool;
    let ctx = context_for(state, tool, id, invoke.ctx, meta, cancellation.clone());
    answer_tool(state, tool, version, invoke.input, ctx, meta, &cancellation).await
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
    input: Input,
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
    let input = match input {
        Input::Unchecked(mut input) => {
            let checked = meta.placement.run(|| {
                tool.input.fill_defaults(&mut input);
                tool.input.validate(&input)
            });
            match checked {
                Ok(()) => ToolInput::Tree(input),
                Err(issues) => return bad_input(id, issues),
            }
        }
        // Checked as it was read into the handler's type.
        #[cfg(feature = "fast-input")]
        Input::Checked(value) => ToolInput::Read(value),
        #[cfg(feature = "fast-input")]
        Input::Invalid(issues) => return bad_input(id, issues),
        // As a panic in the handler's own read of its input is answered.
        #[cfg(feature = "fast-input")]
        Input::Panicked(payload) => return failure_response(id, &panic_error(&*payload)),
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
            match meta.placement.run(|| tool.output.validate(&output)) {
                Ok(()) => Response::result(output),
                Err(issues) => bad_output(id, issues),
            }
        }
        Outcome::Reply(ReplyValue::Pause(pause)) => pause_response(tool, can_pause, pause),
        Outcome::BadInput(refused) => {
            bad_input(id, vec![plain_issue(refused.pointer, refused.message)])
        }
        Outcome::BadOutput(message) => bad_output(id, vec![plain_issue(String::new(), message)]),
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
        // A runtime sends a grant to a tool that only stores only with an
        // idempotency key: its absence, not the runtime, is the reason.
        None if !tool.entry.reads_files && call.idempotency_key.is_none() => {
            Err(FilesNotAvailable::NoIdempotencyKey)
        }
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
                let watched = ctx.clone();
                let run = std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx))).map(
                    |future| {
                        let future = state.stalls.watch(watched, future);
                        AssertUnwindSafe(in_call(call_log, future)).catch_unwind()
                    },
                );
                let ran = match run {
                    Ok(run) => tokio::time::timeout_at(meta.deadline.into(), run)
                        .await
                        .map_err(|_| Late),
                    Err(payload) => Ok(Err(payload)),
                };
                // A handler that blocked its thread past the deadline still
                // returns from that poll, too late: the timer could not
                // fire while the thread was held.
                let ran = ran.and_then(|ran| {
                    if std::time::Instant::now() > meta.deadline {
                        Err(Late)
                    } else {
                        Ok(ran)
                    }
                });
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
                    .map_err(|_| Late)
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
    ran.unwrap_or_else(|Late| {
        cancellation.end(CancelReason::Deadline);
        Err(ErrorCode::DeadlineExceeded)
    })
}

/// The call's deadline passed before its handler's outcome.
struct Late;

/// A handler's panic, as the thrown error of its call.
fn panicked(payload: &(dyn std::any::Any + Send)) -> Outcome {
    Outcome::Failed(panic_error(payload))
}
