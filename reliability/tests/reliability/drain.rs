//! SIGTERM under load: nothing lost, nothing doubled, exit 0 in the
//! drain window.

use std::time::Duration;

use kindgi_reliability::ServiceOptions;
use kindgi_reliability::scenarios::drain::{self, DrainPlan};
use kindgi_reliability::scenarios::rolling::{self, RollingPlan};

use crate::common::{heavy, start};

/// The drain window (8 s) and slack for a loaded two-core machine.
const WINDOW: Duration = Duration::from_secs(10);
/// How long a test waits for a record.
const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_loses_and_doubles_nothing() {
    let _heavy = heavy().await;
    let mut service = start(&ServiceOptions::default().max_concurrency(64));
    let file = service.scratch().join("ran.txt");
    let plan = DrainPlan {
        calls: 20_000,
        clients: 48,
        work_ms: 500,
        term_after: 200,
        ..DrainPlan::default()
    };
    let report = drain::run(&mut service, &plan, file).await;
    println!("{report:#?}");
    assert!(report.is_clean(WINDOW), "{report:#?}");
    assert!(report.ok >= plan.term_after, "{report:#?}");
    assert!(
        report.draining > 0,
        "no call arrived while draining: {report:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_with_keep_alive_connections() {
    let _heavy = heavy().await;
    let mut service = start(&ServiceOptions::default().max_concurrency(64));
    let file = service.scratch().join("ran.txt");
    let plan = DrainPlan {
        calls: 20_000,
        clients: 48,
        work_ms: 500,
        term_after: 200,
        keep_alive: true,
        ..DrainPlan::default()
    };
    let report = drain::run(&mut service, &plan, file).await;
    println!("{report:#?}");
    assert!(report.is_clean(WINDOW), "{report:#?}");
    assert!(
        report.draining > 0,
        "no call arrived while draining: {report:#?}"
    );
}

/// The strict form: besides nothing lost or doubled, no caller is left
/// without an answer on a connection it made — every call is answered, or
/// its connection refused (which a runtime knows never ran).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_call_is_answered_or_its_connection_refused() {
    let _heavy = heavy().await;
    for keep_alive in [false, true] {
        let mut service = start(&ServiceOptions::default().max_concurrency(64));
        let file = service.scratch().join("ran.txt");
        let plan = DrainPlan {
            calls: 20_000,
            clients: 48,
            work_ms: 500,
            term_after: 200,
            keep_alive,
            ..DrainPlan::default()
        };
        let report = drain::run(&mut service, &plan, file).await;
        assert!(report.is_clean(WINDOW), "{report:#?}");
        assert_eq!(report.no_answer, 0, "{report:#?}");
    }
}

/// A rolling restart seen through the runtime's pack client, which retries
/// only what provably did not run: nothing runs twice, every answer
/// matches one run, every service exits 0 — and, strictly, every call is
/// answered: none is left "may have run" for the runtime to give up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_restart_through_the_pack_client_doubles_and_loses_nothing() {
    let _heavy = heavy().await;
    let plan = RollingPlan {
        calls: 2400,
        clients: 32,
        work_ms: 100,
        restarts: 2,
        every: 700,
    };
    let report = rolling::run(
        crate::common::pack_bin(),
        &kindgi_reliability::bins::stress_pack_dir(),
        &plan,
    )
    .await;
    println!("{report:#?}");
    assert!(report.is_safe(), "{report:#?}");
    assert_eq!(
        report.may_have_run_and_ran, 0,
        "a call the client gave up on as may-have-run did run: {report:#?}"
    );
    assert!(report.ok >= plan.calls * 9 / 10, "{report:#?}");
    assert_eq!(report.ok, plan.calls, "{report:#?}");
}

/// A call still running when the 8 s drain window closes: it is answered
/// `cancelled` before its connection closes, its `call` record comes
/// before `stopped`, and the process exits within 8.5 s of SIGTERM — for an
/// async handler and for a blocking one that ignores its cancellation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_past_the_drain_window_are_answered_cancelled_before_exit() {
    use kindgi_reliability::{http, invoke, proc};
    use serde_json::json;
    let _heavy = heavy().await;
    // Debug records: the handlers say when they began.
    let mut service = start(&ServiceOptions::default().env("KINDGI_LOG_LEVEL", "debug"));
    let addr = service.addr();
    let mut calls = Vec::new();
    for (tool, input) in [
        ("stress.sleep", json!({"ms": 30_000})),
        ("stress.block", json!({"ms": 30_000})),
    ] {
        let request =
            invoke::call(service.token(), tool, input).header("kindgi-timeout-ms", "60000");
        calls.push(tokio::spawn(async move {
            http::exchange(addr, &request, Duration::from_secs(40)).await
        }));
    }
    // Both running.
    let began = |records: &[serde_json::Value]| {
        ["stress.sleep began", "stress.block began"]
            .iter()
            .all(|message| records.iter().any(|r| r["message"] == *message))
    };
    let running = tokio::task::block_in_place(|| service.wait_records(began, WAIT));
    assert!(running, "both handlers began");
    let exit = proc::watch_exit(
        service.pid(),
        Duration::from_millis(5),
        Duration::from_secs(20),
    );
    let termed = std::time::Instant::now();
    service.sigterm();
    let exited = tokio::task::spawn_blocking(move || exit.join().expect("watcher"))
        .await
        .expect("join")
        .map(|at| at.duration_since(termed));
    let status = service.wait_exit(Duration::from_secs(10));
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.expect("task"));
    }
    let records = service.records();
    let kinds: Vec<String> = records
        .iter()
        .filter(|r| r["kind"] == "call" || r["kind"] == "stopped" || r["kind"] == "draining")
        .map(|r| format!("{} {}", r["kind"], r["message"]))
        .collect();
    println!("exit after {exited:?} ({status:?}); answers: {answers:#?}; records: {kinds:#?}");
    for (outcome, tool) in answers.iter().zip(["stress.sleep", "stress.block"]) {
        let answer = outcome
            .response()
            .unwrap_or_else(|| panic!("{tool}: no answer: {outcome}"));
        assert_eq!(answer.status, 200, "{tool}: {}", answer.text());
        let body = answer.json_or_null();
        assert_eq!(
            invoke::error_code(&body),
            Some("cancelled"),
            "{tool}: {body}"
        );
        assert_eq!(body["message"], format!("{tool} was cancelled"));
    }
    let exited = exited.expect("the service exited");
    assert!(
        exited < Duration::from_millis(8_500),
        "exit {exited:?} after SIGTERM"
    );
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let stopped = records
        .iter()
        .position(|r| r["kind"] == "stopped")
        .expect("a stopped record");
    assert_eq!(
        stopped,
        records.len() - 1,
        "records after stopped: {kinds:#?}"
    );
    let cancelled = records
        .iter()
        .filter(|r| r["kind"] == "call" && r["outcome"] == "cancelled")
        .count();
    assert_eq!(cancelled, 2, "{kinds:#?}");
}
