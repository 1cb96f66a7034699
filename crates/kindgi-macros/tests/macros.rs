//! `#[kindgi_macros::tool]` and `#[kindgi_macros::check]` on real functions:
//! the generated builders, seen through the pack's index.

use kindgi::index::{PackConfig, Pins, build_index};
use kindgi::protocol::{GuardrailEntry, PackIndex, ToolEntry};
use kindgi::{CheckResult, Pack, Pause, Reply, RunTrace, ToolContext, ToolError};
use kindgi_macros::{check, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    message: String,
}

#[derive(Serialize, JsonSchema)]
struct EchoOutput {
    message: String,
}

/// Echo the message back.
///
/// The same message, unchanged.
#[tool(
    id = "acme.echo",
    version = "1.2.0",
    mutating = false,
    needs_approval_when_unattended = true
)]
async fn echo(input: EchoInput, _ctx: ToolContext) -> Result<EchoOutput, ToolError> {
    Ok(EchoOutput {
        message: input.message,
    })
}

#[derive(Deserialize, JsonSchema)]
struct Numbers {
    values: Vec<i64>,
}

#[derive(Serialize, JsonSchema)]
struct Total {
    total: i64,
}

/// Not what the model reads.
#[tool(
    id = "acme.sum",
    blocking,
    mutating,
    stores_files,
    reads_files,
    description = "Add the numbers up."
)]
pub(crate) fn sum(input: Numbers, _ctx: ToolContext) -> Result<Total, std::io::Error> {
    Ok(Total {
        total: input.values.iter().sum(),
    })
}

#[derive(Deserialize, JsonSchema)]
struct Ask {
    amount: u32,
}

#[derive(Serialize, JsonSchema)]
struct Decision {
    approved: bool,
}

/// Approve small amounts now, wait for a person otherwise.
#[tool(id = "acme.approve")]
async fn approve(input: Ask, _ctx: ToolContext) -> Result<Reply<Decision>, ToolError> {
    if input.amount < 100 {
        Ok(Reply::Done(Decision { approved: true }))
    } else {
        Ok(Reply::Pause(Pause::new()))
    }
}

