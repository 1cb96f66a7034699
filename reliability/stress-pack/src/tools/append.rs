//! `stress.append`: records that it ran by appending its id to a file.
//!
//! A load test gives every call its own id and compares the file with the
//! answers: an id answered 200 must be in the file exactly once, an id
//! refused 503 must not be in it at all.

use std::io::Write;
use std::time::Duration;

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where to append, what, and how long to work first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppendInput {
    /// The file to append to (created when missing).
    #[schemars(length(min = 1))]
    path: String,
    /// The line to append (without its newline).
    #[schemars(length(min = 1))]
    id: String,
    /// Milliseconds to wait before appending.
    #[serde(default)]
    #[schemars(range(min = 0))]
    ms: u64,
}

/// The id that was appended.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AppendOutput {
    id: String,
}

async fn append(input: AppendInput, ctx: ToolContext) -> Result<AppendOutput, ToolError> {
    if input.ms > 0 {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(input.ms)) => {}
            reason = ctx.cancelled() => {
                return Err(ToolError::new("Cancelled", format!("{reason:?}")));
            }
        }
    }
    let line = format!("{}\n", input.id);
    // One write of one buffer to a file opened O_APPEND: concurrent calls'
    // lines never interleave.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&input.path)?
        .write_all(line.as_bytes())?;
    Ok(AppendOutput { id: input.id })
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.append")
        .description(
            "Waits ms milliseconds, then appends its id and a newline to the file at path.",
        )
        .mutating(true)
        .handler(append)
}
