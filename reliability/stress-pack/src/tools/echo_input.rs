//! `stress.echo-input`: answers its typed input as its handler read it, so
//! a test can compare a large input read from its text with the same input
//! read from its tree.

use std::collections::BTreeMap;

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Fields of every kind a handler reads: an integer, a float, any JSON,
/// a map, an option, and a list to make the body large.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EchoInput {
    count: u32,
    price: f64,
    any: Value,
    labels: BTreeMap<String, i64>,
    note: Option<String>,
    filler: Vec<String>,
}

async fn echo_input(input: EchoInput, _ctx: ToolContext) -> Result<EchoInput, ToolError> {
    Ok(input)
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.echo-input")
        .description("Answers its input as the handler read it.")
        .mutating(false)
        .handler(echo_input)
}
