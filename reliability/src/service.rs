//! A pack service process: the stress pack, indexed into a temporary
//! folder and served on `127.0.0.1` port 0.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::proc;

/// How a [`PackService`] is started.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// `KINDGI_PACK_SERVICE_TOKEN`.
    pub token: String,
    /// More environment variables (the environment is otherwise cleared,
    /// but for `PATH`).
    pub env: Vec<(String, String)>,
    /// How long to wait for the `listening` record.
    pub boot_timeout: Duration,
    /// The open-files limits (soft, hard) to start the process with, set
    /// by `prlimit(1)`, which then runs the service itself (same process).
    pub open_files: Option<(u64, u64)>,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        Self {
            token: "reliability-pack-token".to_owned(),
            env: Vec::new(),
            boot_timeout: Duration::from_secs(30),
            open_files: None,
        }
    }
}

impl ServiceOptions {
    /// Adds an environment variable.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets `KINDGI_PACK_SERVICE_MAX_CONCURRENCY`.
    pub fn max_concurrency(self, n: usize) -> Self {
        self.env("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", &n.to_string())
    }

    /// Starts the process with these open-files limits (`prlimit(1)`).
    pub fn open_files(mut self, soft: u64, hard: u64) -> Self {
        self.open_files = Some((soft, hard));
        self
    }

    /// Sets the token.
    pub fn token(mut self, token: &str) -> Self {
        token.clone_into(&mut self.token);
        self
    }
}

/// Lines a child wrote, collected by a thread.
type Lines = Arc<Mutex<Vec<String>>>;

/// Whether a collecting thread may read its pipe (`true`), and the wake-up
/// of one waiting to.
type Gate = Arc<(Mutex<bool>, Condvar)>;

/// A running pack service. Killed when dropped.
#[derive(Debug)]
pub struct PackService {
    child: Child,
    port: u16,
    token: String,
    stderr: Lines,
    stderr_gate: Gate,
    stdout: Lines,
    exited: Option<ExitStatus>,
    index: PathBuf,
    dir: tempfile::TempDir,
}

impl PackService {
    /// Indexes the pack of `bin` (its folder: `pack_dir`) and serves it.
    ///
    /// # Panics
    ///
    /// When indexing fails, or the service writes no `listening` record in
    /// time.
    pub fn start(bin: &Path, pack_dir: &Path, options: &ServiceOptions) -> Self {
        Self::start_edited(bin, pack_dir, options, |_| {})
    }

    /// As [`PackService::start`], with the index edited by `edit` before
    /// it is served (the service compiles the schemas the index holds).
    ///
    /// # Panics
    ///
    /// As [`PackService::start`].
    pub fn start_edited(
        bin: &Path,
        pack_dir: &Path,
        options: &ServiceOptions,
        edit: impl FnOnce(&mut Value),
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let index = dir.path().join("index.json");
        let indexed = Command::new(bin)
            .args(["index", "--pack-dir"])
            .arg(pack_dir)
            .arg("--output")
            .arg(&index)
            .args(["--artifact-version", "20250101.1"])
            .output()
            .expect("run index");
        assert!(
            indexed.status.success(),
            "index failed: {}",
            String::from_utf8_lossy(&indexed.stderr)
        );
        let text = std::fs::read_to_string(&index).expect("read the index");
        let mut value: Value = serde_json::from_str(&text).expect("the index is JSON");
        let original = value.clone();
        edit(&mut value);
        if value != original {
            std::fs::write(&index, format!("{value:#}\n")).expect("write the index");
        }
        Self::serve(bin, index, dir, options)
    }

