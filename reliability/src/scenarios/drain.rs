//! Drain under load: calls keep arriving while SIGTERM lands.
//!
//! Every call appends its own id to a file when it runs
//! (`stress.append`). Afterwards each call's outcome is checked against the
//! file: answered 200 → its id is there exactly once; refused 503 → not
//! there; no connection → not there; a connection that ended without an
//! answer → not there either (else the call ran and its answer was lost).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http::{self, Connection, Outcome};
use crate::invoke;
use crate::service::PackService;

/// How a drain run is made.
#[derive(Debug, Clone)]
pub struct DrainPlan {
    /// The most calls in all: clients stop sooner once the service is
    /// gone (each client after its connection is refused three times).
    pub calls: usize,
    /// Clients sending at once.
    pub clients: usize,
    /// How long each call works before appending, in ms.
    pub work_ms: u64,
    /// SIGTERM once this many calls have been answered 200.
    pub term_after: usize,
    /// Clients keep their connection open between calls.
    pub keep_alive: bool,
    /// The longest a call may take, end to end.
    pub call_timeout: Duration,
}

impl Default for DrainPlan {
    fn default() -> Self {
        Self {
            calls: 2000,
            clients: 64,
            work_ms: 100,
            term_after: 300,
            keep_alive: false,
            call_timeout: Duration::from_secs(20),
        }
    }
}

/// What a drain run found.
#[derive(Debug, Clone, Default)]
pub struct DrainReport {
    /// Calls answered 200 with their own id.
    pub ok: usize,
    /// Calls refused 503 `draining`.
    pub draining: usize,
    /// Calls refused 503 `overloaded`.
    pub overloaded: usize,
    /// Calls that found no connection (the service had exited).
    pub not_connected: usize,
    /// Calls whose connection ended without an answer.
    pub no_answer: usize,
    /// The calls without an answer: when (before or at the exit) and why,
    /// with how many.
    pub no_answer_kinds: std::collections::BTreeMap<String, usize>,
    /// Calls with any other answer, described.
    pub other: Vec<String>,
    /// Ids answered 200 but not in the file exactly once, with their count.
    pub ok_not_once: Vec<(String, usize)>,
    /// Ids refused (503, no connection) yet in the file.
    pub refused_but_ran: Vec<String>,
    /// Ids with no answer that are in the file: ran, answer lost.
    pub lost_answers: Vec<String>,
    /// Lines in the file that are no call's id, or repeated.
    pub stray_lines: usize,
    /// Whether the service exited, and its exit code.
    pub exit_code: Option<i32>,
    /// From SIGTERM to exit.
    pub exit_after: Option<Duration>,
    /// Whether a `draining` and then a `stopped` record were written.
    pub records_ok: bool,
    /// Peak resident memory of the service, in KiB.
    pub peak_rss_kib: u64,
}

impl DrainReport {
    /// Whether nothing was lost or doubled, and the exit was clean and in
    /// time (`window`: the drain window plus slack).
    pub fn is_clean(&self, window: Duration) -> bool {
        self.other.is_empty()
            && self.ok_not_once.is_empty()
            && self.refused_but_ran.is_empty()
            && self.lost_answers.is_empty()
            && self.stray_lines == 0
            && self.exit_code == Some(0)
            && self.exit_after.is_some_and(|d| d <= window)
            && self.records_ok
    }
}

#[derive(Debug)]
enum Seen {
    Ok,
    Draining,
    Overloaded,
    NotConnected,
    NoAnswer(String, Instant),
    Other(String),
}

/// Runs the plan against `service` (which it SIGTERMs), appending to
/// `file`.
pub async fn run(service: &mut PackService, plan: &DrainPlan, file: PathBuf) -> DrainReport {
    let addr = service.addr();
    let token = service.token().to_owned();
    let next = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let plan = Arc::new(plan.clone());
    let file = Arc::new(file);
    let sampler = crate::proc::RssSampler::start(service.pid(), Duration::from_millis(20));
    let mut clients = Vec::new();
    for _ in 0..plan.clients {
        let (next, answered, plan, file, token) = (
            Arc::clone(&next),
            Arc::clone(&answered),
            Arc::clone(&plan),
            Arc::clone(&file),
            token.clone(),
        );
        clients.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut conn: Option<Connection> = None;
            let mut refused_in_a_row = 0;
            loop {
                if refused_in_a_row >= 3 {
                    return seen;
                }
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= plan.calls {
                    return seen;
                }
                let id = format!("call-{n}");
                let request = invoke::call(
                    &token,
                    "stress.append",
                    json!({"path": file.to_string_lossy(), "id": id, "ms": plan.work_ms}),
                );
                let outcome = if plan.keep_alive {
                    keep_alive_exchange(&mut conn, addr, request.keep_alive(), plan.call_timeout)
                        .await
                } else {
                    http::exchange(addr, &request, plan.call_timeout).await
                };
                let kind = classify(&outcome, &id);
                if matches!(kind, Seen::Ok) {
                    answered.fetch_add(1, Ordering::SeqCst);
                }
                if matches!(kind, Seen::NotConnected) {
                    // The service is gone: don't spin.
                    refused_in_a_row += 1;
                    tokio::time::sleep(Duration::from_millis(2)).await;
                } else {
                    refused_in_a_row = 0;
                }
                seen.push((id, kind));
            }
        }));
    }
    // SIGTERM once enough calls have been answered (or after 20 s).
    let waited = Instant::now();
    while answered.load(Ordering::SeqCst) < plan.term_after
        && waited.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let exit = crate::proc::watch_exit(
        service.pid(),
        Duration::from_millis(2),
        Duration::from_secs(60),
    );
    service.sigterm();
    let termed = Instant::now();
    let mut seen = Vec::new();
    for client in clients {
        seen.extend(client.await.unwrap_or_default());
    }
    let status = tokio::task::block_in_place(|| service.wait_exit(Duration::from_secs(30)));
    let exit_at = exit.join().ok().flatten();
    let exit_after = exit_at.map(|at| at.saturating_duration_since(termed));
    let mut report = report(
        service,
        seen,
        &file,
        status.and_then(|s| s.code()),
        exit_after,
        exit_at,
    );
    report.peak_rss_kib = sampler.stop();
    report
}

