//! `{{name}}.greet`: greets someone by name.

use kindgi::{ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who to greet.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GreetInput {
    /// Their name.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// The greeting.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Greeting {
    /// What to say.
    pub text: String,
}

/// Greets someone by name.
#[kindgi::tool(id = "{{name}}.greet", mutating = false)]
pub async fn greet(input: GreetInput, _ctx: ToolContext) -> Result<Greeting, ToolError> {
    // GREETING is declared in Cargo.toml; `kindgi dev` reads it from .env.
    let greeting = std::env::var("GREETING").unwrap_or_else(|_| "Hello".to_owned());
    Ok(Greeting {
        text: format!("{greeting}, {}!", input.name),
    })
}