    fn serve(bin: &Path, index: PathBuf, dir: tempfile::TempDir, options: &ServiceOptions) -> Self {
        let mut command = match options.open_files {
            Some((soft, hard)) => {
                let mut command = Command::new("prlimit");
                command.arg(format!("--nofile={soft}:{hard}")).arg(bin);
                command
            }
            None => Command::new(bin),
        };
        command
            .args(["serve", "--index"])
            .arg(&index)
            .args(["--host", "127.0.0.1"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("KINDGI_PACK_SERVICE_TOKEN", &options.token)
            .env("PORT", "0")
            .env("KINDGI_LOG_FORMAT", "json")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in &options.env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("spawn the pack service");
        let stderr_gate: Gate = Arc::new((Mutex::new(true), Condvar::new()));
        let stderr = collect(
            child.stderr.take().expect("stderr"),
            Arc::clone(&stderr_gate),
        );
        let stdout = collect(
            child.stdout.take().expect("stdout"),
            Arc::new((Mutex::new(true), Condvar::new())),
        );
        let started = Instant::now();
        let port = loop {
            let found = stderr
                .lock()
                .expect("lines")
                .iter()
                .find_map(|line| listening_port(line));
            if let Some(port) = found {
                break u16::try_from(port).expect("a port");
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "the pack service exited ({status}) before listening: {}",
                    stderr.lock().expect("lines").join("\n")
                );
            }
            assert!(
                started.elapsed() < options.boot_timeout,
                "no listening record in {:?}",
                options.boot_timeout
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        Self {
            child,
            port,
            token: options.token.clone(),
            stderr,
            stderr_gate,
            stdout,
            exited: None,
            index,
            dir,
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The index file it serves.
    pub fn index(&self) -> &Path {
        &self.index
    }

    /// A folder that lives as long as the service, for files of a test.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// Every line written on stderr so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().expect("lines").clone()
    }

    /// Stops reading the service's stderr: once the pipe's buffer (and the
    /// reader's, a line or 8 KiB) is full, the service's writes to stderr
    /// block, as with a log collector that has stalled.
    pub fn stop_reading_stderr(&self) {
        *self.stderr_gate.0.lock().expect("gate") = false;
    }

    /// Reads the service's stderr again.
    pub fn resume_reading_stderr(&self) {
        *self.stderr_gate.0.lock().expect("gate") = true;
        self.stderr_gate.1.notify_all();
    }

    /// Everything written on stderr and stdout so far.
    pub fn output(&self) -> String {
        let mut all = self.stderr_lines().join("\n");
        all.push('\n');
        all.push_str(&self.stdout.lock().expect("lines").join("\n"));
        all
    }

    /// The JSON records on stderr so far.
    pub fn records(&self) -> Vec<Value> {
        self.stderr_lines()
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The records of one kind.
    pub fn records_of(&self, kind: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["kind"] == kind)
            .collect()
    }

    /// Resident memory now, in KiB.
    pub fn rss_kib(&self) -> u64 {
        proc::rss_kib(self.pid()).unwrap_or(0)
    }

    /// The most resident memory so far, in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        proc::peak_rss_kib(self.pid()).unwrap_or(0)
    }

    /// Its open-files limits now (soft, hard), from `/proc/<pid>/limits`.
    pub fn open_files_limits(&self) -> Option<(u64, u64)> {
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", self.pid())).ok()?;
        let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
        let mut numbers = line.split_whitespace().skip(3);
        Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
    }

    /// How many threads it runs.
    pub fn threads(&self) -> u64 {
        proc::threads(self.pid()).unwrap_or(0)
    }

    /// Open files (sockets included).
    pub fn open_fds(&self) -> usize {
        proc::open_fds(self.pid()).unwrap_or(0)
    }

    /// Sends SIGTERM.
    pub fn sigterm(&self) {
        assert!(proc::signal(self.pid(), "TERM"), "kill -TERM");
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.try_exit().is_none()
    }

    fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < timeout {
            if let Some(status) = self.try_exit() {
                // Let the reader threads take the last lines.
                std::thread::sleep(Duration::from_millis(50));
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    /// Waits up to `timeout` for a record of `kind`.
    pub fn wait_record(&self, kind: &str, timeout: Duration) -> Option<Value> {
        let started = Instant::now();
        loop {
            if let Some(found) = self.records_of(kind).into_iter().next() {
                return Some(found);
            }
            if started.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for PackService {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The port of a `listening` record: a JSON one, or a readable one
/// (`KINDGI_LOG_FORMAT=pretty`: `… Listening on port N port=N …`).
fn listening_port(line: &str) -> Option<u64> {
    if let Ok(record) = serde_json::from_str::<Value>(line) {
        return (record["kind"] == "listening")
            .then(|| record["port"].as_u64())
            .flatten();
    }
    let (_, rest) = line.split_once(" Listening on port ")?;
    rest.split(' ').next()?.parse().ok()
}

/// Collects a pipe's lines on a thread of its own, reading only while
/// `gate` is open.
fn collect(pipe: impl Read + Send + 'static, gate: Gate) -> Lines {
    let lines: Lines = Arc::default();
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            {
                let (open, wake) = &*gate;
                let mut open = open
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                while !*open {
                    open = wake
                        .wait(open)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    if let Ok(mut all) = sink.lock() {
                        all.push(text);
                    }
                }
            }
        }
    });
    lines
}
