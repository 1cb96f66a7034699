//! The target under test: how to index its pack and start its pack service
//! the way a runtime would, and what the started service writes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::process::{Child, Command};

use crate::http::{self, HttpRequest, HttpResponse};
pub use crate::output::{Line, Output};
use crate::output::{Stream, collect};
use crate::shell::shell_quote;
pub use crate::shell::split_command;

/// Why the harness couldn't do what a case asked.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The index command failed.
    #[error("the index command failed: {0}")]
    Index(String),
    /// The service process couldn't be started.
    #[error("cannot start the service `{program}`: {why}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        why: String,
    },
    /// The service exited, or never said it was listening.
    #[error("the service never wrote its `listening` record: {0}")]
    NotListening(String),
}

/// The pins the suite indexes with, so that indexing is reproducible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pins {
    /// `--artifact-version`.
    pub artifact_version: String,
    /// `--published-at`.
    pub published_at: String,
}

impl Default for Pins {
    /// `20261001.7` and `2026-10-01T12:00:00.000Z`.
    fn default() -> Self {
        Self {
            artifact_version: "20261001.7".to_owned(),
            published_at: "2026-10-01T12:00:00.000Z".to_owned(),
        }
    }
}

/// A pack service implementation to check: its serve command, its index
/// command and its pack folder.
///
/// ```
/// use kindgi_conformance::Target;
/// let target = Target::new(
///     vec!["node".into(), "serve.js".into()],
///     "npx kindgi-index --output {out} --artifact-version {artifactVersion} --published-at {publishedAt}",
///     "packs/conformance",
/// );
/// assert_eq!(target.pack_dir().to_str(), Some("packs/conformance"));
/// ```
#[derive(Debug, Clone)]
pub struct Target {
    serve: Vec<String>,
    index_command: String,
    pack_dir: PathBuf,
    boot_timeout: Duration,
}

