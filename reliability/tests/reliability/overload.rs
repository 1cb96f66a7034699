//! Ten times the concurrency cap of slow calls: the excess is refused at
//! once, the admitted calls finish, memory stays bounded.

use std::time::{Duration, Instant};

use kindgi_reliability::ServiceOptions;
use kindgi_reliability::scenarios::overload::{self, OverloadPlan};

use crate::common::{heavy, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_times_the_cap_is_refused_at_once_and_memory_stays_bounded() {
    let _heavy = heavy().await;
    let cap = 16;
    let service = start(&ServiceOptions::default().max_concurrency(cap));
    let plan = OverloadPlan {
        cap,
        burst: cap * 10,
        sleep_ms: 1500,
        waves: 3,
    };
    let report = overload::run(&service, &plan).await;
    println!("{report:#?}");
    for wave in &report.waves {
        assert!(wave.other.is_empty(), "{wave:#?}");
        assert_eq!(wave.ok, cap, "exactly the cap is admitted: {wave:#?}");
        assert_eq!(wave.overloaded, cap * 9, "{wave:#?}");
        assert!(
            wave.fastest_ok >= Duration::from_millis(plan.sleep_ms),
            "admitted calls ran their whole sleep: {wave:#?}"
        );
    }
    // "At once": well before the first admitted call could have finished.
    assert!(
        report.slowest_refusal() < Duration::from_millis(plan.sleep_ms / 2),
        "{report:#?}"
    );
    // Bounded: the waves don't grow the service, and the peak stays far
    // below what buffering the burst would take.
    let first = report.waves[0].rss_after_kib;
    let last = report.waves[report.waves.len() - 1].rss_after_kib;
    assert!(last <= first + 4 * 1024, "{report:#?}");
    assert!(
        report.peak_rss_kib < report.rss_before_kib + 64 * 1024,
        "{report:#?}"
    );
    assert!(report.serving_after, "{report:#?}");
}

/// Blocking handlers that ignore their deadline hold their threads after
/// their calls ended: they are bounded, and a later blocking call is
/// refused at once (503 `overloaded`, it did not run) or runs — it never
/// waits for a thread past its own deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runaway_blocking_handlers_are_bounded() {
    use kindgi_reliability::{http, invoke};
    use serde_json::json;
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    let addr = service.addr();
    let token = service.token().to_owned();
    let started = Instant::now();
    let (runaways, clients) = (520, 32);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            let mut codes = Vec::new();
            for _ in (client..runaways).step_by(clients) {
                let request = invoke::call(&token, "stress.block", json!({"ms": 20_000}))
                    .header("kindgi-timeout-ms", "100");
                let outcome = http::exchange(addr, &request, Duration::from_secs(30)).await;
                codes.push(match outcome.status() {
                    Some(200) => {
                        invoke::error_code(&outcome.expect_answer("runaway").json_or_null())
                            .unwrap_or("ok")
                            .to_owned()
                    }
                    Some(status) => status.to_string(),
                    None => format!("{outcome}"),
                });
            }
            codes
        }));
    }
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for task in tasks {
        for code in task.await.expect("task") {
            *codes.entry(code).or_default() += 1;
        }
    }
    let threads = service.threads();
    println!(
        "{runaways} runaway calls in {:?}: {codes:?}; {threads} threads",
        started.elapsed()
    );
    let asked = Instant::now();
    let later = http::exchange(
        addr,
        &invoke::call(&token, "stress.block", json!({"ms": 10}))
            .header("kindgi-timeout-ms", "3000"),
        Duration::from_secs(10),
    )
    .await
    .expect_answer("the later blocking call");
    let took = asked.elapsed();
    println!(
        "a later 10 ms blocking call: {} {} in {took:?}",
        later.status,
        later.text()
    );
    match later.status {
        200 => assert_eq!(later.json_or_null()["kind"], "result", "{}", later.text()),
        503 => {
            assert_eq!(later.json_or_null(), json!({"error": "overloaded"}));
            assert_eq!(later.header("retry-after"), Some("1"));
        }
        other => panic!("{other}: {}", later.text()),
    }
    assert!(took < Duration::from_millis(1_000), "{took:?}");
    assert!(threads < 160, "{threads} threads");
    // Async calls go on meanwhile.
    let sleep = http::exchange(
        addr,
        &invoke::call(&token, "stress.sleep", json!({"ms": 1})),
        Duration::from_secs(10),
    )
    .await
    .expect_answer("an async call");
    assert_eq!(sleep.json_or_null()["kind"], "result", "{}", sleep.text());
}
