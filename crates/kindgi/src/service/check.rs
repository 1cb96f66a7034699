//! Running one guardrail check call: resolve the check, validate its
//! config, run its `evaluate` (the pack's own synchronous code, a panic
//! being a thrown error), answer its result.

use std::panic::AssertUnwindSafe;

use kindgi_protocol::{CheckInvoke, ErrorCode, ErrorResponse, Response};
use serde_json::Value;

use super::call::{CallMeta, CallRecord, Called, panic_error, plain_issue};
use super::invoker::{CheckRuntime, Invoker};
use crate::Cancellation;
use crate::authoring::check::CheckOutcome;
use crate::error::cause_of_dyn;

/// Runs a check call.
pub(crate) fn run_check(state: &Invoker, invoke: CheckInvoke, meta: &CallMeta) -> Response {
    let called = Called::Check(invoke.check.id.clone(), meta.transport.clone());
    let mut record = CallRecord::new(state, called, meta, Cancellation::new());
    // A check's `evaluate` is the pack's own synchronous code: over a large
    // trace it runs off the worker too.
    let check = state.checks.get(&invoke.check.id);
    let response = meta.placement.run(|| answer(check.map(|c| &**c), invoke));
    record.finish(&response);
    response
}

/// A check's error, naming it.
fn check_error(code: ErrorCode, id: &str, message: String) -> ErrorResponse {
    ErrorResponse::new(code, message).for_check(id)
}

/// The answer to a check call, without its `call` record: what
/// [`crate::testing`] calls too.
pub(crate) fn check_response(state: &Invoker, invoke: CheckInvoke) -> Response {
    answer(state.checks.get(&invoke.check.id).map(|c| &**c), invoke)
}

/// The answer of `check` (`None`: the pack has none of that id).
fn answer(check: Option<&CheckRuntime>, invoke: CheckInvoke) -> Response {
    let id = invoke.check.id.as_str();
    let Some(check) = check else {
        return check_error(
            ErrorCode::CheckNotInPack,
            id,
            format!("This pack has no check \"{id}\""),
        )
        .into();
    };
    let config = Value::Object(invoke.config);
    if let Some(validator) = &check.config
        && let Err(issues) = validator.validate(&config)
    {
        let first = issues.first();
        let at = first
            .map(|i| i.instance_path.as_str())
            .filter(|p| !p.is_empty())
            .map(|p| format!(" at {p}"))
            .unwrap_or_default();
        let message = first.map(|i| i.message.as_str()).unwrap_or("invalid");
        return check_error(
            ErrorCode::InputValidationFailed,
            id,
            format!("Check \"{id}\" config failed validation{at}: {message}"),
        )
        .with_issues(issues)
        .into();
    }
    let Value::Object(config) = config else {
        return check_error(
            ErrorCode::MalformedMessage,
            id,
            "`config` must be an object".to_owned(),
        )
        .into();
    };
    let evaluate = &check.evaluate;
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| evaluate(config, invoke.trace)))
        .unwrap_or_else(|payload| CheckOutcome::Failed(panic_error(&*payload)));
    match outcome {
        CheckOutcome::Result(result) => Response::check_result(result),
        CheckOutcome::BadConfig(refused) => check_error(
            ErrorCode::InputValidationFailed,
            id,
            format!("Check \"{id}\" config failed validation: {refused}"),
        )
        .with_issues(vec![plain_issue(refused.pointer, refused.message)])
        .into(),
        CheckOutcome::Failed(error) => {
            let cause = error
                .cause()
                .cloned()
                .unwrap_or_else(|| cause_of_dyn("Error", &std::fmt::Error));
            check_error(
                ErrorCode::HandlerThrow,
                id,
                format!(
                    "Check \"{id}\" evaluate() threw: {}: {}",
                    cause.name, cause.message
                ),
            )
            .with_cause(cause)
            .into()
        }
    }
}
