//! One pack service process: `<bin> serve` on a free port with dev's own
//! token and the environment a deployed pack would have, its log records
//! shown as readable lines, its boot awaited, its exit reported.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::{Notify, mpsc, oneshot};

use super::build::Failure;
use crate::inspector::logs::Logs;

/// How long a process may take from start to its `listening` record.
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);

/// A process exited: its id and how.
#[derive(Debug)]
pub(crate) struct Exited {
    /// The process's id in [`Children`] (not its pid).
    pub(crate) id: u64,
    /// Its exit status, in words.
    pub(crate) status: String,
}

/// A started pack service, listening.
#[derive(Debug, Clone)]
pub(crate) struct Process {
    /// Its id in [`Children`].
    pub(crate) id: u64,
    /// Its pid.
    pub(crate) pid: u32,
    /// The port it listens on, on 127.0.0.1.
    pub(crate) port: u16,
}

/// Every process dev started that hasn't exited yet, so that none
/// outlives it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    inner: Arc<ChildrenInner>,
}

#[derive(Debug, Default)]
struct ChildrenInner {
    /// id → (pid, how to kill it).
    running: Mutex<HashMap<u64, (u32, Arc<Notify>)>>,
    next_id: Mutex<u64>,
    /// Notified whenever one exits.
    exited: Notify,
}

impl Children {
    fn add(&self, pid: u32, kill: Arc<Notify>) -> u64 {
        let id = match self.inner.next_id.lock() {
            Ok(mut next) => {
                *next += 1;
                *next
            }
            Err(_) => u64::from(pid),
        };
        if let Ok(mut running) = self.inner.running.lock() {
            running.insert(id, (pid, kill));
        }
        id
    }

    fn remove(&self, id: u64) {
        if let Ok(mut running) = self.inner.running.lock() {
            running.remove(&id);
        }
        self.inner.exited.notify_waiters();
    }

    fn count(&self) -> usize {
        self.inner.running.lock().map_or(0, |r| r.len())
    }

    /// Asks process `id` to finish its calls and stop (SIGTERM: the pack
    /// service drains for up to 8 s).
    pub(crate) fn terminate(&self, id: u64) {
        let entry = self
            .inner
            .running
            .lock()
            .ok()
            .and_then(|r| r.get(&id).cloned());
        if let Some((pid, kill)) = entry
            && !sigterm(pid)
        {
            kill.notify_one();
        }
    }

