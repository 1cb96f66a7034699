//! Ten times the concurrency cap of slow calls: the excess is refused at
//! once, the admitted calls finish, memory stays bounded.

use std::time::Duration;

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
