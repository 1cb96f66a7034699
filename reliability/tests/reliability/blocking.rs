//! An async handler that blocks its worker thread: the service says so,
//! naming the tool, and still keeps the call's deadline; a call's time
//! counts from its request's head.

use std::time::Duration;

use kindgi_reliability::http::{self, Connection};
use kindgi_reliability::{ServiceOptions, invoke};
use serde_json::{Value, json};

use crate::common::{heavy, start};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_is_named_and_its_deadline_kept() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    let token = service.token().to_owned();
    // 600 ms of std::thread::sleep in an async handler, with a 200 ms
    // deadline: the timer can't fire while the thread is held, but the
    // answer is still deadline-exceeded.
    let request = invoke::call(&token, "stress.block-async", json!({"ms": 600}))
        .header("kindgi-timeout-ms", "200");
    let answer = http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("stress.block-async");
    let body = answer.json_or_null();
    assert_eq!(
        invoke::error_code(&body),
        Some("deadline-exceeded"),
        "{body}"
    );
    assert_eq!(body["message"], "stress.block-async passed its deadline");

    let warned = |records: &[Value]| {
        records
            .iter()
            .any(|r| r["kind"] == "handler-blocked-thread")
    };
    assert!(
        tokio::task::block_in_place(|| service.wait_records(warned, WAIT)),
        "a handler-blocked-thread record"
    );
    let records = service.records();
    let warning = records
        .iter()
        .find(|r| r["kind"] == "handler-blocked-thread")
        .expect("the warning");
    assert_eq!(warning["level"], "warn");
    assert_eq!(warning["toolId"], "stress.block-async");
    let ms = warning["blockedMs"].as_u64().expect("blockedMs");
    assert!((250..600).contains(&ms), "{warning}");
    assert_eq!(
        warning["message"],
        format!(
            "The async handler of tool stress.block-async has held its worker thread for {ms} ms in one poll: other calls wait for that thread. Blocking work (std::thread::sleep, blocking I/O, long CPU work) belongs in a blocking handler (#[tool(blocking)], Tool::blocking_handler) or tokio::task::spawn_blocking"
        )
    );
    // One warning per call; a quick async handler gets none.
    let quick = invoke::call(&token, "stress.sleep", json!({"ms": 1}));
    let answer = http::exchange(service.addr(), &quick, WAIT)
        .await
        .expect_answer("stress.sleep");
    assert_eq!(answer.status, 200);
    let warnings = service
        .records()
        .iter()
        .filter(|r| r["kind"] == "handler-blocked-thread")
        .count();
    assert_eq!(warnings, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_s_time_counts_from_its_request_s_head() {
    let service = start(&ServiceOptions::default());
    let request = invoke::call(service.token(), "stress.sleep", json!({"ms": 1}));
    let mut conn = Connection::open(service.addr()).await.expect("connect");
    conn.send(&request.head_bytes()).await.expect("head");
    // A slow client: its body comes 300 ms after its head.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let body = request.to_bytes()[request.head_bytes().len()..].to_vec();
    conn.send(&body).await.expect("body");
    let answer = conn.read_response().await.expect("an answer");
    assert_eq!(answer.status, 200, "{}", answer.text());
    let ms: u64 = answer
        .header("kindgi-duration-ms")
        .and_then(|ms| ms.parse().ok())
        .expect("kindgi-duration-ms");
    assert!(ms >= 300, "kindgi-duration-ms {ms}");
    let recorded = |records: &[Value]| records.iter().any(|r| r["kind"] == "call");
    assert!(tokio::task::block_in_place(
        || service.wait_records(recorded, WAIT)
    ));
    let call = service
        .records()
        .into_iter()
        .find(|r| r["kind"] == "call")
        .expect("a call record");
    assert!(
        call["durationMs"].as_u64().is_some_and(|d| d >= 300),
        "{call}"
    );
}
