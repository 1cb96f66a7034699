//! The test harness: tools and checks called in-process as the service
//! would, with files and pauses on an in-process dev runtime.

use std::time::Duration;

use kindgi::protocol::{ErrorCode, Response};
use kindgi::testing::{TestContext, TestPack};
use kindgi::{
    CheckResult, Guardrail, Pack, Pause, Reply, RunTrace, StoreOutcome, Tool, ToolContext,
    ToolError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Greet {
    #[schemars(length(min = 1))]
    name: String,
    #[serde(default = "hello")]
    greeting: String,
}

fn hello() -> String {
    "Hello".to_owned()
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Greeting {
    text: String,
}

async fn greet(input: Greet, ctx: ToolContext) -> Result<Greeting, ToolError> {
    let key = ctx.secret("SIGN").map(|s| s.expose().len()).unwrap_or(0);
    Ok(Greeting {
        text: format!(
            "{}, {} ({} {key})",
            input.greeting,
            input.name,
            ctx.tenant_id()
        ),
    })
}

async fn wait_forever(_input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let reason = ctx.cancelled().await;
    Ok(json!({"cancelled": reason.as_str()}))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Decision {
    approved: bool,
}

async fn approve(_input: Value, ctx: ToolContext) -> Result<Reply<Decision>, ToolError> {
    let _link = ctx.wait_link()?;
    Ok(Reply::Pause(
        Pause::new()
            .name("approval")
            .timeout(Duration::from_secs(60)),
    ))
}

#[derive(Serialize, JsonSchema)]
struct StoreOutput {
    files: Vec<kindgi::FileValue>,
}

async fn store(_input: Value, ctx: ToolContext) -> Result<StoreOutput, ToolError> {
    let text = b"quarterly report".to_vec();
    match ctx.files()?.store(text, "report.txt", "text/plain").await? {
        StoreOutcome::File(file) => Ok(StoreOutput { files: vec![file] }),
        StoreOutcome::NotStored(why) => Err(ToolError::new("NotStored", format!("{why:?}"))),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Limit {
    #[serde(default)]
    max: usize,
}

fn short(config: Limit, trace: RunTrace) -> CheckResult {
    if trace.output_text().unwrap_or("").len() <= config.max {
        CheckResult::pass()
    } else {
        CheckResult::fail("too long")
    }
}

fn pack() -> Pack {
    Pack::new()
        .tool(Tool::new("t.greet").description("Greets.").handler(greet))
        .tool(
            Tool::new("t.wait")
                .description("Waits until cancelled.")
                .input_schema(json!({"type": "object"}))
                .handler(wait_forever),
        )
        .tool(
            Tool::new("t.approve")
                .description("Pauses for approval.")
                .input_schema(json!({"type": "object"}))
                .handler(approve),
        )
        .tool(
            Tool::new("t.store")
                .description("Stores a file.")
                .input_schema(json!({"type": "object"}))
                .stores_files()
                .handler(store),
        )
        .guardrail(
            Guardrail::new("t.short")
                .name("Short")
                .on_violation(kindgi::OnViolation::Halt)
                .evaluate(short),
        )
}

#[tokio::test]
async fn calls_a_tool_with_defaults_and_context() {
    let pack = TestPack::new(pack()).expect("valid pack");
    let answer = pack
        .call(
            "t.greet",
            json!({"name": "Ana"}),
            TestContext::new().tenant("acme").secret("SIGN", "abc"),
        )
        .await;
    assert_eq!(
        answer.output().expect("result"),
        json!({"text": "Hello, Ana (acme 3)"})
    );
}

#[tokio::test]
async fn validates_input_as_the_service_would() {
    let pack = TestPack::new(pack()).expect("valid pack");
    let answer = pack
        .call("t.greet", json!({"name": ""}), TestContext::new())
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::InputValidationFailed);
    let issues = error.issues.as_ref().expect("issues");
    assert_eq!(issues[0].message, "must NOT have fewer than 1 characters");
}

#[tokio::test]
async fn a_test_can_cancel_a_call() {
    let pack = TestPack::new(pack()).expect("valid pack");
    let context = TestContext::new();
    let cancel = context.cancellation();
    let call = pack.call("t.wait", json!({}), context);
    let (answer, ()) = tokio::join!(call, async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel(kindgi::CancelReason::Requested);
    });
    assert_eq!(
        answer.output().expect("result"),
        json!({"cancelled": "requested"})
    );
}

#[tokio::test]
async fn runs_a_check() {
    let pack = TestPack::new(pack()).expect("valid pack");
    let answer = pack.check("t.short", json!({"max": 3}), json!({"output": "long text"}));
    assert_eq!(
        answer.response,
        Response::check_result(CheckResult::fail("too long"))
    );
}

#[tokio::test]
async fn pauses_without_a_runtime_are_not_available() {
    let pack = TestPack::new(pack()).expect("valid pack");
    let answer = pack.call("t.approve", json!({}), TestContext::new()).await;
    assert_eq!(
        answer.error().map(|e| &e.code),
        Some(&ErrorCode::PauseNotAvailable)
    );
}

#[tokio::test]
async fn stores_files_and_pauses_on_the_dev_runtime() {
    let pack = TestPack::new(pack())
        .expect("valid pack")
        .with_dev_runtime()
        .await
        .expect("runtime");
    let stored = pack
        .call(
            "t.store",
            json!({}),
            TestContext::new().idempotency_key("k1"),
        )
        .await
        .output()
        .expect("stored");
    assert_eq!(
        stored["files"][0]["contentType"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(stored["files"][0]["size"], 16);

    let answer = pack.call("t.approve", json!({}), TestContext::new()).await;
    assert!(matches!(answer.response, Response::Pause(_)), "{answer:?}");
    let token = answer.wait_token.expect("a wait token");
    let refused = pack
        .complete_wait(&token, json!({"approved": "yes"}))
        .await
        .expect_err("the output schema guards the link");
    assert!(
        refused.starts_with("the wait link answered 400: "),
        "{refused}"
    );
    let record = pack
        .complete_wait(&token, json!({"approved": true}))
        .await
        .expect("a completed wait");
    assert_eq!(record.output, Some(json!({"approved": true})));
}

/// Uses a secret it requires, and the env value it requires.
async fn charge(_input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let key = ctx.require_secret("API_KEY")?;
    let region = ctx.require_env("REGION")?;
    Ok(json!({"keyLength": key.expose().len(), "region": region}))
}

#[tokio::test]
async fn a_missing_secret_is_named_never_shown() {
    let pack = TestPack::new(
        Pack::new().tool(
            Tool::new("t.charge")
                .description("Charges.")
                .input_schema(json!({"type": "object"}))
                .needs_secret("API_KEY")
                .needs_env("REGION", json!({"type": "string"}))
                .handler(charge),
        ),
    )
    .expect("valid pack");
    let missing = pack
        .call(
            "t.charge",
            json!({}),
            TestContext::new().env("REGION", "eu"),
        )
        .await;
    let error = missing.error().expect("an error").clone();
    assert_eq!(
        error
            .cause
            .as_ref()
            .map(|c| (c.name.as_str(), c.message.as_str())),
        Some((
            "MissingValue",
            "the call carries no secret \"API_KEY\": declare it with .needs_secret(\"API_KEY\") on the tool; locally, give it with `kindgi call --secret API_KEY=…` or the line `API_KEY=…` in .kindgi/secrets.env under `kindgi dev`, or TestContext::secret in a test"
        ))
    );
    let no_env = pack
        .call(
            "t.charge",
            json!({}),
            TestContext::new().secret("API_KEY", "sk-123"),
        )
        .await;
    let text = serde_json::to_string(&no_env.response).expect("json");
    assert!(!text.contains("sk-123"), "{text}");
    assert!(
        text.contains(r#"the call carries no env value \"REGION\""#),
        "{text}"
    );
    let fine = pack
        .call(
            "t.charge",
            json!({}),
            TestContext::new()
                .secret("API_KEY", "sk-123")
                .env("REGION", "eu"),
        )
        .await;
    assert_eq!(
        fine.output().expect("a result"),
        json!({"keyLength": 6, "region": "eu"})
    );
}

/// Answers the env values and process env it sees.
fn settings(_input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({
        "region": ctx.env("REGION"),
        "tier": ctx.env("TIER"),
        "database": kindgi::env::var("PACK_DATABASE_URL"),
    }))
}

#[tokio::test]
async fn env_defaults_and_process_env_as_a_deployment_gives_them() {
    let pack = TestPack::new(
        Pack::new().tool(
            Tool::new("t.settings")
                .description("Says what it sees.")
                .input_schema(json!({"type": "object"}))
                .needs_env("REGION", json!({"type": "string", "default": "eu"}))
                .needs_env("TIER", json!({"type": "string"}))
                .blocking_handler(settings),
        ),
    )
    .expect("valid pack");
    let defaults = pack.call("t.settings", json!({}), TestContext::new()).await;
    assert_eq!(
        defaults.output().expect("a result"),
        json!({"region": "eu", "tier": null, "database": null})
    );
    let given = pack
        .call(
            "t.settings",
            json!({}),
            TestContext::new()
                .env("REGION", "us")
                .env("TIER", "gold")
                .process_env("PACK_DATABASE_URL", "sqlite::memory:"),
        )
        .await;
    assert_eq!(
        given.output().expect("a result"),
        json!({"region": "us", "tier": "gold", "database": "sqlite::memory:"})
    );
    assert_eq!(kindgi::env::var("PACK_DATABASE_URL"), None);
}
