//! Declaring a guardrail whose check is pack code.

use std::sync::Arc;

use kindgi_protocol::CheckResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::numbers::read_typed;
use crate::{SourceFile, ToolError, input_schema_for};

/// The run trace a check evaluates (`RunTrace` of `@kindgi/guardrails`).
///
/// Its well-known parts are typed; whatever else the runtime sends is kept
/// in [`RunTrace::extra`], and the trace exactly as sent in [`RunTrace::raw`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTrace {
    /// The run's (or turn's) output.
    #[serde(default)]
    pub output: Value,
    /// The tool calls the run made.
    #[serde(default)]
    pub tool_calls: Vec<Value>,
    /// Their results.
    #[serde(default)]
    pub tool_results: Vec<Value>,
    /// The model calls the run made.
    #[serde(default)]
    pub model_calls: Vec<Value>,
    /// Every other field of the trace.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// The trace as sent.
    #[serde(skip)]
    pub raw: Value,
}

impl RunTrace {
    /// Reads a trace as sent; a trace that isn't shaped like one keeps only
    /// its [`RunTrace::raw`] value.
    pub fn from_value(raw: Value) -> Self {
        let mut trace = Self::deserialize(&raw).unwrap_or_default();
        trace.raw = raw;
        trace
    }

    /// The output when it is text.
    pub fn output_text(&self) -> Option<&str> {
        self.output.as_str()
    }
}

/// What a check returns: a [`CheckResult`], a `bool`, or either in a
/// `Result` whose error is any `std::error::Error` (or [`ToolError`]).
pub trait IntoCheckResult {
    /// The result, or the error the check threw.
    fn into_check_result(self) -> Result<CheckResult, ToolError>;
}

impl IntoCheckResult for CheckResult {
    fn into_check_result(self) -> Result<CheckResult, ToolError> {
        Ok(self)
    }
}

impl IntoCheckResult for bool {
    fn into_check_result(self) -> Result<CheckResult, ToolError> {
        Ok(CheckResult::from(self))
    }
}

impl<T: IntoCheckResult, E: Into<ToolError>> IntoCheckResult for Result<T, E> {
    fn into_check_result(self) -> Result<CheckResult, ToolError> {
        self.map_err(Into::into)?.into_check_result()
    }
}

/// The type-erased check the service calls: `(config, trace)`.
pub(crate) type Evaluate = Arc<dyn Fn(Map<String, Value>, Value) -> CheckOutcome + Send + Sync>;

/// What a check produced.
#[derive(Debug)]
pub(crate) enum CheckOutcome {
    /// Its result.
    Result(CheckResult),
    /// The config passed the schema but not the config type's `Deserialize`.
    BadConfig(String),
    /// It threw.
    Failed(ToolError),
}

/// A guardrail whose check runs in this pack.
///
/// ```
/// use kindgi::{CheckResult, Guardrail, RunTrace};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, Serialize, JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Config {
///     #[serde(default = "one")]
///     #[schemars(range(min = 0))]
///     min_length: i64,
/// }
/// fn one() -> i64 { 1 }
///
/// fn min_length(config: Config, trace: RunTrace) -> CheckResult {
///     let len = trace.output_text().unwrap_or("").trim().chars().count() as i64;
///     if len >= config.min_length { CheckResult::pass() } else { CheckResult::fail("too short") }
/// }
///
/// let guardrail = Guardrail::new("acme.min-length", kindgi::here!())
///     .check_id("acme.checks.min-length")
///     .on_violation("halt")
///     .severity("error")
///     .evaluate(min_length);
/// assert_eq!(guardrail.resolved_check_id(), "acme.checks.min-length");
/// ```
#[derive(Clone)]
pub struct Guardrail {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) check_id: Option<String>,
    pub(crate) kind: String,
    pub(crate) on_violation: Option<String>,
    pub(crate) severity: Option<String>,
    pub(crate) scope: Option<Map<String, Value>>,
    pub(crate) config_schema: Option<Value>,
    pub(crate) config: Option<Map<String, Value>>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) source: SourceFile,
    pub(crate) evaluate: Option<Evaluate>,
}

impl std::fmt::Debug for Guardrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guardrail")
            .field("id", &self.id)
            .field("check_id", &self.check_id)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Guardrail {
    /// A guardrail with this id, declared in `source` ([`here!`](crate::here)).
    /// Its `kind` defaults to `zero-llm`.
    pub fn new(id: impl Into<String>, source: SourceFile) -> Self {
        Self {
            id: id.into(),
            name: None,
            check_id: None,
            kind: "zero-llm".to_owned(),
            on_violation: None,
            severity: None,
            scope: None,
            config_schema: None,
            config: None,
            extra: Map::new(),
            source,
            evaluate: None,
        }
    }

    /// The guardrail's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id a `check-invoke` names: `checkId`, else the guardrail's id.
    pub fn resolved_check_id(&self) -> &str {
        self.check_id.as_deref().unwrap_or(&self.id)
    }

    /// Human-readable name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The check's own id, when it differs from the guardrail's.
    pub fn check_id(mut self, check_id: impl Into<String>) -> Self {
        self.check_id = Some(check_id.into());
        self
    }

    /// How the guardrail is checked (default `zero-llm`).
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = kind.into();
        self
    }

    /// What a violation does (`halt`, `log-only`, …): the index's
    /// `action: {"on-violation": …}`. Required.
    pub fn on_violation(mut self, action: impl Into<String>) -> Self {
        self.on_violation = Some(action.into());
        self
    }

    /// Severity (`error`, `warning`, …).
    pub fn severity(mut self, severity: impl Into<String>) -> Self {
        self.severity = Some(severity.into());
        self
    }

    /// When the guardrail applies.
    pub fn scope(mut self, scope: Map<String, Value>) -> Self {
        self.scope = Some(scope);
        self
    }

    /// The config the check runs with (the index's `config`).
    pub fn config(mut self, config: Value) -> Self {
        self.config = config.as_object().cloned();
        self
    }

    /// Replaces the config schema derived from the check's config type.
    pub fn config_schema(mut self, schema: Value) -> Self {
        self.config_schema = Some(schema);
        self
    }

    /// Any other index field (`sandbox`, `limits`, `network`, …).
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// The check: `fn(Config, RunTrace) -> CheckResult` (or `bool`, or a
    /// `Result` of either). `Config`'s schema becomes `configSchema`.
    ///
    /// It runs on the async workers: keep it quick (zero-LLM checks are).
    pub fn evaluate<F, C, R>(mut self, check: F) -> Self
    where
        F: Fn(C, RunTrace) -> R + Send + Sync + 'static,
        C: DeserializeOwned + JsonSchema + 'static,
        R: IntoCheckResult,
    {
        if self.config_schema.is_none() {
            self.config_schema = Some(input_schema_for::<C>());
        }
        self.evaluate = Some(Arc::new(move |config, trace| {
            let config = match read_typed::<C>(Value::Object(config)) {
                Ok(config) => config,
                Err(e) => return CheckOutcome::BadConfig(e.to_string()),
            };
            match check(config, RunTrace::from_value(trace)).into_check_result() {
                Ok(result) => CheckOutcome::Result(result),
                Err(e) => CheckOutcome::Failed(e),
            }
        }));
        self
    }
}
