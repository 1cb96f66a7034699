//! Tool calls (CONTRACT §4): results, every tool error with its text,
//! defaults, the context round trip, deadlines and disconnects.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{call_record, ctx, tool};
use crate::case::{
    Case, Checked, Feature, ensure, eq, error_code, json_eq, result, str_at, tool_error,
};
use crate::http::HttpRequest;
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Core;
    vec![
        Case::new(
            "invoke.echo.ok",
            Core,
            "conformance.echo {message: \"hi\"} answers the result {message: \"hi\"}.",
            echo_ok,
        ),
        Case::new(
            "invoke.version.match",
            Core,
            "tool.version 1.0.0 (the indexed one) runs the tool.",
            version_match,
        ),
        Case::new(
            "invoke.tool-not-in-pack",
            Core,
            "An unknown tool: tool-not-in-pack `This pack has no tool \"<id>\"` with toolId.",
            not_in_pack,
        ),
        Case::new(
            "invoke.tool-version-mismatch",
            Core,
            "tool.version 9.9.9: tool-version-mismatch `Tool \"<id>\" is 1.0.0 in this pack; the caller asked for 9.9.9`.",
            version_mismatch,
        ),
        Case::new(
            "invoke.input.required",
            Core,
            "Input {}: input-validation-failed with an issue keyword required, params.missingProperty message, `must have required property 'message'`.",
            input_required,
        ),
        Case::new(
            "invoke.input.additional",
            Core,
            "An extra property: an issue keyword additionalProperties, params.additionalProperty extra, `must NOT have additional properties`.",
            input_additional,
        ),
        Case::new(
            "invoke.input.type",
            Core,
            "message 5: an issue at /message, keyword type, params.type string, `must be string`.",
            input_type,
        ),
        Case::new(
            "invoke.input.min-length",
            Core,
            "message \"\": an issue at /message, keyword minLength, `must NOT have fewer than 1 characters`.",
            input_min_length,
        ),
        Case::new(
            "invoke.bad-output",
            Core,
            "conformance.bad-output: output-validation-failed with its text and an issue at /message.",
            bad_output,
        ),
        Case::new(
            "invoke.throws",
            Core,
            "conformance.throws: handler-throw `Handler for tool \"<id>\" threw: <Name>: boom`, cause {name, message, stack}.",
            throws,
        ),
        Case::new(
            "invoke.defaults",
            Core,
            "conformance.defaults {name: \"a\"} returns {name, greeting: \"Hello\", options: {loud: false}}: defaults filled, nested too.",
            defaults,
        ),
        Case::new(
            "invoke.defaults.given",
            Core,
            "conformance.defaults keeps values given instead of the defaults.",
            defaults_given,
        ),
        Case::new(
            "invoke.context.full",
            Core,
            "conformance.context returns every ctx field sent: tenantId, runId, projectId, orgId, requestId, idempotencyKey, env, secrets, config, settings.",
            context_full,
        ),
        Case::new(
            "invoke.context.minimal",
            Core,
            "conformance.context with only tenantId and runId: env, secrets and config {}, the optional fields absent.",
            context_minimal,
        ),
        Case::new(
            "invoke.context.extra-fields",
            Core,
            "Unknown extra ctx fields are accepted (a newer runtime).",
            context_extra,
        ),
        Case::new(
            "invoke.noisy",
            Core,
            "conformance.noisy answers exactly {ok: true}; its lines appear on the service's stdout and stderr.",
            noisy,
        ),
        Case::new(
            "invoke.sleep.ok",
            Core,
            "conformance.sleep {ms: 10} answers {slept: 10}.",
            sleep_ok,
        ),
        Case::new(
            "invoke.deadline",
            Core,
            "kindgi-timeout-ms 300 on a 5 s sleep: deadline-exceeded `<id> passed its deadline`, answered in well under 3 s.",
            deadline,
        ),
        Case::new(
            "invoke.deadline.invalid-header",
            Core,
            "kindgi-timeout-ms \"soon\" is ignored (default 120000): a short sleep answers its result.",
            deadline_invalid,
        ),
        Case::new(
            "invoke.disconnect.cancelled",
            Core,
            "The caller closing the connection mid-sleep ends the call cancelled: a call record with outcome cancelled.",
            disconnect,
        ),
    ]
}

async fn call(s: &Session, id: &str, input: Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &tool(id, input, ctx(&s.unique("invoke"))))
        .await
}

async fn echo_ok(s: Session) -> Checked {
    result(
        &call(&s, "conformance.echo", json!({"message": "hi"})).await?,
        &json!({"message": "hi"}),
    )
}

async fn version_match(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let mut message = tool(
        "conformance.echo",
        json!({"message": "v"}),
        ctx(&s.unique("invoke")),
    );
    message["tool"]["version"] = json!("1.0.0");
    result(
        &s.invoke(&service, &message).await?,
        &json!({"message": "v"}),
    )
}

