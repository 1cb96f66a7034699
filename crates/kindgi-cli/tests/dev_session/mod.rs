//! A `kindgi dev` session for the tests: the real binary on a pack folder,
//! building into the workspace's target folder, its output lines kept.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kindgi_test_kit::process::signal;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The front's token.
pub const TOKEN: &str = "dev-test-token";

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The workspace's target folder, which every build here shares.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

/// A running `kindgi dev`, its stdout and stderr lines kept.
pub struct Dev {
    pub child: tokio::process::Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Dev {
    /// Starts `kindgi dev` on `pack`, its state in `state`, building into
    /// `target`, with `envs` set too.
    pub fn start(pack: &Path, state: &Path, target: &Path, envs: &[(&str, &Path)]) -> Self {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_kindgi"))
            .args(["dev", "--port", "0", "--token", TOKEN, "--pack-dir"])
            .arg(pack)
            .arg("--state-dir")
            .arg(state)
            .current_dir(pack)
            .env("CARGO_TARGET_DIR", target)
            .env("CARGO_NET_OFFLINE", "true")
            .envs(envs.iter().copied())
            .env_remove("KINDGI_DEV_TOKEN")
            .env_remove("KINDGI_DEV_PORT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn kindgi dev");
        let lines = Arc::new(Mutex::new(Vec::new()));
        for reader in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let lines = Arc::clone(&lines);
            tokio::spawn(async move {
                let mut reader = BufReader::new(reader).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    eprintln!("dev> {line}");
                    lines.lock().expect("lines").push(line);
                }
            });
        }
        Self { child, lines }
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("dev's pid")
    }

    /// Lines seen so far.
    pub fn seen(&self) -> Vec<String> {
        self.lines.lock().expect("lines").clone()
    }

    /// Waits for a line (after the first `skip` lines) that `matches`.
    pub async fn wait_line(
        &self,
        skip: usize,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        let until = Instant::now() + timeout;
        loop {
            if let Some(line) = self.seen().iter().skip(skip).find(|l| matches(l)) {
                return line.clone();
            }
            assert!(
                Instant::now() < until,
                "no matching line within {timeout:?}; saw:\n{}",
                self.seen().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        // Never leave pack processes behind, even when the test failed.
        if let Ok(None) = self.child.try_wait() {
            signal(self.pid(), "INT");
            let until = Instant::now() + Duration::from_secs(15);
            while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Whether `pid` runs.
pub fn alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs a command line as printed, in a shell whose `PATH` finds this
/// `kindgi` first.
pub async fn run_as_printed(line: &str, dir: &Path) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_kindgi"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    tokio::process::Command::new("sh")
        .args(["-c", line])
        .env("PATH", path)
        .env_remove("KINDGI_SERVICE_URL")
        .env_remove("KINDGI_SERVICE_TOKEN")
        .env_remove("KINDGI_PACK_INDEX")
        .current_dir(dir)
        .output()
        .await
        .expect("the line runs")
}
