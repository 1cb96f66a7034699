//! The pack index (`index.json`, envelope v1, schema 1.4.0 plus the
//! 2.8–2.10 tool flags).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The index envelope version this crate reads and writes.
pub const INDEX_ENVELOPE_VERSION: u64 = 1;

fn is_false(b: &bool) -> bool {
    !*b
}

/// A pack index: the pack's tools, guardrails, agents and flows as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackIndex {
    /// Envelope version (1).
    pub v: u64,
    /// The pack's id.
    pub pack_id: String,
    /// The pack's version.
    pub pack_version: String,
    /// This build of the pack.
    pub artifact_version: String,
    /// When the index was built (ISO 8601 UTC, milliseconds).
    pub published_at: String,
    /// Tools with handler code, sorted by id.
    pub tools: Vec<ToolEntry>,
    /// Guardrails whose check is pack code, sorted by id.
    pub guardrails: Vec<GuardrailEntry>,
    /// Agents, sorted by id.
    pub agents: Vec<AgentEntry>,
    /// Flows, sorted by id.
    pub flows: Vec<FlowEntry>,
    /// The process environment the pack's code reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvSpec>,
}

/// The process environment a pack declares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvSpec {
    /// Names the service needs, set and non-empty, to be ready. Sorted.
    pub required: Vec<String>,
    /// Names the pack reads when present. Sorted.
    pub optional: Vec<String>,
}

/// A tool in the index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Tool id.
    pub id: String,
    /// What the tool does — the model reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// JSON Schema of the input.
    pub input: Value,
    /// JSON Schema of the output.
    pub output: Value,
    /// Declared side effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<Value>>,
    /// Declared needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<Vec<Value>>,
    /// Typed needs: `env`, `secrets`, `connections` (2.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_spec: Option<Map<String, Value>>,
    /// Whether the tool may change something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating: Option<bool>,
    /// Whether a person must approve every call in an unattended run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_approval_when_unattended: Option<bool>,
    /// The tool may answer `pause` (2.8).
    #[serde(default, skip_serializing_if = "is_false")]
    pub pauses: bool,
    /// The tool stores files (2.10).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stores_files: bool,
    /// The tool reads files (2.10).
    #[serde(default, skip_serializing_if = "is_false")]
    pub reads_files: bool,
    /// The source file that declares the tool, relative to the pack root.
    pub module_path: String,
    /// Fields this crate doesn't name (`sandbox`, `limits`, `spec`, …), as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolEntry {
    /// The env values the tool declares (`needsSpec.env`) whose spec has a
    /// `default`, each as the string `ctx.env` carries: what a runtime
    /// sends for a name no scope sets (protocol 2.5.0). A string default as
    /// it is, any other as its JSON text; a `null` default is none.
    ///
    /// ```
    /// use kindgi_protocol::ToolEntry;
    /// use serde_json::json;
    ///
    /// let entry: ToolEntry = serde_json::from_value(json!({
    ///     "id": "acme.post", "version": "1.0.0", "modulePath": "src/post.rs",
    ///     "input": {"type": "object"}, "output": {"type": "object"},
    ///     "needsSpec": {"env": {
    ///         "REGION": {"type": "string", "default": "eu"},
    ///         "RETRIES": {"type": "integer", "default": 3},
    ///         "URL": {"type": "string"}
    ///     }}
    /// }))?;
    /// let defaults: Vec<(&str, String)> = entry.env_defaults().collect();
    /// assert_eq!(defaults, [("REGION", "eu".to_owned()), ("RETRIES", "3".to_owned())]);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn env_defaults(&self) -> impl Iterator<Item = (&str, String)> {
        self.needs_spec
            .as_ref()
            .and_then(|needs| needs.get("env"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, spec)| {
                let default = match spec.get("default")? {
                    Value::Null => return None,
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                Some((name.as_str(), default))
            })
    }
}

/// A guardrail in the index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardrailEntry {
    /// Guardrail id.
    pub id: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How it is checked (`zero-llm`).
    pub kind: String,
    /// What a violation does: `{"on-violation": …}`.
    pub action: Map<String, Value>,
    /// Severity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// When the guardrail applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Map<String, Value>>,
    /// The source file that declares the check.
    pub check_module_path: String,
    /// The check's id; absent means the guardrail's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_id: Option<String>,
    /// JSON Schema of the check's config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<Value>,
    /// What the check is configured with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    /// Fields this crate doesn't name, as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GuardrailEntry {
    /// The id a `check-invoke` resolves this guardrail by.
    pub fn effective_check_id(&self) -> &str {
        self.check_id.as_deref().unwrap_or(&self.id)
    }
}

/// An agent in the index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEntry {
    /// Agent id.
    pub id: String,
    /// Agent version.
    pub version: String,
    /// Display name.
    pub name: String,
    /// A prompt string, or `{prompt, version}`.
    pub instructions: Value,
    /// Capabilities.
    pub capabilities: Vec<Value>,
    /// The tools it may call.
    pub tools: Vec<AgentToolRef>,
    /// Guardrail ids guarding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrails: Option<Vec<String>>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The source file that declares it.
    pub module_path: String,
    /// Every other declared field, as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool an agent names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentToolRef {
    /// Tool id.
    pub id: String,
    /// Version (a semver range).
    pub version: String,
}

/// A flow in the index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlowEntry {
    /// Flow id.
    pub id: String,
    /// Flow version.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Nodes (`flow.schema.json`).
    pub nodes: Vec<Value>,
    /// Edges (`flow.schema.json`).
    pub edges: Vec<Value>,
    /// Version of the flow payload: 1.
    pub kernel_payload_version: u64,
    /// The source file that declares it.
    pub module_path: String,
    /// Every other declared field, as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
