//! `stress.sleep`: a slow call.

use std::time::Duration;

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long to sleep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SleepInput {
    #[schemars(range(min = 0))]
    ms: u64,
}

/// How long it slept.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SleepOutput {
    slept: u64,
}

async fn sleep(input: SleepInput, ctx: ToolContext) -> Result<SleepOutput, ToolError> {
    // What a test waits for to know the call is running (shown with
    // `KINDGI_LOG_LEVEL=debug`).
    kindgi::tracing::debug!(ms = input.ms, "stress.sleep began");
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(input.ms)) => {}
        _ = ctx.cancelled() => {}
    }
    Ok(SleepOutput { slept: input.ms })
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.sleep")
        .description("Sleeps for ms milliseconds; stops early when the call is cancelled.")
        .mutating(false)
        .handler(sleep)
}
