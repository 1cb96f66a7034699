//! A process under test that says where it listens: it is started with
//! its stdout and stderr collected line by line on threads of its own,
//! and waited for until it writes its `listening` record (a JSON line with
//! `"kind":"listening"` and `port`), which tells the test its port. It can
//! be signalled (`SIGTERM`), waited for, and is killed when dropped.

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One of a process's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Its standard output.
    Stdout,
    /// Its standard error.
    Stderr,
}

/// Where the `listening` record is looked for, and how long for.
#[derive(Debug, Clone, Copy)]
pub struct Listen {
    stream: Stream,
    first_line: bool,
    timeout: Duration,
}

impl Listen {
    /// Any line of `stream`, within 30 s.
    pub fn on(stream: Stream) -> Self {
        Self {
            stream,
            first_line: false,
            timeout: Duration::from_secs(30),
        }
    }

    /// Only the first line: a process whose first line must be it.
    #[must_use]
    pub fn first_line(mut self) -> Self {
        self.first_line = true;
        self
    }

    /// Waits up to `timeout` for the record.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// Why a process is not listening.
#[derive(Debug)]
pub enum StartError {
    /// It could not be spawned.
    Spawn(std::io::Error),
    /// It exited before it wrote the record; what it wrote on stderr
    /// until then.
    Exited(ExitStatus, String),
    /// No record within the timeout.
    Timeout(Duration),
    /// Its first line isn't the record (with [`Listen::first_line`]).
    FirstLine(String),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn(e) => write!(f, "cannot spawn: {e}"),
            Self::Exited(status, stderr) => {
                write!(f, "exited ({status}) before listening: {stderr}")
            }
            Self::Timeout(timeout) => write!(f, "no listening record in {timeout:?}"),
            Self::FirstLine(line) => write!(f, "the first line isn't a listening record: {line:?}"),
        }
    }
}

impl std::error::Error for StartError {}

/// Lines a child wrote, collected by a thread.
type Lines = Arc<Mutex<Vec<String>>>;

/// Whether a collecting thread may read its pipe (`true`), and the wake-up
/// of one waiting to.
type Gate = Arc<(Mutex<bool>, Condvar)>;

/// One collected stream: its lines, its gate and its reading thread.
#[derive(Debug)]
struct Collected {
    lines: Lines,
    gate: Gate,
    reader: Option<JoinHandle<()>>,
}

impl Collected {
    fn new(pipe: Option<impl Read + Send + 'static>) -> Self {
        let lines = Lines::default();
        let gate: Gate = Arc::new((Mutex::new(true), Condvar::new()));
        let reader = pipe.map(|pipe| collect(pipe, Arc::clone(&lines), Arc::clone(&gate)));
        Self {
            lines,
            gate,
            reader,
        }
    }

    fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_reading(&self, open: bool) {
        *self.gate.0.lock().unwrap_or_else(PoisonError::into_inner) = open;
        self.gate.1.notify_all();
    }

