use kindgi::ToolError;
use kindgi_macros::tools;

struct Desk;

#[tools]
impl Desk {
    /// Takes the value.
    #[tool(id = "desk.owned")]
    async fn owned(self, input: String) -> Result<String, ToolError> {
        Ok(input)
    }

    /// Changes the value.
    #[tool(id = "desk.mutable")]
    async fn mutable(&mut self, input: String) -> Result<String, ToolError> {
        Ok(input)
    }

    /// No input.
    #[tool(id = "desk.none")]
    async fn none(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

struct Empty;

#[tools(id = "x")]
impl Empty {
    fn plain(&self) {}
}

fn main() {}
