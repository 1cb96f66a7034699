//! `stress.count` and `stress.count-batch`: tools whose input is a list
//! (in a batch that may be missing, for the second), for validation under
//! hostile input (a list of millions of wrong items).

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Strings to count.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CountInput {
    items: Vec<String>,
}

/// A batch of strings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Batch {
    items: Vec<String>,
}

/// Strings to count, in a batch that may be missing. The tool declares the
/// schema schemars writes for it with `$ref`s (see [`batch_tool`]).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CountBatchInput {
    batch: Option<Batch>,
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

async fn count_batch(input: CountBatchInput, _ctx: ToolContext) -> Result<CountOutput, ToolError> {
    Ok(CountOutput {
        count: input.batch.map_or(0, |batch| batch.items.len()),
    })
}

pub(crate) fn batch_tool() -> Tool {
    Tool::new("stress.count-batch")
        .description("Counts the strings of a batch, if there is one.")
        .mutating(false)
        .handler(count_batch)
        // `Option<Batch>` as an `anyOf` of the batch and `null`, the shape
        // that makes a validator build every error of a branch.
        .input_schema(json!({
            "type": "object",
            "properties": {"batch": {"anyOf": [{"$ref": "#/$defs/Batch"}, {"type": "null"}]}},
            "additionalProperties": false,
            "$defs": {"Batch": {
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"type": "string"}}},
                "required": ["items"],
                "additionalProperties": false
            }}
        }))
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.count")
        .description("Counts the strings it is given.")
        .mutating(false)
        .handler(count)
}
