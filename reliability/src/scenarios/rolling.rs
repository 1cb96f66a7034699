//! A rolling restart, seen by the runtime: clients call through
//! `kindgi_runtime::client::PackClient` (which retries only what provably
//! did not run) while the service is SIGTERMed and a new one starts on the
//! same port. Every call must end answered exactly once, or provably not
//! run; none may run twice.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kindgi_protocol::{CallContext, Response, Secret};
use kindgi_runtime::client::{CallError, PackClient, RetryPolicy, ToolCall};
use serde_json::json;

use crate::service::{PackService, ServiceOptions};

/// How a rolling restart is made.
#[derive(Debug, Clone)]
pub struct RollingPlan {
    /// Calls in all.
    pub calls: usize,
    /// Clients at once.
    pub clients: usize,
    /// How long each call works before appending, in ms.
    pub work_ms: u64,
    /// Restarts, each once this many more calls have been answered.
    pub restarts: usize,
    /// Calls answered between restarts.
    pub every: usize,
}

impl Default for RollingPlan {
    fn default() -> Self {
        Self {
            calls: 3000,
            clients: 32,
            work_ms: 100,
            restarts: 2,
            every: 800,
        }
    }
}

/// What a rolling restart found.
#[derive(Debug, Clone, Default)]
pub struct RollingReport {
    /// Calls answered with their result.
    pub ok: usize,
    /// Calls that ended `CallError::Unavailable` (provably not run).
    pub unavailable: usize,
    /// Calls that ended `CallError::MayHaveRun`.
    pub may_have_run: usize,
    /// Calls with any other end, described.
    pub other: Vec<String>,
    /// Answered calls not in the file exactly once.
    pub ok_not_once: Vec<(String, usize)>,
    /// Calls in the file more than once.
    pub doubled: Vec<(String, usize)>,
    /// Calls that provably did not run, yet are in the file.
    pub unavailable_but_ran: Vec<String>,
    /// Why each `MayHaveRun` call ended so.
    pub may_have_run_reasons: Vec<String>,
    /// `MayHaveRun` calls that did run (their answer was lost).
    pub may_have_run_and_ran: usize,
    /// Exit codes of the stopped services.
    pub exit_codes: Vec<Option<i32>>,
    /// The longest a restart kept the port closed.
    pub longest_gap: Duration,
}

impl RollingReport {
    /// Nothing doubled, nothing that provably didn't run ran, every answer
    /// matched the file, and every service exited 0.
    pub fn is_safe(&self) -> bool {
        self.other.is_empty()
            && self.ok_not_once.is_empty()
            && self.doubled.is_empty()
            && self.unavailable_but_ran.is_empty()
            && self.exit_codes.iter().all(|c| *c == Some(0))
    }
}

#[derive(Debug)]
enum End {
    Ok,
    Unavailable,
    MayHaveRun(String),
    Other(String),
}

/// Runs the plan with the pack binary `bin` (its folder `pack_dir`).
pub async fn run(bin: &Path, pack_dir: &Path, plan: &RollingPlan) -> RollingReport {
    let options = ServiceOptions::default().max_concurrency(plan.clients * 2);
    let mut service = PackService::start(bin, pack_dir, &options);
    let port = service.port();
    let options = options.env("PORT", &port.to_string());
    let file = service.scratch().join("ran.txt");
    // The first service's folder holds the file; keep it for the whole run.
    let client = PackClient::new(
        format!("http://127.0.0.1:{port}"),
        Secret::new(service.token()),
    )
    .with_retry(RetryPolicy {
        max_attempts: 40,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(250),
        answer_grace: Duration::from_secs(1),
    });
    let next = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..plan.clients {
        let (client, next, answered) = (client.clone(), Arc::clone(&next), Arc::clone(&answered));
        let (file, calls, work_ms) = (file.clone(), plan.calls, plan.work_ms);
        tasks.push(tokio::spawn(async move {
            let mut ends = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= calls {
                    return ends;
                }
                let id = format!("call-{n}");
                let ctx = CallContext {
                    tenant_id: "t1".into(),
                    run_id: "run-rolling".into(),
                    ..CallContext::default()
                };
                let mut call = ToolCall::new(
                    "stress.append",
                    json!({"path": file.to_string_lossy(), "id": id, "ms": work_ms}),
                    ctx,
                )
                .for_step(&id, None);
                call.timeout = Duration::from_secs(30);
                let end = match client.invoke(&call).await {
                    Ok(Response::Result(result)) if result.output["id"] == id.as_str() => {
                        answered.fetch_add(1, Ordering::SeqCst);
                        End::Ok
                    }
                    Ok(other) => End::Other(format!("{id}: {other:?}")),
                    Err(CallError::Unavailable { .. }) => End::Unavailable,
                    Err(CallError::MayHaveRun { reason }) => {
                        End::MayHaveRun(format!("{id}: {reason}"))
                    }
                    Err(e) => End::Other(format!("{id}: {e}")),
                };
                ends.push((id, end));
            }
        }));
    }
    let mut report = RollingReport::default();
    let mut old_services = Vec::new();
    for restart in 1..=plan.restarts {
        let waited = Instant::now();
        while answered.load(Ordering::SeqCst) < restart * plan.every
            && waited.elapsed() < Duration::from_secs(60)
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        service.sigterm();
        let status = tokio::task::block_in_place(|| service.wait_exit(Duration::from_secs(30)));
        report.exit_codes.push(status.and_then(|s| s.code()));
        let down = Instant::now();
        let fresh = tokio::task::block_in_place(|| PackService::start(bin, pack_dir, &options));
        report.longest_gap = report.longest_gap.max(down.elapsed());
        old_services.push(std::mem::replace(&mut service, fresh));
    }
    let mut ends = Vec::new();
    for task in tasks {
        ends.extend(task.await.unwrap_or_default());
    }
    service.sigterm();
    let status = tokio::task::block_in_place(|| service.wait_exit(Duration::from_secs(30)));
    report.exit_codes.push(status.and_then(|s| s.code()));
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for line in text.lines() {
        *counts.entry(line).or_default() += 1;
    }
    report.doubled = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, n)| ((*id).to_owned(), *n))
        .collect();
    for (id, end) in ends {
        let count = counts.get(id.as_str()).copied().unwrap_or(0);
        match end {
            End::Ok => {
                report.ok += 1;
                if count != 1 {
                    report.ok_not_once.push((id, count));
                }
            }
            End::Unavailable => {
                report.unavailable += 1;
                if count != 0 {
                    report.unavailable_but_ran.push(id);
                }
            }
            End::MayHaveRun(reason) => {
                report.may_have_run += 1;
                report.may_have_run_reasons.push(reason);
                if count != 0 {
                    report.may_have_run_and_ran += 1;
                }
            }
            End::Other(what) => report.other.push(what),
        }
    }
    drop(old_services);
    report
}
