use kindgi::{Tool, ToolContext, ToolError};

fn sync_fn(input: String, _ctx: ToolContext) -> Result<String, ToolError> {
    Ok(input)
}

#[derive(Debug)]
struct NotAnError;

async fn bad_error(input: String) -> Result<String, NotAnError> {
    Ok(input)
}

async fn async_fn(input: String) -> Result<String, ToolError> {
    Ok(input)
}

fn main() {
    let _ = Tool::new("acme.sync").handler(sync_fn);
    let _ = Tool::new("acme.error").handler(bad_error);
    let _ = Tool::new("acme.async").blocking_handler(async_fn);
}
