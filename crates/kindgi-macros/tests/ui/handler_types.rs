use kindgi::{Tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Text {
    text: u32,
}

fn sync_fn(input: Text, _ctx: ToolContext) -> Result<Text, ToolError> {
    Ok(input)
}

#[derive(Debug)]
struct NotAnError;

async fn bad_error(input: Text) -> Result<Text, NotAnError> {
    Ok(input)
}

async fn async_fn(input: Text) -> Result<Text, ToolError> {
    Ok(input)
}

fn main() {
    let _ = Tool::new("acme.sync").handler(sync_fn);
    let _ = Tool::new("acme.error").handler(bad_error);
    let _ = Tool::new("acme.async").blocking_handler(async_fn);
}