    /// Stops every process: SIGTERM, then a kill for any still running
    /// after `grace`.
    pub(crate) async fn stop_all(&self, grace: Duration) {
        let all: Vec<(u32, Arc<Notify>)> = self
            .inner
            .running
            .lock()
            .map(|r| r.values().cloned().collect())
            .unwrap_or_default();
        for (pid, kill) in &all {
            if !sigterm(*pid) {
                kill.notify_one();
            }
        }
        let _ = tokio::time::timeout(grace, async {
            loop {
                let exited = self.inner.exited.notified();
                if self.count() == 0 {
                    return;
                }
                exited.await;
            }
        })
        .await;
        let left: Vec<Arc<Notify>> = self
            .inner
            .running
            .lock()
            .map(|r| r.values().map(|(_, kill)| Arc::clone(kill)).collect())
            .unwrap_or_default();
        for kill in left {
            kill.notify_one();
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while self.count() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// Sends SIGTERM; `false` when it can't be sent (not Unix).
#[cfg(unix)]
fn sigterm(pid: u32) -> bool {
    use rustix::process::{Pid, Signal, kill_process};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    // An error means it has already exited: nothing to stop.
    let _ = kill_process(pid, Signal::TERM);
    true
}

#[cfg(not(unix))]
fn sigterm(_pid: u32) -> bool {
    false
}

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// The pack binary.
    pub(crate) executable: PathBuf,
    /// Its index.
    pub(crate) index: PathBuf,
    /// The folder it runs in (the pack's).
    pub(crate) dir: PathBuf,
    /// Its environment, before the service's own variables (see
    /// [`super::env`]).
    pub(crate) env: Vec<(OsString, OsString)>,
    /// The token it checks.
    pub(crate) token: String,
    /// Its generation, for the log prefix.
    pub(crate) generation: u64,
    /// Where its log records are kept for the inspector too.
    pub(crate) logs: Option<Arc<Logs>>,
}

/// How the boot ended.
enum Boot {
    Listening(u16),
    Failed(String, Vec<String>),
}

/// Starts `<bin> serve` and waits for its `listening` record; its exit,
/// whenever it comes, is sent on `exits`.
pub(crate) async fn start(
    launch: &Launch,
    children: &Children,
    exits: mpsc::UnboundedSender<Exited>,
) -> Result<Process, Failure> {
    let mut command = Command::new(&launch.executable);
    command
        .arg("serve")
        .arg("--index")
        .arg(&launch.index)
        .args(["--host", "127.0.0.1"])
        .current_dir(&launch.dir)
        .env_clear()
        .envs(launch.env.iter().map(|(name, value)| (name, value)))
        .env("KINDGI_PACK_SERVICE_TOKEN", &launch.token)
        .env("PORT", "0")
        .env("KINDGI_LOG_FORMAT", "json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // In development a missing required variable shouldn't block every call.
    if !launch
        .env
        .iter()
        .any(|(name, _)| name == "KINDGI_PACK_ENV_CHECK")
    {
        command.env("KINDGI_PACK_ENV_CHECK", "warn");
    }
    let failed = |headline: String| Failure::new(headline, Vec::new());
    let mut child = command
        .spawn()
        .map_err(|e| failed(format!("cannot start {}: {e}", launch.executable.display())))?;
    let pid = child.id().unwrap_or_default();
    let kill = Arc::new(Notify::new());
    let id = children.add(pid, Arc::clone(&kill));
    let prefix = format!("[gen {}]", launch.generation);

    let (booted, boot) = oneshot::channel();
    if let Some(stderr) = child.stderr.take() {
        let kept = launch.logs.clone().map(|logs| (logs, launch.generation));
        tokio::spawn(show_log(stderr, prefix.clone(), booted, kept));
    }
    if let Some(stdout) = child.stdout.take() {
        let prefix = prefix.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("{prefix} {line}");
            }
        });
    }
    let (exited_tx, exited_rx) = oneshot::channel::<String>();
    let waiter_children = children.clone();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            () = kill.notified() => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        let status = match status {
            Ok(status) => status.to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        waiter_children.remove(id);
        let _ = exited_tx.send(status.clone());
        let _ = exits.send(Exited { id, status });
    });

    let outcome = tokio::time::timeout(BOOT_TIMEOUT, boot).await;
    match outcome {
        Ok(Ok(Boot::Listening(port))) => Ok(Process { id, pid, port }),
        Ok(Ok(Boot::Failed(kind, problems))) => Err(Failure::new(
            format!("the pack service failed to boot ({kind})"),
            problems,
        )),
        Ok(Err(_)) => match tokio::time::timeout(Duration::from_secs(5), exited_rx).await {
            Ok(status) => Err(failed(format!(
                "the pack service exited before listening ({})",
                status.unwrap_or_else(|_| "unknown".to_owned())
            ))),
            Err(_) => {
                children.terminate(id);
                Err(failed(
                    "the pack service closed its log before listening".to_owned(),
                ))
            }
        },
        Err(_) => {
            children.terminate(id);
            Err(failed(format!(
                "the pack service didn't listen within {} s",
                BOOT_TIMEOUT.as_secs()
            )))
        }
    }
}

