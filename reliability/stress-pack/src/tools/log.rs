//! `stress.log`: a handler that logs a lot, through `tracing`; and
//! `stress.log-context`: one that logs its credentials, which the log must
//! show redacted.

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many records, and how long each.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogInput {
    /// How many `info` events.
    #[schemars(range(min = 0, max = 100000))]
    count: u32,
    /// The length of each one's `filler` field.
    #[schemars(range(min = 0, max = 1048576))]
    bytes: u32,
}

/// How many it logged.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LogOutput {
    logged: u32,
}

async fn log(input: LogInput, _ctx: ToolContext) -> Result<LogOutput, ToolError> {
    let filler = "x".repeat(input.bytes as usize);
    for i in 0..input.count {
        kindgi::tracing::info!(i, filler = filler.as_str(), "stress.log record");
    }
    Ok(LogOutput {
        logged: input.count,
    })
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.log")
        .description("Logs count info events, each with a filler field of bytes characters.")
        .mutating(false)
        .handler(log)
}

/// Logs, through `tracing`, what a careless handler might: its secret, its
/// connection and its whole context, each with `?` (their `Debug`).
async fn log_context(_input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    kindgi::tracing::info!(
        secret = ?ctx.secret("API_KEY"),
        connection = ?ctx.connection("crm"),
        context = ?ctx,
        "stress.log-context record"
    );
    Ok(serde_json::json!({"logged": true}))
}

pub(crate) fn context_tool() -> Tool {
    Tool::new("stress.log-context")
        .description("Logs its secret API_KEY, its connection crm and its context with tracing.")
        .mutating(false)
        .needs_secret("API_KEY")
        .needs_connection("crm", "acme-crm", &[])
        .input_schema(serde_json::json!({"type": "object"}))
        .output_schema(serde_json::json!({"type": "object"}))
        .handler(log_context)
}

/// What `stress.log-careless` logs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CarelessInput {
    /// The `info` event's message.
    message: String,
    /// Its `api_key` field.
    secret: String,
    /// Its `note` field.
    note: String,
}

/// Logs a secret under a secret-looking key, and secret shapes in its
/// message and in another field: an `info` event, then a `debug` one,
/// both in a span `careless.lookup` with the same two fields.
async fn log_careless(input: CarelessInput, _ctx: ToolContext) -> Result<Value, ToolError> {
    let span = kindgi::tracing::info_span!(
        "careless.lookup",
        api_key = input.secret.as_str(),
        note = input.note.as_str()
    );
    let _in_span = span.enter();
    kindgi::tracing::info!(
        api_key = input.secret.as_str(),
        note = input.note.as_str(),
        "{}",
        input.message
    );
    kindgi::tracing::debug!("stress.log-careless detail");
    Ok(serde_json::json!({"logged": 2}))
}

pub(crate) fn careless_tool() -> Tool {
    Tool::new("stress.log-careless")
        .description(
            "Logs a secret as api_key, and its message and note, at info; then a debug event.",
        )
        .mutating(false)
        .handler(log_careless)
}
