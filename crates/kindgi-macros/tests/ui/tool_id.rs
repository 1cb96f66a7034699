use kindgi::{ToolContext, ToolError};
use kindgi_macros::tool;

#[tool(mutating = false)]
async fn missing(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "")]
async fn empty(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "acme echo")]
async fn space(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = ".acme.echo")]
async fn leading_dot(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

fn main() {}