    fn done(&self) -> bool {
        self.reader.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

/// A running process that has written its `listening` record. Killed when
/// dropped.
#[derive(Debug)]
pub struct ListeningProcess {
    child: Child,
    record: Value,
    line: usize,
    port: u16,
    stdout: Collected,
    stderr: Collected,
    exited: Option<ExitStatus>,
}

impl ListeningProcess {
    /// Spawns `command` (stdin empty, stdout and stderr piped and
    /// collected) and waits for its `listening` record as `listen` says.
    ///
    /// # Errors
    ///
    /// [`StartError`] when it can't be spawned, exits first, or writes no
    /// record in time; it is killed then.
    pub fn start(command: &mut Command, listen: Listen) -> Result<Self, StartError> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(StartError::Spawn)?;
        let stdout = Collected::new(child.stdout.take());
        let stderr = Collected::new(child.stderr.take());
        let mut process = Self {
            child,
            record: Value::Null,
            line: 0,
            port: 0,
            stdout,
            stderr,
            exited: None,
        };
        let started = Instant::now();
        loop {
            // Whether it has exited is asked first: lines read before the
            // exit are all looked at before it counts as a failure.
            let exited = process.try_exit();
            if exited.is_some() {
                process.wait_for_readers(Duration::from_secs(1));
            }
            let lines = process.stream(listen.stream).lines();
            let scanned = if listen.first_line {
                &lines[..lines.len().min(1)]
            } else {
                &lines[..]
            };
            let found = scanned.iter().enumerate().find_map(|(at, line)| {
                listening_record(line).map(|(record, port)| (at, record, port))
            });
            if let Some((at, record, port)) = found {
                process.record = record;
                process.line = at;
                process.port = port;
                return Ok(process);
            }
            if let Some(first) = scanned.first().filter(|_| listen.first_line) {
                return Err(StartError::FirstLine(first.clone()));
            }
            if let Some(status) = exited {
                return Err(StartError::Exited(
                    status,
                    process.stderr_lines().join("\n"),
                ));
            }
            if started.elapsed() >= listen.timeout {
                return Err(StartError::Timeout(listen.timeout));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn stream(&self, stream: Stream) -> &Collected {
        match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        }
    }

    /// Where it listens: `127.0.0.1` and its port.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr())
    }

    /// The `listening` record (`Null` for the readable form of it).
    pub fn record(&self) -> &Value {
        &self.record
    }

    /// The lines of its stream up to and with the `listening` record.
    pub fn lines_to_listening(&self, stream: Stream) -> Vec<String> {
        self.stream(stream)
            .lines()
            .into_iter()
            .take(self.line + 1)
            .collect()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every line written on stdout so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lines()
    }

    /// Every line written on stderr so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// Everything written on stderr and then stdout so far.
    pub fn output(&self) -> String {
        let mut all = self.stderr_lines().join("\n");
        all.push('\n');
        all.push_str(&self.stdout_lines().join("\n"));
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

    /// Waits up to `timeout` for a record that `matches`.
    pub fn wait_record_where(
        &self,
        matches: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<Value> {
        let started = Instant::now();
        loop {
            if let Some(found) = self.records().into_iter().find(|r| matches(r)) {
                return Some(found);
            }
            if started.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits up to `timeout` until the records so far satisfy `holds`
    /// (checked every 10 ms); whether they did.
    pub fn wait_records(&self, holds: impl Fn(&[Value]) -> bool, timeout: Duration) -> bool {
        let started = Instant::now();
        loop {
            if holds(&self.records()) {
                return true;
            }
            if started.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits up to `timeout` for a record of `kind`.
    pub fn wait_record(&self, kind: &str, timeout: Duration) -> Option<Value> {
        self.wait_record_where(|r| r["kind"] == kind, timeout)
    }

    /// Stops reading its stderr: once the pipe's buffer (and the reader's,
    /// a line or 8 KiB) is full, its writes to stderr block, as with a log
    /// collector that has stalled.
    pub fn stop_reading_stderr(&self) {
        self.stderr.set_reading(false);
    }

    /// Reads its stderr again.
    pub fn resume_reading_stderr(&self) {
        self.stderr.set_reading(true);
    }

    /// Sends a signal (`TERM`, `KILL`, …) with `kill(1)`: whether it was
    /// sent.
    pub fn signal(&self, name: &str) -> bool {
        signal(self.pid(), name)
    }

    /// Sends `SIGTERM`.
    ///
    /// # Panics
    ///
    /// When it can't be sent.
    pub fn sigterm(&self) {
        assert!(self.signal("TERM"), "kill -TERM");
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.try_exit().is_none()
    }

    /// Its exit status, once it has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// Waits up to `timeout` for the process to exit; once it has, for the
    /// last of its output too (a second at most: a child of its own may
    /// hold the pipes).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < timeout {
            if let Some(status) = self.try_exit() {
                self.wait_for_readers(Duration::from_secs(1));
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    fn wait_for_readers(&self, limit: Duration) {
        let started = Instant::now();
        while !(self.stdout.done() && self.stderr.done()) && started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `SIGKILL`s it, as a crash would, and waits for it.
    pub fn kill(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            self.exited = self.child.wait().ok();
        }
    }
}

impl Drop for ListeningProcess {
    fn drop(&mut self) {
        self.stderr.set_reading(true);
        self.kill();
    }
}

/// Starts `bin runtime` (the dev runtime of the `kindgi` command) on
/// `127.0.0.1` port 0, its data in `data_dir`, `admin_token` its admin
/// token, with more `args`, and waits for its `listening` record: its first
/// line on stdout.
///
/// # Errors
///
/// As [`ListeningProcess::start`].
pub fn start_dev_runtime(
    bin: &Path,
    data_dir: &Path,
    admin_token: &str,
    args: &[&str],
) -> Result<ListeningProcess, StartError> {
    let mut command = Command::new(bin);
    command
        .arg("runtime")
        .args(["--port", "0", "--host", "127.0.0.1", "--data-dir"])
        .arg(data_dir)
        .args(args)
        .env("KINDGI_RUNTIME_ADMIN_TOKEN", admin_token);
    ListeningProcess::start(&mut command, Listen::on(Stream::Stdout).first_line())
}

/// Sends a signal (`TERM`, `KILL`, …) to `pid` with `kill(1)`: whether it
/// was sent.
pub fn signal(pid: u32, name: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

/// The record and port of a `listening` line: a JSON record, or a
/// readable one (`KINDGI_LOG_FORMAT=pretty`: `… Listening on port N …`).
fn listening_record(line: &str) -> Option<(Value, u16)> {
    if let Ok(record) = serde_json::from_str::<Value>(line) {
        if record["kind"] != "listening" {
            return None;
        }
        let port = record["port"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())?;
        return Some((record, port));
    }
    let (_, rest) = line.split_once(" Listening on port ")?;
    let port = rest.split(' ').next()?.parse().ok()?;
    Some((Value::Null, port))
}

/// Collects a pipe's lines on a thread of its own, reading only while
/// `gate` is open.
fn collect(pipe: impl Read + Send + 'static, lines: Lines, gate: Gate) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            {
                let (open, wake) = &*gate;
                let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
                while !*open {
                    open = wake.wait(open).unwrap_or_else(PoisonError::into_inner);
                }
            }
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    lines
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(text);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_port_of_either_form() {
        let (record, port) =
            listening_record(r#"{"kind":"listening","port":4123}"#).expect("a record");
        assert_eq!((record["port"].as_u64(), port), (Some(4123), 4123));
        assert_eq!(
            listening_record("12:00 INFO Listening on port 8080 port=8080").map(|r| r.1),
            Some(8080)
        );
        assert!(listening_record(r#"{"kind":"ready","port":1}"#).is_none());
    }

    #[test]
    fn waits_for_the_record_and_collects_what_follows() {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            r#"echo starting >&2; echo '{"kind":"listening","port":4555}' >&2; echo '{"kind":"stopped"}' >&2; echo out"#,
        ]);
        let mut process =
            ListeningProcess::start(&mut command, Listen::on(Stream::Stderr)).expect("listening");
        assert_eq!(process.port(), 4555);
        assert_eq!(process.lines_to_listening(Stream::Stderr).len(), 2);
        assert!(process.wait_exit(Duration::from_secs(10)).is_some());
        assert_eq!(process.records_of("stopped").len(), 1);
        assert_eq!(process.stdout_lines(), ["out"]);
    }

    #[test]
    fn a_first_line_that_isnt_the_record_is_an_error() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo hello; sleep 5"]);
        let err = ListeningProcess::start(&mut command, Listen::on(Stream::Stdout).first_line())
            .expect_err("not listening");
        assert!(
            matches!(err, StartError::FirstLine(ref line) if line == "hello"),
            "{err}"
        );
    }
}
