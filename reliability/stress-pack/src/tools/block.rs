//! `stress.block`: a blocking handler that ignores its call's deadline and
//! cancellation, as a runaway one would.

use std::time::Duration;

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long to block.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BlockInput {
    #[schemars(range(min = 0))]
    ms: u64,
}

/// How long it blocked.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BlockOutput {
    blocked: u64,
}

fn block(input: BlockInput, _ctx: ToolContext) -> Result<BlockOutput, ToolError> {
    // What a test waits for to know the call is running (shown with
    // `KINDGI_LOG_LEVEL=debug`).
    kindgi::tracing::debug!(ms = input.ms, "stress.block began");
    std::thread::sleep(Duration::from_millis(input.ms));
    Ok(BlockOutput { blocked: input.ms })
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.block")
        .description("Blocks its thread for ms milliseconds, whatever happens to its call.")
        .mutating(false)
        .blocking_handler(block)
}

/// `stress.block-async`'s handler: the mistake the service watches for,
/// blocking its async worker thread.
async fn block_async(input: BlockInput) -> Result<BlockOutput, ToolError> {
    std::thread::sleep(Duration::from_millis(input.ms));
    Ok(BlockOutput { blocked: input.ms })
}

pub(crate) fn async_tool() -> Tool {
    Tool::new("stress.block-async")
        .description("Blocks its async worker thread for ms milliseconds (std::thread::sleep in an async handler).")
        .mutating(false)
        .handler(|input: BlockInput, _ctx: ToolContext| block_async(input))
}
