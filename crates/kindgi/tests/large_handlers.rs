//! A large call (a body of 256 KiB or more) has its input read and checked
//! off the async worker; its async handler then runs on the worker as any
//! call's does, where timers, spawned tasks, panics and the deadline work
//! alike. Served by `kindgi::serve` on 127.0.0.1, called over HTTP.

mod common;

use std::time::Duration;

use kindgi::{Pack, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const TOKEN: &str = "library-token";

/// What to do, and text to make the body as large as the test needs.
#[derive(Debug, Deserialize, JsonSchema)]
struct Errand {
    mode: String,
    #[expect(dead_code, reason = "there to make the body large")]
    filler: Vec<String>,
}

/// This thread's name.
fn thread() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned()
}

async fn errand(input: Errand, _ctx: ToolContext) -> Result<Value, ToolError> {
    let first = thread();
    match input.mode.as_str() {
        "answer" => Ok(json!({"first": first})),
        "wait" => {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let spawned = tokio::spawn(async { 2 }).await?;
            Ok(json!({"first": first, "after": thread(), "spawned": spawned}))
        }
        "panic" => panic!("at its first poll"),
        "panic-later" => {
            tokio::time::sleep(Duration::from_millis(1)).await;
            panic!("after a wait")
        }
        _ => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!({"first": first}))
        }
    }
}

fn pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.errand")
            .description("Does an errand.")
            .handler(errand),
    )
}

/// `acme.errand`'s input in `mode`, its body `large` (past 256 KiB) or
/// not.
fn errand_input(mode: &str, large: bool) -> Value {
    let lines = if large { 3000 } else { 3 };
    let filler: Vec<String> = (0..lines).map(|i| format!("{i:0>100}")).collect();
    json!({"mode": mode, "filler": filler})
}

/// Calls `acme.errand` in `mode`, its body `large` or not, with a deadline
/// of `timeout_ms`; the answer's JSON.
async fn call(served: &common::Served, mode: &str, large: bool, timeout_ms: u64) -> Value {
    served
        .invoke("acme.errand", errand_input(mode, large), Some(timeout_ms))
        .await
}

/// The error a handler's panic with `message` answers.
fn thrown(message: &str) -> Value {
    json!({
        "kind": "error",
        "v": 2,
        "code": "handler-throw",
        "message": format!("Handler for tool \"acme.errand\" threw: panic: {message}"),
        "toolId": "acme.errand",
        "cause": {
            "name": "panic",
            "message": message,
            "stack": format!("panic: {message}")
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_call_s_handler_runs_as_any_call_s() {
    let served = common::Served::start(pack, TOKEN).await;

    let answer = call(&served, "answer", true, 10_000).await;
    assert!(answer["output"]["first"].is_string(), "{answer}");

    // Not done at its first poll: its timer wakes it; it spawns a task.
    let answer = call(&served, "wait", true, 10_000).await;
    assert_eq!(answer["output"]["spawned"], 2, "{answer}");

    // A panic at the first poll, or after it, is the call's error.
    assert_eq!(
        call(&served, "panic", true, 10_000).await,
        thrown("at its first poll")
    );
    assert_eq!(
        call(&served, "panic-later", true, 10_000).await,
        thrown("after a wait")
    );

    // Still running at its deadline: the call ends there.
    let answer = call(&served, "late", true, 300).await;
    assert_eq!(
        answer,
        json!({
            "kind": "error",
            "v": 2,
            "code": "deadline-exceeded",
            "message": "acme.errand passed its deadline",
            "toolId": "acme.errand"
        })
    );

    // And the service goes on serving.
    let answer = call(&served, "answer", true, 10_000).await;
    assert!(answer["output"]["first"].is_string(), "{answer}");
    assert_eq!(served.stop().await, Ok(()));
}

#[tokio::test(flavor = "current_thread")]
async fn on_a_runtime_of_one_thread_a_large_call_s_handler_runs_in_place() {
    let served = common::Served::start(pack, TOKEN).await;
    let test_thread = thread();

    let answer = call(&served, "answer", true, 10_000).await;
    assert_eq!(answer["output"]["first"], test_thread, "{answer}");
    let answer = call(&served, "wait", true, 10_000).await;
    assert_eq!(
        answer["output"],
        json!({"first": test_thread, "after": test_thread, "spawned": 2})
    );
    assert_eq!(
        call(&served, "panic", true, 10_000).await,
        thrown("at its first poll")
    );

    assert_eq!(served.stop().await, Ok(()));
}
