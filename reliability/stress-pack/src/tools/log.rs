//! `stress.log`: a handler that logs a lot, through `tracing`.

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
