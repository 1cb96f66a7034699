//! `{{name}}.greet`: greets someone by name.

use kindgi::ToolError;
use kindgi::schemars::{self, JsonSchema};
use kindgi::serde::{Deserialize, Serialize};

/// Who to greet.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct GreetInput {
    /// Their name.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// The greeting.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Greeting {
    /// What to say.
    pub text: String,
}

/// Greets someone by name.
#[kindgi::tool(id = "{{name}}.greet", mutating = false)]
pub async fn greet(input: GreetInput) -> Result<Greeting, ToolError> {
    // GREETING is declared in Cargo.toml; `kindgi dev` reads it from .env.
    let greeting = kindgi::env::var("GREETING").unwrap_or_else(|| "Hello".to_owned());
    Ok(Greeting {
        text: format!("{greeting}, {}!", input.name),
    })
}