/// Would pause, but says it doesn't.
#[tool(id = "acme.never-pauses", pauses = false)]
async fn never_pauses(input: Ask, ctx: ToolContext) -> Result<Reply<Decision>, ToolError> {
    approve(input, ctx).await
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct MinLength {
    min_length: usize,
}

#[check(
    id = "acme.min-length",
    check_id = "acme.checks.min-length",
    name = "Minimum length",
    on_violation = "halt",
    severity = "error",
    kind = "zero-llm"
)]
fn min_length(config: MinLength, trace: RunTrace) -> CheckResult {
    let len = trace.output_text().unwrap_or("").trim().chars().count();
    if len >= config.min_length {
        CheckResult::pass()
    } else {
        CheckResult::fail("too short")
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoConfig {}

/// Non-empty output.
///
/// Passes when the run's output is text that isn't empty.
#[check(id = "acme.non-empty", on_violation = "log-only")]
pub(crate) fn non_empty(_config: NoConfig, trace: RunTrace) -> Result<bool, ToolError> {
    Ok(trace.output_text().is_some_and(|t| !t.is_empty()))
}

fn index() -> PackIndex {
    let pack = Pack::new()
        .tool(echo_tool().needs_secret("API_KEY"))
        .tool(sum_tool())
        .tool(approve_tool())
        .tool(never_pauses_tool())
        .guardrail(min_length_guardrail())
        .guardrail(non_empty_guardrail());
    let config = PackConfig {
        id: "acme".to_owned(),
        version: "1.0.0".to_owned(),
        env: None,
    };
    let pins = Pins {
        artifact_version: "1.0.0+test".to_owned(),
        published_at: "2025-01-01T00:00:00.000Z".to_owned(),
    };
    match build_index(&pack, &config, &pins) {
        Ok(index) => index,
        Err(problems) => panic!("the pack doesn't index: {problems:#?}"),
    }
}

fn tool_entry(index: &PackIndex, id: &str) -> ToolEntry {
    let found = index.tools.iter().find(|t| t.id == id);
    found.cloned().unwrap_or_else(|| panic!("no tool {id}"))
}

fn guardrail_entry(index: &PackIndex, id: &str) -> GuardrailEntry {
    let found = index.guardrails.iter().find(|g| g.id == id);
    found
        .cloned()
        .unwrap_or_else(|| panic!("no guardrail {id}"))
}

#[test]
fn the_generated_functions_build_the_primitives() {
    assert_eq!(echo_tool().id(), "acme.echo");
    assert_eq!(sum_tool().id(), "acme.sum");
    assert_eq!(min_length_guardrail().id(), "acme.min-length");
    assert_eq!(
        min_length_guardrail().resolved_check_id(),
        "acme.checks.min-length"
    );
    assert_eq!(non_empty_guardrail().resolved_check_id(), "acme.non-empty");
}

#[test]
fn the_functions_stay_as_written() {
    let _: fn(Numbers, ToolContext) -> Result<Total, std::io::Error> = sum;
    let config = MinLength { min_length: 3 };
    let trace = RunTrace::from_value(serde_json_value("hello"));
    assert!(min_length(config, trace).passed);
    let trace = RunTrace::from_value(serde_json_value(""));
    assert_eq!(non_empty(NoConfig {}, trace).ok(), Some(false));
}

/// `{"output": text}`, through the trace's own `Deserialize`.
fn serde_json_value(text: &str) -> serde_json::Value {
    serde_json::json!({ "output": text })
}

#[test]
fn an_async_tool_in_the_index() {
    let echo = tool_entry(&index(), "acme.echo");
    assert_eq!(
        echo.description.as_deref(),
        Some("Echo the message back.\n\nThe same message, unchanged.")
    );
    assert_eq!(echo.version.as_deref(), Some("1.2.0"));
    assert_eq!(echo.mutating, Some(false));
    assert_eq!(echo.needs_approval_when_unattended, Some(true));
    assert!(!echo.pauses && !echo.stores_files && !echo.reads_files);
    assert_eq!(echo.module_path, "tests/macros.rs");
    assert!(
        echo.input["properties"]["message"].is_object(),
        "{}",
        echo.input
    );
    assert!(
        echo.output["properties"]["message"].is_object(),
        "{}",
        echo.output
    );
    let secrets = echo.needs_spec.as_ref().and_then(|n| n.get("secrets"));
    assert!(
        secrets.is_some_and(|s| s.get("API_KEY").is_some()),
        "{secrets:?}"
    );
}

#[test]
fn a_blocking_tool_in_the_index() {
    let sum = tool_entry(&index(), "acme.sum");
    assert_eq!(sum.description.as_deref(), Some("Add the numbers up."));
    assert_eq!(sum.version.as_deref(), Some("1.0.0"), "the pack's");
    assert_eq!(sum.mutating, Some(true));
    assert_eq!(sum.needs_approval_when_unattended, None);
    assert!(sum.stores_files && sum.reads_files);
    assert!(
        sum.input["properties"]["values"].is_object(),
        "{}",
        sum.input
    );
}

#[test]
fn pauses_follows_the_output_type_unless_given() {
    let index = index();
    assert!(tool_entry(&index, "acme.approve").pauses);
    assert!(!tool_entry(&index, "acme.never-pauses").pauses);
}

#[test]
fn guardrails_in_the_index() {
    let index = index();
    let min = guardrail_entry(&index, "acme.min-length");
    assert_eq!(min.check_id.as_deref(), Some("acme.checks.min-length"));
    assert_eq!(min.name.as_deref(), Some("Minimum length"));
    assert_eq!(min.kind, "zero-llm");
    assert_eq!(
        min.action.get("on-violation").and_then(|a| a.as_str()),
        Some("halt")
    );
    assert_eq!(min.severity.as_deref(), Some("error"));
    assert_eq!(min.check_module_path, "tests/macros.rs");
    let schema = min.config_schema.expect("a config schema");
    assert!(schema["properties"]["minLength"].is_object(), "{schema}");

    let non_empty = guardrail_entry(&index, "acme.non-empty");
    assert_eq!(
        non_empty
            .action
            .get("on-violation")
            .and_then(|a| a.as_str()),
        Some("log-only")
    );
    assert_eq!(non_empty.severity, None);
    assert_eq!(non_empty.name.as_deref(), Some("Non-empty output"));
    assert_eq!(non_empty.kind, "zero-llm");
}
