use kindgi::{ToolContext, ToolError};
use kindgi_macros::tool;

#[tool(id = "acme.echo", needs_secret = "API_KEY")]
async fn unknown(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "acme.echo", id = "acme.other")]
async fn twice(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = "acme.echo", mutating = "no")]
async fn not_a_bool(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[tool(id = acme.echo)]
async fn not_a_string(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

fn main() {}
