//! SIGKILL of the dev runtime in the middle of uploads, again and again:
//! each time the store must be consistent (every record's blob there with
//! its sha256), the runtime must start again on it, and every upload that
//! was answered with a file must still be there and readable.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::runtime::{RuntimeProcess, StoreCheck, check_store};

/// How a crash run is made.
#[derive(Debug, Clone)]
pub struct CrashPlan {
    /// Kill-and-restart cycles.
    pub cycles: usize,
    /// Uploaders at once.
    pub uploaders: usize,
    /// How long uploads run before the kill.
    pub upload_for: Duration,
    /// The largest file, in bytes (sizes vary up to it).
    pub max_file_bytes: usize,
}

impl Default for CrashPlan {
    fn default() -> Self {
        Self {
            cycles: 3,
            uploaders: 24,
            upload_for: Duration::from_millis(700),
            max_file_bytes: 1 << 20,
        }
    }
}

/// What one cycle found.
#[derive(Debug, Clone, Default)]
pub struct CycleReport {
    /// Uploads answered with a file before the kill.
    pub stored: usize,
    /// Uploads answered otherwise (not stored, busy…).
    pub refused: usize,
    /// Uploads cut by the kill (no answer).
    pub cut: usize,
    /// The store, checked after the kill.
    pub check: StoreCheck,
    /// Files answered before the kill that were missing or unreadable
    /// after the restart.
    pub lost: Vec<String>,
    /// Files in `tmp/` after the restart (swept: 0).
    pub tmp_after_restart: usize,
}

/// What a crash run found.
#[derive(Debug, Clone, Default)]
pub struct CrashReport {
    /// Each cycle.
    pub cycles: Vec<CycleReport>,
}

impl CrashReport {
    /// Whether every cycle left a consistent store, lost no answered file
    /// and restarted clean.
    pub fn is_clean(&self) -> bool {
        self.cycles
            .iter()
            .all(|c| c.check.is_consistent() && c.lost.is_empty() && c.tmp_after_restart == 0)
    }
}

/// Runs the plan with `bin` (`kindgi`) on `data_dir`.
pub async fn run(bin: &Path, data_dir: &Path, plan: &CrashPlan) -> CrashReport {
    let mut report = CrashReport::default();
    let mut answered: Vec<(String, String, String)> = Vec::new(); // (token, artifactId, sha)
    let args = ["--rate-limit", "1000000", "--memory-wait-ms", "100"];
    for cycle in 0..plan.cycles {
        let runtime = Arc::new(RuntimeProcess::start(bin, data_dir, &args));
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for uploader in 0..plan.uploaders {
            let (runtime, stop) = (Arc::clone(&runtime), Arc::clone(&stop));
            let max = plan.max_file_bytes;
            tasks.push(tokio::spawn(async move {
                upload_until_stopped(&runtime, &stop, cycle, uploader, max).await
            }));
        }
        tokio::time::sleep(plan.upload_for).await;
        // The crash: SIGKILL while uploads are in flight.
        crate::proc::signal(runtime.pid(), "KILL");
        stop.store(true, Ordering::SeqCst);
        let mut cycle_report = CycleReport::default();
        for task in tasks {
            let Ok(outcomes) = task.await else { continue };
            for outcome in outcomes {
                match outcome {
                    Upload::Stored {
                        token,
                        artifact_id,
                        sha,
                    } => {
                        cycle_report.stored += 1;
                        answered.push((token, artifact_id, sha));
                    }
                    Upload::Refused => cycle_report.refused += 1,
                    Upload::Cut => cycle_report.cut += 1,
                }
            }
        }
        match Arc::try_unwrap(runtime) {
            Ok(runtime) => runtime.kill(),
            Err(_) => return report,
        }
        cycle_report.check = check_store(data_dir).unwrap_or_else(|e| StoreCheck {
            integrity: format!("unreadable: {e}"),
            ..StoreCheck::default()
        });
        // Restart on the same store: every file answered so far is there.
        let restarted = RuntimeProcess::start(bin, data_dir, &args);
        cycle_report.tmp_after_restart = std::fs::read_dir(data_dir.join("tmp"))
            .map(|d| d.count())
            .unwrap_or(usize::MAX);
        for (token, artifact_id, sha) in &answered {
            let read = restarted.read(token, artifact_id).await;
            if read.status != 200 || hex::encode(Sha256::digest(&read.body)) != *sha {
                cycle_report.lost.push(format!(
                    "{artifact_id}: {} {}",
                    read.status,
                    read.text().chars().take(80).collect::<String>()
                ));
            }
        }
        restarted.kill();
        report.cycles.push(cycle_report);
    }
    report
}

#[derive(Debug)]
enum Upload {
    Stored {
        token: String,
        artifact_id: String,
        sha: String,
    },
    Refused,
    Cut,
}

/// Opens calls and stores distinct text files until told to stop (or the
/// runtime stops answering).
async fn upload_until_stopped(
    runtime: &RuntimeProcess,
    stop: &AtomicBool,
    cycle: usize,
    uploader: usize,
    max_bytes: usize,
) -> Vec<Upload> {
    let mut outcomes = Vec::new();
    let started = Instant::now();
    let mut n = 0usize;
    while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(60) {
        let open = runtime
            .try_send(
                crate::http::Request::post("/v1/dev/calls")
                    .header(
                        "authorization",
                        &format!("Bearer {}", crate::runtime::ADMIN_TOKEN),
                    )
                    .json(&json!({
                        "runId": format!("run-{cycle}-{uploader}-{n}"),
                        // A tenant per cycle: no cycle meets the
                        // storage quota the ones before it filled.
                        "tenantId": format!("t-{cycle}"),
                        "toolId": "stress.store",
                        "store": true,
                        "read": true,
                        "deadlineMs": 600_000
                    })),
            )
            .await;
        let Some(open) = open.filter(|r| r.status == 201) else {
            break;
        };
        let Some(token) = open.json_or_null()["toolFiles"]["token"]
            .as_str()
            .map(str::to_owned)
        else {
            break;
        };
        // Up to ten files a call.
        for file in 0..10 {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let size = 16 + (n * 7919 + file * 104_729) % max_bytes.max(17);
            let mut text = format!("cycle {cycle} uploader {uploader} call {n} file {file}\n");
            while text.len() < size {
                text.push_str("the quick brown fox jumps over the lazy dog\n");
            }
            let sha = hex::encode(Sha256::digest(text.as_bytes()));
            let answer = runtime
                .try_send(
                    crate::http::Request::post("/v1/tool-files")
                        .header("authorization", &format!("Bearer {token}"))
                        .header("content-type", "text/plain")
                        .header("kindgi-file-name", &format!("f{file}.txt"))
                        .body(text.into_bytes()),
                )
                .await;
            outcomes.push(match answer {
                Some(r)
                    if r.status == 200 && r.json_or_null()["file"]["artifactId"].is_string() =>
                {
                    Upload::Stored {
                        token: token.clone(),
                        artifact_id: r.json_or_null()["file"]["artifactId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        sha,
                    }
                }
                Some(_) => Upload::Refused,
                None => Upload::Cut,
            });
        }
        n += 1;
    }
    outcomes
}