async fn keep_alive_exchange(
    conn: &mut Option<Connection>,
    addr: std::net::SocketAddr,
    request: http::Request,
    timeout: Duration,
) -> Outcome {
    if conn.is_none() {
        match tokio::time::timeout(timeout, Connection::open(addr)).await {
            Ok(Ok(c)) => *conn = Some(c),
            Ok(Err(e)) => return Outcome::NotConnected(e),
            Err(_) => {
                return Outcome::NotConnected(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connect timed out",
                ));
            }
        }
    }
    let Some(c) = conn.as_mut() else {
        return Outcome::NoAnswer("no connection".to_owned());
    };
    let result = tokio::time::timeout(timeout, async {
        c.send(&request.to_bytes()).await?;
        c.read_response().await
    })
    .await;
    match result {
        Ok(Ok(response)) => {
            if response
                .header("connection")
                .is_some_and(|v| v.eq_ignore_ascii_case("close"))
            {
                *conn = None;
            }
            Outcome::Answered(response)
        }
        Ok(Err(e)) => {
            *conn = None;
            Outcome::NoAnswer(e.to_string())
        }
        Err(_) => {
            *conn = None;
            Outcome::NoAnswer("timed out".to_owned())
        }
    }
}

fn classify(outcome: &Outcome, id: &str) -> Seen {
    match outcome {
        Outcome::NotConnected(_) => Seen::NotConnected,
        Outcome::NoAnswer(e) => Seen::NoAnswer(e.clone(), Instant::now()),
        Outcome::Answered(r) => {
            let body = r.json_or_null();
            match r.status {
                200 if body["kind"] == "result" && body["output"]["id"] == id => Seen::Ok,
                503 if body["error"] == "draining" && r.header("retry-after") == Some("1") => {
                    Seen::Draining
                }
                503 if body["error"] == "overloaded" && r.header("retry-after") == Some("1") => {
                    Seen::Overloaded
                }
                status => Seen::Other(format!("{id}: {status} {}", r.text())),
            }
        }
    }
}

fn report(
    service: &PackService,
    seen: Vec<(String, Seen)>,
    file: &std::path::Path,
    exit_code: Option<i32>,
    exit_after: Option<Duration>,
    exit_at: Option<Instant>,
) -> DrainReport {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for line in text.lines() {
        *counts.entry(line).or_default() += 1;
    }
    let mut report = DrainReport {
        exit_code,
        exit_after,
        ..DrainReport::default()
    };
    let ids: std::collections::HashSet<&str> = seen.iter().map(|(id, _)| id.as_str()).collect();
    report.stray_lines = counts
        .iter()
        .filter(|(line, _)| !ids.contains(*line))
        .map(|(_, n)| *n)
        .sum();
    for (id, kind) in &seen {
        let count = counts.get(id.as_str()).copied().unwrap_or(0);
        match kind {
            Seen::Ok => {
                report.ok += 1;
                if count != 1 {
                    report.ok_not_once.push((id.clone(), count));
                }
            }
            Seen::Draining | Seen::Overloaded | Seen::NotConnected => {
                match kind {
                    Seen::Draining => report.draining += 1,
                    Seen::Overloaded => report.overloaded += 1,
                    _ => report.not_connected += 1,
                }
                if count != 0 {
                    report.refused_but_ran.push(id.clone());
                }
            }
            Seen::NoAnswer(why, at) => {
                report.no_answer += 1;
                let when = match exit_at {
                    Some(exit) if *at + Duration::from_millis(5) < exit => "before exit",
                    Some(_) => "at or after exit",
                    None => "no exit",
                };
                *report
                    .no_answer_kinds
                    .entry(format!("{when}: {why}"))
                    .or_default() += 1;
                if count != 0 {
                    report.lost_answers.push(id.clone());
                }
            }
            Seen::Other(what) => report.other.push(what.clone()),
        }
    }
    let records = service.records();
    let position = |kind: &str| records.iter().position(|r| r["kind"] == kind);
    report.records_ok =
        matches!((position("draining"), position("stopped")), (Some(d), Some(s)) if d < s);
    report
}
