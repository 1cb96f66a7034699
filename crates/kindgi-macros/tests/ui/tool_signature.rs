use kindgi::{ToolContext, ToolError};
use kindgi_macros::tool;

#[tool(id = "acme.sync")]
fn not_async(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "acme.async", blocking)]
async fn blocking_async(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "acme.three")]
async fn three_params(input: String, _ctx: ToolContext, _extra: u32) -> Result<String, ToolError> {
    Ok(input)
}

fn main() {}
