//! `1.0` is the number 1 in JSON: a typed handler's integer field takes it,
//! as a JavaScript handler would, for tools (async and blocking) and checks.

use kindgi::protocol::{ErrorCode, Response};
use kindgi::testing::{TestContext, TestPack};
use kindgi::{CheckResult, Guardrail, Pack, RunTrace, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Count {
    times: u32,
    offset: i64,
    ratio: f64,
}

#[derive(Serialize, JsonSchema)]
struct Counted {
    total: f64,
}

fn count(input: Count) -> Counted {
    Counted {
        total: f64::from(input.times) * input.ratio + input.offset as f64,
    }
}

async fn count_async(input: Count, _ctx: ToolContext) -> Result<Counted, ToolError> {
    Ok(count(input))
}

fn count_blocking(input: Count, _ctx: ToolContext) -> Result<Counted, ToolError> {
    Ok(count(input))
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct MinLength {
    min_length: usize,
}

fn min_length(config: MinLength, _trace: RunTrace) -> CheckResult {
    if config.min_length == 3 {
        CheckResult::pass()
    } else {
        CheckResult::fail("not 3")
    }
}

fn pack() -> TestPack {
    let pack = Pack::new()
        .tool(
            Tool::new("n.async")
                .description("Counts.")
                .handler(count_async),
        )
        .tool(
            Tool::new("n.blocking")
                .description("Counts, blocking.")
                .blocking_handler(count_blocking),
        )
        .guardrail(
            Guardrail::new("n.min")
                .name("Minimum")
                .on_violation(kindgi::OnViolation::Halt)
                .evaluate(min_length),
        );
    TestPack::new(pack).expect("a valid pack")
}

#[tokio::test]
async fn integral_floats_reach_typed_integers() {
    let pack = pack();
    for tool in ["n.async", "n.blocking"] {
        let answer = pack
            .call(
                tool,
                json!({"times": 3.0, "offset": -2e1, "ratio": 2.0}),
                TestContext::new(),
            )
            .await;
        assert_eq!(answer.output().expect("a result"), json!({"total": -14.0}));
    }
    let answer = pack.check("n.min", json!({"minLength": 3.0}), Value::Null);
    assert_eq!(answer.response, Response::check_result(CheckResult::pass()));
}

#[tokio::test]
async fn a_fraction_is_still_not_an_integer() {
    let answer = pack()
        .call(
            "n.async",
            json!({"times": 1.5, "offset": 0, "ratio": 1}),
            TestContext::new(),
        )
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::InputValidationFailed);
    let issues = error.issues.as_ref().expect("issues");
    assert_eq!(issues[0].instance_path, "/times");
    assert_eq!(issues[0].message, "must be integer");
}