async fn not_in_pack(s: Session) -> Checked {
    let answer = call(&s, "conformance.nope", json!({})).await?;
    tool_error(
        &answer,
        "tool-not-in-pack",
        "conformance.nope",
        "This pack has no tool \"conformance.nope\"",
    )
}

async fn version_mismatch(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let mut message = tool(
        "conformance.echo",
        json!({"message": "v"}),
        ctx(&s.unique("invoke")),
    );
    message["tool"]["version"] = json!("9.9.9");
    let answer = s.invoke(&service, &message).await?;
    tool_error(
        &answer,
        "tool-version-mismatch",
        "conformance.echo",
        "Tool \"conformance.echo\" is 1.0.0 in this pack; the caller asked for 9.9.9",
    )
}

/// An input-validation-failed answer for echo with an issue that has
/// `fields` (each compared exactly).
async fn echo_issue(s: &Session, input: Value, fields: Value) -> Checked {
    let answer = call(s, "conformance.echo", input).await?;
    tool_error(
        &answer,
        "input-validation-failed",
        "conformance.echo",
        "Tool \"conformance.echo\" input failed validation",
    )?;
    has_issue(&answer, &fields)
}

/// `answer.issues` has an issue with every field of `fields`.
fn has_issue(answer: &Value, fields: &Value) -> Checked {
    let issues = answer
        .get("issues")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let want = fields.as_object().cloned().unwrap_or_default();
    let found = issues
        .iter()
        .any(|issue| want.iter().all(|(k, v)| issue.get(k) == Some(v)));
    ensure(found, || {
        format!(
            "issues: expected one with {fields}, got {}",
            Value::from(issues.clone())
        )
    })
}

async fn input_required(s: Session) -> Checked {
    echo_issue(
        &s,
        json!({}),
        json!({"instancePath": "", "keyword": "required", "params": {"missingProperty": "message"}, "message": "must have required property 'message'"}),
    )
    .await
}

async fn input_additional(s: Session) -> Checked {
    echo_issue(
        &s,
        json!({"message": "hi", "extra": 1}),
        json!({"instancePath": "", "keyword": "additionalProperties", "params": {"additionalProperty": "extra"}, "message": "must NOT have additional properties"}),
    )
    .await
}

async fn input_type(s: Session) -> Checked {
    echo_issue(
        &s,
        json!({"message": 5}),
        json!({"instancePath": "/message", "keyword": "type", "params": {"type": "string"}, "message": "must be string"}),
    )
    .await
}

async fn input_min_length(s: Session) -> Checked {
    echo_issue(
        &s,
        json!({"message": ""}),
        json!({"instancePath": "/message", "keyword": "minLength", "params": {"limit": 1}, "message": "must NOT have fewer than 1 characters"}),
    )
    .await
}

async fn bad_output(s: Session) -> Checked {
    let answer = call(&s, "conformance.bad-output", json!({})).await?;
    tool_error(
        &answer,
        "output-validation-failed",
        "conformance.bad-output",
        "Tool \"conformance.bad-output\" handler produced output that failed validation",
    )?;
    has_issue(
        &answer,
        &json!({"instancePath": "/message", "keyword": "type", "message": "must be string"}),
    )
}

async fn throws(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    // A failing call with secrets: the sentinel sweep checks they stay unlogged.
    let context = json!({"tenantId": "t1", "runId": s.unique("throws"), "secrets": {"API_KEY": s.sentinel("throws-secret")}});
    let answer = s
        .invoke(&service, &tool("conformance.throws", json!({}), context))
        .await?;
    error_code(&answer, "handler-throw")?;
    eq("toolId", "conformance.throws", str_at(&answer, "/toolId")?)?;
    let name = str_at(&answer, "/cause/name")?;
    let message = str_at(&answer, "/cause/message")?;
    str_at(&answer, "/cause/stack")?;
    ensure(message.contains("boom"), || {
        format!("cause.message: expected it to contain \"boom\", got {message:?}")
    })?;
    eq(
        "message",
        format!("Handler for tool \"conformance.throws\" threw: {name}: {message}"),
        str_at(&answer, "/message")?.to_owned(),
    )
}

async fn defaults(s: Session) -> Checked {
    let answer = call(&s, "conformance.defaults", json!({"name": "a"})).await?;
    result(
        &answer,
        &json!({"name": "a", "greeting": "Hello", "options": {"loud": false}}),
    )
}

async fn defaults_given(s: Session) -> Checked {
    let input = json!({"name": "b", "greeting": "Hi", "options": {"loud": true}});
    result(
        &call(&s, "conformance.defaults", input.clone()).await?,
        &input,
    )
}

