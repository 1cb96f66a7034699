//! Guardrail checks (CONTRACT §4): results, config validation, unknown
//! and throwing checks.

use serde_json::{Value, json};

use super::{check, run_trace};
use crate::case::{Case, Checked, Feature, ensure, eq, error_code, error_message, json_eq, str_at};
use crate::session::{Profile, Session};

const MIN_LENGTH: &str = "conformance.checks.min-length";

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Core;
    vec![
        Case::new(
            "check.pass",
            Core,
            "min-length {minLength: 2} on output \"hello\" answers check-result {passed: true}; unknown trace fields are accepted.",
            pass,
        ),
        Case::new(
            "check.fail",
            Core,
            "min-length {minLength: 2} on output \" a \" answers {passed: false, reason: \"too short\"}.",
            fail,
        ),
        Case::new(
            "check.config-default",
            Core,
            "min-length with config {} uses minLength 1: output \"  \" fails too short.",
            config_default,
        ),
        Case::new(
            "check.bad-config",
            Core,
            "min-length {minLength: -1}: input-validation-failed `Check \"conformance.checks.min-length\" config failed validation at /minLength: must be >= 0`, with checkId and issues.",
            bad_config,
        ),
        Case::new(
            "check.not-in-pack",
            Core,
            "An unknown check: check-not-in-pack `This pack has no check \"<id>\"` with checkId.",
            not_in_pack,
        ),
        Case::new(
            "check.throws",
            Core,
            "conformance.checks.throws: handler-throw `Check \"<id>\" evaluate() threw: <Name>: check boom` with checkId and cause.",
            throws,
        ),
    ]
}

async fn run(s: &Session, id: &str, config: Value, trace: Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &check(id, config, trace)).await
}

fn check_result(answer: &Value, result: &Value) -> Checked {
    json_eq(
        "answer",
        &json!({"v": 2, "kind": "check-result", "result": result}),
        answer,
    )
}

async fn pass(s: Session) -> Checked {
    let mut trace = run_trace(&s.unique("check"), "hello");
    trace["aFieldFromTheFuture"] = json!([1, 2]);
    let answer = run(&s, MIN_LENGTH, json!({"minLength": 2}), trace).await?;
    check_result(&answer, &json!({"passed": true}))
}

async fn fail(s: Session) -> Checked {
    let answer = run(
        &s,
        MIN_LENGTH,
        json!({"minLength": 2}),
        run_trace(&s.unique("check"), " a "),
    )
    .await?;
    check_result(&answer, &json!({"passed": false, "reason": "too short"}))
}

async fn config_default(s: Session) -> Checked {
    let answer = run(
        &s,
        MIN_LENGTH,
        json!({}),
        run_trace(&s.unique("check"), "  "),
    )
    .await?;
    check_result(&answer, &json!({"passed": false, "reason": "too short"}))
}

fn check_id(answer: &Value, id: &str) -> Checked {
    eq("checkId", id, str_at(answer, "/checkId")?)
}

async fn bad_config(s: Session) -> Checked {
    let answer = run(
        &s,
        MIN_LENGTH,
        json!({"minLength": -1}),
        run_trace(&s.unique("check"), "hello"),
    )
    .await?;
    error_message(
        &answer,
        "input-validation-failed",
        "Check \"conformance.checks.min-length\" config failed validation at /minLength: must be >= 0",
    )?;
    check_id(&answer, MIN_LENGTH)?;
    let issues = answer
        .get("issues")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let found = issues.iter().any(|i| {
        i.get("instancePath") == Some(&json!("/minLength"))
            && i.get("keyword") == Some(&json!("minimum"))
            && i.get("message") == Some(&json!("must be >= 0"))
    });
    ensure(found, || {
        format!(
            "issues: expected one at /minLength, keyword minimum, `must be >= 0`, got {}",
            Value::from(issues.clone())
        )
    })
}

async fn not_in_pack(s: Session) -> Checked {
    let answer = run(
        &s,
        "conformance.checks.nope",
        json!({}),
        run_trace(&s.unique("check"), "x"),
    )
    .await?;
    error_message(
        &answer,
        "check-not-in-pack",
        "This pack has no check \"conformance.checks.nope\"",
    )?;
    check_id(&answer, "conformance.checks.nope")
}

async fn throws(s: Session) -> Checked {
    let id = "conformance.checks.throws";
    let answer = run(&s, id, json!({}), run_trace(&s.unique("check"), "x")).await?;
    error_code(&answer, "handler-throw")?;
    check_id(&answer, id)?;
    let name = str_at(&answer, "/cause/name")?;
    let message = str_at(&answer, "/cause/message")?;
    eq("cause.message", "check boom", message)?;
    eq(
        "message",
        format!("Check \"{id}\" evaluate() threw: {name}: check boom"),
        str_at(&answer, "/message")?.to_owned(),
    )
}