/// Shows the service's log records as lines, keeps them in `kept` (the
/// inspector's ring, with the generation), and reports how its boot ended.
async fn show_log(
    stderr: tokio::process::ChildStderr,
    prefix: String,
    booted: oneshot::Sender<Boot>,
    kept: Option<(Arc<Logs>, u64)>,
) {
    let mut booted = Some(booted);
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            eprintln!("{prefix} {line}");
            if let Some((logs, generation)) = &kept {
                logs.push(*generation, Value::String(line));
            }
            continue;
        };
        if let Some((logs, generation)) = &kept {
            logs.push(*generation, record.clone());
        }
        if !repeated_warning(&record) {
            eprintln!("{}", readable(&prefix, &record));
        }
        let boot = match record["kind"].as_str() {
            Some("listening") => record["port"]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .map(Boot::Listening),
            Some(kind @ ("boot-failed" | "config-invalid")) => {
                Some(Boot::Failed(kind.to_owned(), problems(&record)))
            }
            _ => None,
        };
        if let Some(boot) = boot
            && let Some(sender) = booted.take()
        {
            let _ = sender.send(boot);
        }
    }
}

/// Whether `record` is an env warning some earlier process of this session
/// already printed word for word: each generation would repeat it.
fn repeated_warning(record: &Value) -> bool {
    static SHOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    if !matches!(record["kind"].as_str(), Some("env-dropped" | "missing-env")) {
        return false;
    }
    let message = record["message"].as_str().unwrap_or_default().to_owned();
    let Ok(mut shown) = SHOWN.lock() else {
        return false;
    };
    if shown.contains(&message) {
        true
    } else {
        shown.push(message);
        false
    }
}

/// `text` with its control characters (and line or paragraph separators)
/// written as escapes: `\n`, `\r`, `\t`, else `\u{…}`.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