async fn context_full(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let secret = s.sentinel("secret");
    let run = s.unique("context");
    let sent = json!({
        "tenantId": "t1",
        "runId": run,
        "projectId": "p1",
        "orgId": "o1",
        "requestId": "call_1",
        "idempotencyKey": "f6c8a374-b63c-5453-8320-1ca9c067447a",
        "env": {"REGION": "eu"},
        "secrets": {"API_KEY": secret},
        "config": {"x": 1},
        "settings": {"tone": {"formal": true}}
    });
    let answer = s
        .invoke(
            &service,
            &tool("conformance.context", json!({}), sent.clone()),
        )
        .await?;
    result(&answer, &sent)
}

async fn context_minimal(s: Session) -> Checked {
    let run = s.unique("context");
    let answer = call_ctx(&s, ctx(&run)).await?;
    result(
        &answer,
        &json!({"tenantId": "t1", "runId": run, "env": {}, "secrets": {}, "config": {}}),
    )
}

async fn call_ctx(s: &Session, context: Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &tool("conformance.context", json!({}), context))
        .await
}

async fn context_extra(s: Session) -> Checked {
    let run = s.unique("context");
    let answer = call_ctx(
        &s,
        json!({"tenantId": "t1", "runId": run, "futureField": {"x": 1}, "anotherOne": 2}),
    )
    .await?;
    eq(
        "kind",
        Some("result"),
        answer.get("kind").and_then(Value::as_str),
    )?;
    eq(
        "output.runId",
        Some(run.as_str()),
        answer.pointer("/output/runId").and_then(Value::as_str),
    )
}

async fn noisy(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let answer = s
        .invoke(
            &service,
            &tool("conformance.noisy", json!({}), ctx(&s.unique("noisy"))),
        )
        .await?;
    result(&answer, &json!({"ok": true}))?;
    let output = service.output();
    for line in [
        "noisy: a line on stdout",
        "{\"kind\":\"result\",\"v\":2,\"output\":{\"hijacked\":true}}",
    ] {
        output
            .wait_for_stdout(|l| l.contains(line), super::SOON)
            .await
            .ok_or_else(|| format!("expected {line:?} on stdout, got none"))?;
    }
    output
        .wait_for_stderr(|l| l.contains("noisy: a line on stderr"), super::SOON)
        .await
        .ok_or("expected \"noisy: a line on stderr\" on stderr, got none")?;
    Ok(())
}

async fn sleep_ok(s: Session) -> Checked {
    result(
        &call(&s, "conformance.sleep", json!({"ms": 10})).await?,
        &json!({"slept": 10}),
    )
}

async fn deadline(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let started = Instant::now();
    let message = tool(
        "conformance.sleep",
        json!({"ms": 5000}),
        ctx(&s.unique("deadline")),
    );
    let answer = s
        .invoke_with(&service, &message, &[("kindgi-timeout-ms", "300")])
        .await?;
    let took = started.elapsed();
    tool_error(
        &answer,
        "deadline-exceeded",
        "conformance.sleep",
        "conformance.sleep passed its deadline",
    )?;
    ensure(took < Duration::from_millis(3000), || {
        format!(
            "expected the answer in well under 3 s, got it after {} ms",
            took.as_millis()
        )
    })
}

async fn deadline_invalid(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let message = tool(
        "conformance.sleep",
        json!({"ms": 20}),
        ctx(&s.unique("deadline")),
    );
    let answer = s
        .invoke_with(&service, &message, &[("kindgi-timeout-ms", "soon")])
        .await?;
    result(&answer, &json!({"slept": 20}))
}

async fn disconnect(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let run = s.unique("disconnect");
    let request = service.authed(HttpRequest::post("/v1/invoke")).json(&tool(
        "conformance.sleep",
        json!({"ms": 5000}),
        ctx(&run),
    ));
    let started = Instant::now();
    // Over h2c the stream is reset and the connection stays open until
    // the record is in: the stream's end alone must cancel the call.
    let hangup = s
        .transport()
        .send_then_disconnect(service.addr(), &request, Duration::from_millis(300))
        .await?;
    let record = call_record(&service, &run).await;
    drop(hangup);
    let record = record?;
    eq(
        "outcome",
        Some("cancelled"),
        record.get("outcome").and_then(Value::as_str),
    )?;
    eq(
        "id",
        Some("conformance.sleep"),
        record.get("id").and_then(Value::as_str),
    )?;
    let took = started.elapsed();
    ensure(took < Duration::from_millis(4000), || {
        format!(
            "expected the call cancelled soon after the disconnect, got its record after {} ms",
            took.as_millis()
        )
    })?;
    json_eq(
        "level",
        &json!("warn"),
        record.get("level").unwrap_or(&Value::Null),
    )
}
