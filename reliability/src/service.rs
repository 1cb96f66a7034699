//! A pack service process: the stress pack, indexed into a temporary
//! folder and served on `127.0.0.1` port 0.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kindgi_test_kit::process::{Listen, ListeningProcess, StartError, Stream};
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

/// A running pack service. Killed when dropped; it derefs to its
/// process (port, output, records, signals, exit).
#[derive(Debug)]
pub struct PackService {
    process: ListeningProcess,
    token: String,
    index: PathBuf,
    dir: tempfile::TempDir,
}

impl std::ops::Deref for PackService {
    type Target = ListeningProcess;

    fn deref(&self) -> &ListeningProcess {
        &self.process
    }
}

impl std::ops::DerefMut for PackService {
    fn deref_mut(&mut self) -> &mut ListeningProcess {
        &mut self.process
    }
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
            .env("KINDGI_LOG_FORMAT", "json");
        for (name, value) in &options.env {
            command.env(name, value);
        }
        let listen = Listen::on(Stream::Stderr).timeout(options.boot_timeout);
        let process = match ListeningProcess::start(&mut command, listen) {
            Ok(process) => process,
            Err(StartError::Spawn(e)) => panic!("spawn the pack service: {e}"),
            Err(StartError::Exited(status, stderr)) => {
                panic!("the pack service exited ({status}) before listening: {stderr}")
            }
            Err(e) => panic!("{e}"),
        };
        Self {
            process,
            token: options.token.clone(),
            index,
            dir,
        }
    }

    /// Its token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The index file it serves.
    pub fn index(&self) -> &Path {
        &self.index
    }

    /// A folder that lives as long as the service, for files of a test.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
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
}