fn problems(record: &Value) -> Vec<String> {
    record["problems"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The keys every record of the service has, or may: what a line shows
/// apart from a handler's own fields.
const RECORD_KEYS: &[&str] = &[
    "time",
    "level",
    "severity",
    "subsystem",
    "message",
    "event",
    "kind",
    "traceId",
    "spanId",
    "requestId",
    "tenantId",
    "projectId",
    "orgId",
    "runId",
    "toolId",
    "packId",
    "artifactVersion",
];

/// One log record as a line: level (unless info), message, a handler's own
/// fields (`order="O-1"`, as JSON, by name), and its problems under it. What the
/// record carries is escaped, so that no part of it can end the line or
/// reach the terminal as a control sequence.
pub(crate) fn readable(prefix: &str, record: &Value) -> String {
    let message = escaped(record["message"].as_str().unwrap_or_default());
    let level = record["level"].as_str().unwrap_or("info");
    let mut line = if level == "info" {
        format!("{prefix} {message}")
    } else {
        format!("{prefix} {}: {message}", escaped(level))
    };
    // A handler's `tracing` event: a record of no kind of the service's.
    if record.get("kind").is_none()
        && let Some(fields) = record.as_object()
    {
        for (key, value) in fields {
            if !RECORD_KEYS.contains(&key.as_str()) {
                line.push_str(&format!(
                    " {}={}",
                    escaped(key),
                    escaped(&value.to_string())
                ));
            }
        }
    }
    if record["kind"] == "panic"
        && let Some(location) = record["location"].as_str()
    {
        line.push_str(&format!(" at {location}"));
    }
    for problem in problems(record) {
        line.push_str(&format!("\n{prefix}   - {problem}"));
    }
    line
}

/// A per-generation copy of the binary, so a later build can't change
/// what a running (or restarted) generation executes: a hard link when
/// possible, else a copy.
pub(crate) fn keep_binary(executable: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let name = executable
        .file_name()
        .map_or_else(|| "pack".into(), std::ffi::OsStr::to_os_string);
    let kept = dir.join(name);
    let _ = std::fs::remove_file(&kept);
    if std::fs::hard_link(executable, &kept).is_err() {
        std::fs::copy(executable, &kept)?;
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stand-in pack binary: a shell script that prints `stderr` and then
    /// runs `then`.
    #[cfg(unix)]
    fn fake_pack(dir: &Path, stderr: &str, then: &str) -> Launch {
        use std::os::unix::fs::PermissionsExt as _;
        let script = dir.join("pack");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat >&2 <<'EOF'\n{stderr}\nEOF\n{then}\n"),
        )
        .expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Launch {
            executable: script,
            index: dir.join("index.json"),
            dir: dir.to_path_buf(),
            env: super::super::env::pack_env(std::env::vars_os(), &[], &[]),
            token: "t".to_owned(),
            generation: 7,
            logs: None,
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_boot_failure_reports_its_problems() {
        let dir = tempfile::tempdir().expect("dir");
        let record = json!({"level": "error", "kind": "boot-failed",
            "message": "The pack service failed to boot", "problems": ["Missing module: src/a.rs"]});
        let launch = fake_pack(dir.path(), &record.to_string(), "exit 1");
        let (exits, mut exited) = mpsc::unbounded_channel();
        let children = Children::default();
        let failure = start(&launch, &children, exits)
            .await
            .expect_err("boot fails");
        assert_eq!(
            failure,
            Failure::new(
                "the pack service failed to boot (boot-failed)",
                vec!["Missing module: src/a.rs".to_owned()]
            )
        );
        let exit = exited.recv().await.expect("exit reported");
        assert_eq!(exit.status, "exit status: 1");
        assert_eq!(children.count(), 0);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn an_early_exit_and_a_listening_process() {
        let dir = tempfile::tempdir().expect("dir");
        let children = Children::default();
        let (exits, mut exited) = mpsc::unbounded_channel();

        let crash = fake_pack(dir.path(), "thread 'main' panicked", "exit 101");
        let failure = start(&crash, &children, exits.clone())
            .await
            .expect_err("no listening record");
        assert_eq!(
            failure.headline,
            "the pack service exited before listening (exit status: 101)"
        );
        let _ = exited.recv().await;

        let listening = json!({"level": "info", "kind": "listening", "message": "Listening on port 4321", "port": 4321});
        let serving = fake_pack(dir.path(), &listening.to_string(), "exec sleep 30");
        let process = start(&serving, &children, exits).await.expect("listening");
        assert_eq!(process.port, 4321);
        assert_eq!(children.count(), 1);
        children.stop_all(Duration::from_secs(5)).await;
        let exit = exited.recv().await.expect("exit reported");
        assert_eq!(exit.id, process.id);
        assert_eq!(children.count(), 0);
    }

    #[test]
    fn records_read_as_lines() {
        assert_eq!(
            readable(
                "[gen 1]",
                &json!({"level": "info", "message": "Listening on port 1"})
            ),
            "[gen 1] Listening on port 1"
        );
        assert_eq!(
            readable(
                "[gen 2]",
                &json!({"level": "error", "kind": "boot-failed", "message": "The pack service failed to boot",
                        "problems": ["Missing module: src/a.rs"]})
            ),
            "[gen 2] error: The pack service failed to boot\n[gen 2]   - Missing module: src/a.rs"
        );
    }

    #[test]
    fn a_handler_s_fields_show_escaped() {
        let record = json!({
            "time": "t", "level": "info", "severity": "INFO", "subsystem": "pack",
            "message": "charged\nforged", "runId": "r1", "toolId": "acme.charge",
            "order": "O-1", "amount": 7, "note": "a\u{1b}[31m", "packId": "acme",
            "artifactVersion": "1"
        });
        assert_eq!(
            readable("[gen 1]", &record),
            r#"[gen 1] charged\nforged amount=7 note="a\u001b[31m" order="O-1""#
        );
        // The service's own records keep their one line.
        let listening = json!({"level": "info", "kind": "listening", "message": "Listening on port 1", "port": 1});
        assert_eq!(
            readable("[gen 1]", &listening),
            "[gen 1] Listening on port 1"
        );
    }
}
