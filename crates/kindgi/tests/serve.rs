//! `kindgi::serve`, the pack service as a library: served on a listener of
//! the test's own runtime, stopped by the test's own shutdown future.

mod common;

use kindgi::{Pack, ServiceConfig, Token, Tool, ToolContext, ToolError};
use serde_json::{Value, json};

async fn echo(input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(input)
}

fn pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.echo")
            .description("Echoes its input.")
            .input_schema(json!({"type": "object"}))
            .handler(echo),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_until_its_shutdown_future_resolves() {
    let served = common::Served::start(pack, "library-token").await;
    let url = served.url.clone();

    let http = reqwest::Client::new();
    let health = http
        .get(format!("{url}/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    let refused = http
        .get(format!("{url}/v1/info"))
        .send()
        .await
        .expect("info");
    assert_eq!(refused.status(), 401);
    let info: Value = http
        .get(format!("{url}/v1/info"))
        .header("kindgi-pack-token", "library-token")
        .send()
        .await
        .expect("info")
        .json()
        .await
        .expect("JSON");
    assert_eq!(info["packId"], "acme");
    let answer = served
        .invoke("acme.echo", json!({"hello": "world"}), None)
        .await;
    assert_eq!(answer["kind"], "result", "{answer}");
    assert_eq!(answer["output"], json!({"hello": "world"}));

    assert_eq!(served.stop().await, Ok(()));
}

#[tokio::test]
async fn a_boot_problem_is_its_error() {
    let token = Token::new("library-token").expect("a token");
    let config = ServiceConfig::new("/nonexistent/index.json", token);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let error = kindgi::serve(pack(), config, listener, std::future::pending())
        .await
        .expect_err("no index to serve");
    assert_eq!(error.problems().len(), 1);
    assert!(
        error.problems()[0].starts_with("Cannot read the pack index: /nonexistent/index.json: "),
        "{error}"
    );
}
