//! `stress.count`: a tool whose input is a list, for validation under
//! hostile input (a list of millions of wrong items).

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Strings to count.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CountInput {
    items: Vec<String>,
}

/// How many there were.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CountOutput {
    count: usize,
}

async fn count(input: CountInput, _ctx: ToolContext) -> Result<CountOutput, ToolError> {
    Ok(CountOutput {
        count: input.items.len(),
    })
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.count", kindgi::here!())
        .description("Counts the strings it is given.")
        .mutating(false)
        .handler(count)
}
