//! Panics in pack code are `handler-throw`, logged, and the service goes
//! on serving, also with many at once.

use std::time::Duration;

use kindgi_reliability::http;
use kindgi_reliability::{ServiceOptions, invoke};
use serde_json::json;

use crate::common::{heavy, start};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn panicking_handlers_and_checks_under_load() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default().max_concurrency(256));
    let token = service.token().to_owned();
    let kinds = [
        (
            "stress.panics",
            "Handler for tool \"stress.panics\" threw: panic: kaboom",
        ),
        (
            "stress.blocking-panics",
            "Handler for tool \"stress.blocking-panics\" threw: panic: kaboom",
        ),
        (
            "stress.checks.panics",
            "Check \"stress.checks.panics\" evaluate() threw: panic: check kaboom",
        ),
        ("stress.sleep", ""),
        ("stress.checks.ok", ""),
    ];
    let mut tasks = Vec::new();
    for i in 0..400 {
        let (target, message) = kinds[i % kinds.len()];
        let request = if target.contains(".checks.") {
            invoke::invoke(&token, &invoke::check_message(target))
        } else {
            invoke::call(&token, target, json!({"ms": 5}))
        };
        let addr = service.addr();
        tasks.push(tokio::spawn(async move {
            (target, message, http::exchange(addr, &request, WAIT).await)
        }));
    }
    let mut panicked = 0;
    for task in tasks {
        let (target, message, outcome) = task.await.expect("task");
        let answer = outcome.expect_answer(target);
        assert_eq!(answer.status, 200, "{target}: {}", answer.text());
        let body = answer.json_or_null();
        if message.is_empty() {
            assert!(
                matches!(body["kind"].as_str(), Some("result" | "check-result")),
                "{target}: {body}"
            );
        } else {
            panicked += 1;
            assert_eq!(body["code"], "handler-throw", "{body}");
            assert_eq!(body["message"], message, "{body}");
            assert_eq!(body["cause"]["name"], "panic", "{body}");
        }
    }
    assert_eq!(panicked, 240);
    // Still serving, every panic logged as a record.
    let ok = http::exchange(
        service.addr(),
        &invoke::call(&token, "stress.sleep", json!({"ms": 1})),
        WAIT,
    )
    .await;
    assert_eq!(ok.status(), Some(200), "{ok}");
    // Its records are written by the log's thread: wait for the 240th.
    service.wait_records(
        |records| records.iter().filter(|r| r["kind"] == "panic").count() >= 240,
        WAIT,
    );
    let panics = service.records_of("panic");
    assert_eq!(panics.len(), 240, "one panic record each");
    for record in &panics {
        assert_eq!(record["level"], "error");
        assert!(
            record["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Panicked: ") && m.contains("kaboom")),
            "{record}"
        );
        assert!(
            record["location"]
                .as_str()
                .is_some_and(|l| l.contains(".rs:"))
        );
    }
    // Nothing but records on stderr: no default panic message.
    for line in service.stderr_lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(&line).is_ok(),
            "a non-record line on stderr: {line}"
        );
    }
}
