//! Declaring an agent as data.

use serde_json::{Map, Value};

use super::refs::{GuardrailRef, ToolRef};
use crate::SourceFile;

/// An agent: instructions, the tools it may call, its guardrails.
///
/// Its tools and guardrails are references: made from the primitive
/// itself (`&tool`), so a rename can't leave the agent naming a tool the
/// pack lacks, or by id ([`ToolRef`], [`GuardrailRef`]).
///
/// ```
/// use kindgi::{Agent, Guardrail, Tool};
/// let echo = Tool::new("acme.echo");
/// let short = Guardrail::new("acme.min-length");
/// let agent = Agent::new("acme.helper", "1.0.0", "Helper")
///     .instructions("Answer briefly.")
///     .tool(&echo)
///     .guardrail(&short);
/// assert_eq!(agent.id(), "acme.helper");
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until it is used"]
pub struct Agent {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) name: String,
    pub(crate) instructions: Value,
    pub(crate) capabilities: Vec<Value>,
    pub(crate) tools: Vec<ToolRef>,
    pub(crate) guardrails: Vec<GuardrailRef>,
    pub(crate) description: Option<String>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) source: SourceFile,
}

impl Agent {
    /// An agent with its id, version and display name, declared in the
    /// file that calls this.
    #[track_caller]
    pub fn new(id: impl Into<String>, version: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: version.into(),
            name: name.into(),
            instructions: Value::String(String::new()),
            capabilities: Vec::new(),
            tools: Vec::new(),
            guardrails: Vec::new(),
            description: None,
            extra: Map::new(),
            source: SourceFile::caller(),
        }
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file the agent is declared in, when it isn't the one that
    /// calls `new` (e.g. `.source(kindgi::here!())` for a file outside
    /// `src/`).
    pub fn source(mut self, source: SourceFile) -> Self {
        self.source = source;
        self
    }

    /// The agent's instructions (a prompt).
    pub fn instructions(mut self, prompt: impl Into<String>) -> Self {
        self.instructions = Value::String(prompt.into());
        self
    }

    /// Versioned instructions: `{prompt, version}`.
    pub fn versioned_instructions(
        mut self,
        prompt: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        self.instructions = serde_json::json!({"prompt": prompt.into(), "version": version.into()});
        self
    }

    /// A capability (as `agent.schema.json` declares it).
    pub fn capability(mut self, capability: Value) -> Self {
        self.capabilities.push(capability);
        self
    }

    /// A tool the agent may call: `&tool` (pinned to its version), or a
    /// [`ToolRef`] by id.
    pub fn tool(mut self, tool: impl Into<ToolRef>) -> Self {
        self.tools.push(tool.into());
        self
    }

    /// A guardrail guarding the agent: `&guardrail`, or a [`GuardrailRef`]
    /// by id.
    pub fn guardrail(mut self, guardrail: impl Into<GuardrailRef>) -> Self {
        self.guardrails.push(guardrail.into());
        self
    }

    /// What the agent is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Any other declared field (`modelSettings`, `budget`, `tags`, …).
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }
}
