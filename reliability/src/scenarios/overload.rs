//! Overload: many times the concurrency cap of slow calls at once.
//!
//! The calls past the cap must be refused 503 `overloaded` at once (not
//! queued behind the admitted ones), the admitted ones must finish, and the
//! service's memory must stay bounded, wave after wave.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::http::{self, Outcome, Request};
use crate::invoke;
use crate::proc::RssSampler;
use crate::service::PackService;

/// How an overload run is made.
#[derive(Debug, Clone)]
pub struct OverloadPlan {
    /// The service's `KINDGI_PACK_SERVICE_MAX_CONCURRENCY`.
    pub cap: usize,
    /// Calls sent at once in a wave (10 × the cap, say).
    pub burst: usize,
    /// How long each call sleeps, in ms.
    pub sleep_ms: u64,
    /// Waves, one after the other.
    pub waves: usize,
}

/// What one wave found.
#[derive(Debug, Clone, Default)]
pub struct WaveReport {
    /// Calls answered with their result.
    pub ok: usize,
    /// Calls refused 503 `overloaded` with `Retry-After: 1`.
    pub overloaded: usize,
    /// Calls with any other outcome, described.
    pub other: Vec<String>,
    /// The slowest 503, from sending to its answer.
    pub slowest_refusal: Duration,
    /// The 503s' times from sending to their answer, sorted.
    pub refusal_times: Vec<Duration>,
    /// The fastest admitted call.
    pub fastest_ok: Duration,
    /// The slowest admitted call.
    pub slowest_ok: Duration,
    /// Resident memory after the wave, in KiB.
    pub rss_after_kib: u64,
}

/// What an overload run found.
#[derive(Debug, Clone, Default)]
pub struct OverloadReport {
    /// Resident memory before the first wave, in KiB.
    pub rss_before_kib: u64,
    /// The most resident memory seen during the run, in KiB.
    pub peak_rss_kib: u64,
    /// Each wave.
    pub waves: Vec<WaveReport>,
    /// Whether the service still answered `/healthz` and a call afterwards.
    pub serving_after: bool,
}

impl OverloadReport {
    /// Calls admitted in all.
    pub fn ok(&self) -> usize {
        self.waves.iter().map(|w| w.ok).sum()
    }

    /// Calls refused `overloaded` in all.
    pub fn overloaded(&self) -> usize {
        self.waves.iter().map(|w| w.overloaded).sum()
    }

    /// The `p`-th percentile (0–100) of the refusals' times, all waves.
    pub fn refusal_percentile(&self, p: usize) -> Duration {
        let mut all: Vec<Duration> = self
            .waves
            .iter()
            .flat_map(|w| w.refusal_times.iter().copied())
            .collect();
        all.sort();
        if all.is_empty() {
            return Duration::ZERO;
        }
        all[(all.len() - 1) * p.min(100) / 100]
    }

    /// Whether memory plateaued: the second half of the waves never went
    /// more than a quarter (plus 4 MiB) above the first half's largest.
    pub fn memory_plateaued(&self) -> bool {
        let half = self.waves.len() / 2;
        let first = self.waves[..half]
            .iter()
            .map(|w| w.rss_after_kib)
            .max()
            .unwrap_or(0);
        let second = self.waves[half..]
            .iter()
            .map(|w| w.rss_after_kib)
            .max()
            .unwrap_or(0);
        second <= first + first / 4 + 4 * 1024
    }

    /// The slowest refusal of any wave.
    pub fn slowest_refusal(&self) -> Duration {
        self.waves
            .iter()
            .map(|w| w.slowest_refusal)
            .max()
            .unwrap_or_default()
    }
}

/// Runs the plan against `service` (started with `plan.cap`).
pub async fn run(service: &PackService, plan: &OverloadPlan) -> OverloadReport {
    let addr = service.addr();
    let token = service.token().to_owned();
    let mut report = OverloadReport {
        rss_before_kib: service.rss_kib(),
        ..OverloadReport::default()
    };
    let sampler = RssSampler::start(service.pid(), Duration::from_millis(20));
    let timeout = Duration::from_millis(plan.sleep_ms) + Duration::from_secs(30);
    for _ in 0..plan.waves {
        // Connect every client first, then send every request at once, so
        // that the whole burst lands while the first calls still sleep.
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(plan.burst));
        let mut tasks = Vec::with_capacity(plan.burst);
        for _ in 0..plan.burst {
            let request = invoke::call(&token, "stress.sleep", json!({"ms": plan.sleep_ms}));
            let start = std::sync::Arc::clone(&start);
            tasks.push(tokio::spawn(async move {
                let conn = tokio::time::timeout(timeout, http::Connection::open(addr)).await;
                start.wait().await;
                let sent = Instant::now();
                let outcome = match conn {
                    Ok(Ok(mut conn)) => {
                        let exchange = tokio::time::timeout(timeout, async {
                            conn.send(&request.to_bytes()).await?;
                            conn.read_response().await
                        })
                        .await;
                        match exchange {
                            Ok(Ok(response)) => Outcome::Answered(response),
                            Ok(Err(e)) => Outcome::NoAnswer(e.to_string()),
                            Err(_) => Outcome::NoAnswer("timed out".to_owned()),
                        }
                    }
                    Ok(Err(e)) => Outcome::NotConnected(e),
                    Err(_) => Outcome::NoAnswer("connect timed out".to_owned()),
                };
                (outcome, sent.elapsed())
            }));
        }
        let mut wave = WaveReport {
            fastest_ok: Duration::MAX,
            ..WaveReport::default()
        };
        for task in tasks {
            let Ok((outcome, took)) = task.await else {
                wave.other.push("a client task failed".to_owned());
                continue;
            };
            match outcome.response() {
                Some(r) if r.status == 200 && r.json_or_null()["kind"] == "result" => {
                    wave.ok += 1;
                    wave.fastest_ok = wave.fastest_ok.min(took);
                    wave.slowest_ok = wave.slowest_ok.max(took);
                }
                Some(r)
                    if r.status == 503
                        && r.json_or_null()["error"] == "overloaded"
                        && r.header("retry-after") == Some("1") =>
                {
                    wave.overloaded += 1;
                    wave.slowest_refusal = wave.slowest_refusal.max(took);
                    wave.refusal_times.push(took);
                }
                _ => wave.other.push(outcome.to_string()),
            }
        }
        wave.refusal_times.sort();
        if wave.fastest_ok == Duration::MAX {
            wave.fastest_ok = Duration::ZERO;
        }
        wave.rss_after_kib = service.rss_kib();
        report.waves.push(wave);
    }
    report.peak_rss_kib = sampler.stop();
    let healthz = http::exchange(addr, &Request::get("/healthz"), Duration::from_secs(10)).await;
    let call = http::exchange(
        addr,
        &invoke::call(&token, "stress.sleep", json!({"ms": 1})),
        Duration::from_secs(10),
    )
    .await;
    report.serving_after = healthz.status() == Some(200)
        && call
            .response()
            .is_some_and(|r| r.json_or_null()["kind"] == "result");
    report
}
