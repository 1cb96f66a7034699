//! `stress.throws`: a handler that fails.

use kindgi::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

async fn throws(_input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
    Err(ToolError::new("Error", "boom"))
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.throws")
        .description("Throws Error: boom.")
        .handler(throws)
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object"}))
}
