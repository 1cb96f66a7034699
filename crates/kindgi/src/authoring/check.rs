//! Declaring a guardrail whose check is pack code.

use std::sync::Arc;

use kindgi_protocol::CheckResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::numbers::{TypedRefusal, read_typed};
use super::trace::RunTrace;
use crate::{GuardrailKind, OnViolation, Severity, SourceFile, ToolError, input_schema_for};

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
    BadConfig(TypedRefusal),
    /// It threw.
    Failed(ToolError),
}

/// A guardrail whose check runs in this pack.
///
/// ```
/// use kindgi::{CheckResult, Guardrail, OnViolation, RunTrace, Severity};
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
/// let guardrail = Guardrail::new("acme.min-length")
///     .check_id("acme.checks.min-length")
///     .name("Minimum length")
///     .on_violation(OnViolation::Halt)
///     .severity(Severity::Error)
///     .evaluate(min_length);
/// assert_eq!(guardrail.resolved_check_id(), "acme.checks.min-length");
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until it is used"]
pub struct Guardrail {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) check_id: Option<String>,
    pub(crate) kind: GuardrailKind,
    pub(crate) on_violation: Option<OnViolation>,
    pub(crate) severity: Option<Severity>,
    pub(crate) scope: Option<Map<String, Value>>,
    /// The config schema given with [`Guardrail::config_schema`]: it wins
    /// over the check's, whichever call comes first.
    pub(crate) config_schema: Option<Value>,
    /// The schema of the check's config type.
    pub(crate) derived_config_schema: Option<Value>,
    pub(crate) config: Option<Value>,
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
    /// A guardrail with this id, declared in the file that calls this (its
    /// `checkModulePath`; see [`SourceFile`]). Its `kind` defaults to
    /// `zero-llm`.
    #[track_caller]
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: None,
            check_id: None,
            kind: GuardrailKind::ZeroLlm,
            on_violation: None,
            severity: None,
            scope: None,
            config_schema: None,
            derived_config_schema: None,
            config: None,
            extra: Map::new(),
            source: SourceFile::caller(),
            evaluate: None,
        }
    }

    /// The guardrail's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file the guardrail is declared in, when it isn't the one that
    /// calls `new` (e.g. `.source(kindgi::here!())` for a file outside
    /// `src/`).
    pub fn source(mut self, source: SourceFile) -> Self {
        self.source = source;
        self
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

    /// How the guardrail is checked (default [`GuardrailKind::ZeroLlm`]).
    pub fn kind(mut self, kind: GuardrailKind) -> Self {
        self.kind = kind;
        self
    }

    /// What a violation does: the index's `action: {"on-violation": …}`.
    /// Required.
    pub fn on_violation(mut self, action: OnViolation) -> Self {
        self.on_violation = Some(action);
        self
    }

    /// How serious a violation is.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }

    /// When the guardrail applies.
    pub fn scope(mut self, scope: Map<String, Value>) -> Self {
        self.scope = Some(scope);
        self
    }

    /// The config schema the index carries: the one given, else the
    /// check's config type's.
    pub(crate) fn effective_config_schema(&self) -> Option<&Value> {
        self.config_schema
            .as_ref()
            .or(self.derived_config_schema.as_ref())
    }

    /// The config the check runs with (the index's `config`).
    pub fn config(mut self, config: Value) -> Self {
        self.config = Some(config);
        self
    }

    /// The config schema, instead of the one the check's config type
    /// gives. It stands whichever of this and [`Guardrail::evaluate`] is
    /// called first.
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
        self.derived_config_schema = Some(input_schema_for::<C>());
        self.evaluate = Some(Arc::new(move |config, trace| {
            let config = match read_typed::<C>(Value::Object(config)) {
                Ok(config) => config,
                Err(refusal) => return CheckOutcome::BadConfig(refusal),
            };
            match check(config, RunTrace::from_value(trace)).into_check_result() {
                Ok(result) => CheckOutcome::Result(result),
                Err(e) => CheckOutcome::Failed(e),
            }
        }));
        self
    }
}