impl Target {
    /// A target. `serve` is the service's argv before the arguments a
    /// runtime appends (`--index <out> --module-root <pack-dir> --host
    /// 127.0.0.1`). `index_command` is a shell command (run with `sh -c`)
    /// whose `{out}`, `{artifactVersion}` and `{publishedAt}` are replaced
    /// by shell-quoted values.
    pub fn new(
        serve: Vec<String>,
        index_command: impl Into<String>,
        pack_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            serve,
            index_command: index_command.into(),
            pack_dir: pack_dir.into(),
            boot_timeout: Duration::from_secs(30),
        }
    }

    /// How long a service may take to write its `listening` record (30 s
    /// unless set).
    #[must_use]
    pub fn boot_timeout(mut self, timeout: Duration) -> Self {
        self.boot_timeout = timeout;
        self
    }

    /// The pack folder.
    pub fn pack_dir(&self) -> &Path {
        &self.pack_dir
    }

    /// Runs the index command, writing the index to `out`.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Index`] when it can't run or exits non-zero.
    pub async fn index(&self, out: &Path, pins: &Pins) -> Result<(), HarnessError> {
        let command = self
            .index_command
            .replace("{out}", &shell_quote(&out.to_string_lossy()))
            .replace("{artifactVersion}", &shell_quote(&pins.artifact_version))
            .replace("{publishedAt}", &shell_quote(&pins.published_at));
        let output = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| HarnessError::Index(format!("cannot run `{command}`: {e}")))?;
        if !output.status.success() {
            return Err(HarnessError::Index(format!(
                "`{command}` exited with {}: {}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(())
    }

    /// Starts the service and returns it running, with its output being
    /// collected. See [`Target::start`] to wait until it listens.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Spawn`] when the process can't be started.
    pub fn spawn(&self, options: &StartOptions) -> Result<Process, HarnessError> {
        let (program, args) = self
            .serve
            .split_first()
            .ok_or_else(|| HarnessError::Spawn {
                program: String::new(),
                why: "the serve command is empty".to_owned(),
            })?;
        let mut command = Command::new(program);
        command
            .args(args)
            .arg("--index")
            .arg(&options.index)
            .arg("--module-root")
            .arg(&self.pack_dir)
            .arg("--host")
            .arg("127.0.0.1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // What a runtime sets, and nothing the caller's shell happened to
        // export under the service's own names.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("KINDGI_")
                || name == "PORT"
                || options.remove.iter().any(|r| *r == name)
            {
                command.env_remove(name.as_ref());
            }
        }
        command.env("PORT", "0").env("KINDGI_LOG_FORMAT", "json");
        if let Some(token) = &options.token {
            command.env("KINDGI_PACK_SERVICE_TOKEN", token);
        }
        for (name, value) in &options.env {
            command.env(name, value);
        }
        let mut child = command.spawn().map_err(|e| HarnessError::Spawn {
            program: program.clone(),
            why: e.to_string(),
        })?;
        let output = Arc::new(Output::default());
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(collect(stdout, Arc::clone(&output), Stream::Stdout));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(collect(stderr, Arc::clone(&output), Stream::Stderr));
        }
        Ok(Process {
            pid: child.id(),
            exited: AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            child: tokio::sync::Mutex::new(child),
            output,
            token: options
                .token
                .as_ref()
                .map(|t| t.trim().to_owned())
                .unwrap_or_default(),
        })
    }

    /// Starts the service and waits for its `listening` record.
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when it can't start, exits, or doesn't listen in time.
    pub async fn start(&self, options: &StartOptions) -> Result<Service, HarnessError> {
        let process = self.spawn(options)?;
        let listening = process
            .output
            .wait_for_record(
                |r| r.get("kind").and_then(Value::as_str) == Some("listening"),
                self.boot_timeout,
            )
            .await;
        let Some(record) = listening else {
            let exit = process.wait_exit(Duration::from_millis(200)).await;
            return Err(HarnessError::NotListening(format!(
                "{} within {} s; stderr: {}",
                match exit {
                    Some(code) => format!(
                        "it exited ({})",
                        code.map_or("signal".to_owned(), |c| format!("code {c}"))
                    ),
                    None => "it didn't".to_owned(),
                },
                self.boot_timeout.as_secs(),
                http::shorten(&process.output.stderr_lines().join("\n"), 2000)
            )));
        };
        let port = record
            .get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .ok_or_else(|| {
                HarnessError::NotListening(format!("its record has no port: {record}"))
            })?;
        Ok(Service {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            process,
        })
    }
}

/// A random token of 48 hex digits.
pub fn random_token() -> String {
    hex::encode(rand::random::<[u8; 24]>())
}

/// How one service is started: which index, which token, which extra env.
#[derive(Debug, Clone)]
pub struct StartOptions {
    index: PathBuf,
    token: Option<String>,
    env: Vec<(String, String)>,
    remove: Vec<String>,
}

impl StartOptions {
    /// Serve `index` with a fresh random token.
    pub fn new(index: impl Into<PathBuf>) -> Self {
        Self {
            index: index.into(),
            token: Some(random_token()),
            env: Vec::new(),
            remove: Vec::new(),
        }
    }

    /// Sets `KINDGI_PACK_SERVICE_TOKEN` to `token` exactly (`None`: unset).
    #[must_use]
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// The index it serves.
    pub fn index_path(&self) -> &Path {
        &self.index
    }

    /// The token it sets, as given.
    pub fn token_value(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Adds an env variable.
    #[must_use]
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Makes sure `name` isn't inherited.
    #[must_use]
    pub fn remove_env(mut self, name: &str) -> Self {
        self.remove.push(name.to_owned());
        self
    }
}

/// A started service process.
#[derive(Debug)]
pub struct Process {
    pid: Option<u32>,
    exited: AtomicBool,
    terminated: AtomicBool,
    child: tokio::sync::Mutex<Child>,
    output: Arc<Output>,
    token: String,
}

impl Process {
    /// What it wrote.
    pub fn output(&self) -> &Arc<Output> {
        &self.output
    }

    /// Its token, trimmed: what a runtime sends in `kindgi-pack-token`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Sends SIGTERM.
    ///
    /// # Errors
    ///
    /// When the signal can't be sent.
    pub async fn terminate(&self) -> Result<(), String> {
        let pid = self
            .pid
            .filter(|_| !self.exited.load(Ordering::SeqCst))
            .ok_or("the process has already exited")?;
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .await
            .map_err(|e| format!("cannot run kill: {e}"))?;
        if status.success() {
            self.terminated.store(true, Ordering::SeqCst);
            Ok(())
        } else {
            Err(format!("kill -TERM {pid} failed: {status}"))
        }
    }

    /// Waits up to `timeout` for it to exit: `Some(code)` (`None` inside
    /// for a signal), or `None` when it is still running.
    pub async fn wait_exit(&self, timeout: Duration) -> Option<Option<i32>> {
        let mut child = self.child.lock().await;
        match tokio::time::timeout(timeout, child.wait()).await {
            Ok(Ok(status)) => {
                self.exited.store(true, Ordering::SeqCst);
                Some(status.code())
            }
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// SIGTERM, unless [`Process::terminate`] already sent it, then,
    /// after `grace`, kill — as a platform stops a container: one SIGTERM,
    /// then SIGKILL. A second SIGTERM would be a different request (Node's
    /// default for it, once a service's own handler has run, is to exit
    /// on the spot).
    pub async fn stop(&self, grace: Duration) {
        let signalled = self.terminated.load(Ordering::SeqCst) || self.terminate().await.is_ok();
        if signalled && self.wait_exit(grace).await.is_some() {
            return;
        }
        let mut child = self.child.lock().await;
        let _ = child.kill().await;
    }
}

/// A service that is listening.
#[derive(Debug)]
pub struct Service {
    addr: SocketAddr,
    process: Process,
}

impl std::ops::Deref for Service {
    type Target = Process;

    fn deref(&self) -> &Process {
        &self.process
    }
}

impl Service {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends `request` to it over HTTP/1.1 ([`Transport::send`] speaks
    /// either).
    ///
    /// [`Transport::send`]: crate::Transport::send
    ///
    /// # Errors
    ///
    /// The transport problem, as text.
    pub async fn send(&self, request: &HttpRequest) -> Result<HttpResponse, String> {
        http::send(self.addr, request).await
    }

    /// `request` with its `kindgi-pack-token`.
    pub fn authed(&self, request: HttpRequest) -> HttpRequest {
        request.header("kindgi-pack-token", self.token())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service that drains on its first SIGTERM until `$RELEASE`
    /// exists, then takes a moment before it says `stopped`; a second
    /// SIGTERM makes it exit 3 on the spot, as Node does once a handler
    /// for the first has run.
    const DRAINS_ONCE: &str = r#"
trap 'echo draining; trap "exit 3" TERM
      while [ ! -e "$RELEASE" ]; do sleep 0.05; done
      sleep 0.5; echo stopped; exit 0' TERM
echo ready
while :; do sleep 0.05; done
"#;

    #[tokio::test]
    async fn stop_after_terminate_sends_no_second_sigterm() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let release = dir.path().join("release");
        let target = Target::new(
            vec!["sh".into(), "-c".into(), DRAINS_ONCE.into(), "sh".into()],
            "true",
            dir.path(),
        );
        let process = target
            .spawn(
                &StartOptions::new(dir.path().join("index.json"))
                    .env("RELEASE", release.to_string_lossy().as_ref()),
            )
            .expect("sh starts");
        let output = Arc::clone(process.output());
        let soon = Duration::from_secs(10);
        assert!(
            output
                .wait_for_stdout(|l| l == "ready", soon)
                .await
                .is_some()
        );
        process.terminate().await.expect("SIGTERM is sent");
        assert!(
            output
                .wait_for_stdout(|l| l == "draining", soon)
                .await
                .is_some()
        );
        std::fs::write(&release, b"").expect("the release file is written");

        process.stop(soon).await;

        assert_eq!(process.wait_exit(soon).await, Some(Some(0)));
        assert!(
            output
                .wait_for_stdout(|l| l == "stopped", soon)
                .await
                .is_some()
        );
        assert_eq!(output.stdout_lines(), ["ready", "draining", "stopped"]);
    }
}
