//! `stress.panics` and `stress.blocking-panics`: handlers that panic.

use kindgi::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

async fn panics(_input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
    panic!("kaboom")
}

fn blocking_panics(_input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
    panic!("kaboom")
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.panics")
        .description("An async handler that panics with the message kaboom.")
        .handler(panics)
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object"}))
}

pub(crate) fn blocking_tool() -> Tool {
    Tool::new("stress.blocking-panics")
        .description("A blocking handler that panics with the message kaboom.")
        .blocking_handler(blocking_panics)
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object"}))
}
