//! Starting a target as its own process, waiting for its `listening`
//! record, and reading its memory and CPU time from `/proc`.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How long a target may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How a target process is started.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// The executable.
    pub(crate) program: PathBuf,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// Extra environment, on top of the pack service variables every
    /// target gets.
    pub(crate) env: Vec<(String, String)>,
}

/// The pack service environment every target gets (CONTRACT §1).
fn service_env(token: &str) -> [(&'static str, String); 4] {
    [
        ("KINDGI_PACK_SERVICE_TOKEN", token.to_owned()),
        ("PORT", "0".to_owned()),
        ("KINDGI_LOG_FORMAT", "json".to_owned()),
        // Above the benchmark's highest concurrency (64): the cap answers
        // 503 at once, and this measures speed, not the cap.
        ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "128".to_owned()),
    ]
}

/// A running target. Killed when dropped.
#[derive(Debug)]
pub(crate) struct Service {
    child: Child,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// From spawning the process to reading its `listening` record.
    pub(crate) started_in: Duration,
    drain: Option<JoinHandle<()>>,
}

impl Service {
    /// Starts `launch` and waits for its `listening` record on stderr.
    pub(crate) fn start(launch: &Launch, token: &str) -> Result<Self> {
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .envs(service_env(token))
            .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let spawned_at = Instant::now();
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", launch.program.display()))?;
        let stderr = child.stderr.take().context("no stderr pipe")?;
        let (tx, rx) = mpsc::channel::<(Instant, u16)>();
        let drain = std::thread::spawn(move || read_stderr(stderr, &tx));
        let listening = rx.recv_timeout(LISTEN_TIMEOUT);
        let Ok((at, port)) = listening else {
            let _ = child.kill();
            let status = child.wait().ok();
            let _ = drain.join();
            bail!(
                "{} {:?} didn't write a listening record (exit: {status:?})",
                launch.program.display(),
                launch.args
            );
        };
        Ok(Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            started_in: at.duration_since(spawned_at),
            drain: Some(drain),
        })
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory now, in KiB (`VmRSS`).
    pub(crate) fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.pid())
    }

    /// CPU time used so far (user + system, every thread).
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        cpu_time(&format!("/proc/{}/stat", self.pid()))
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
    }
}

/// Reads stderr lines until the `listening` record, reports it, then
/// drains the rest (one `call` record per call) so the pipe never fills.
/// An unexpected early exit shows its stderr here.
fn read_stderr(stderr: impl Read, tx: &mpsc::Sender<(Instant, u16)>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stderr);
    let mut line = String::new();
    let mut seen = Vec::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => {
                for earlier in &seen {
                    eprintln!("  | {earlier}");
                }
                return;
            }
            Ok(_) => {}
        }
        let at = Instant::now();
        if let Some(port) = listening_port(&line) {
            let _ = tx.send((at, port));
            break;
        }
        if seen.len() < 20 {
            seen.push(line.trim_end().to_owned());
        }
    }
    let mut sink = vec![0u8; 64 * 1024];
    while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
}

/// The port of a `{"kind":"listening","port":N,…}` record.
fn listening_port(line: &str) -> Option<u16> {
    let record: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if record.get("kind")?.as_str()? != "listening" {
        return None;
    }
    u16::try_from(record.get("port")?.as_u64()?).ok()
}

/// `VmRSS` of a process, in KiB.
pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Clock ticks per second of `/proc/*/stat` times.
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

/// User + system CPU time from a `/proc/<pid>/stat` file.
pub(crate) fn cpu_time(stat_path: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(stat_path).ok()?;
    // The command name may hold spaces; fields after it are plain.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `after` starts at field 3.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64))
}

/// Samples a process's `VmRSS` every 20 ms until stopped; the highest.
#[derive(Debug)]
pub(crate) struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl RssSampler {
    /// Starts sampling `pid`.
    pub(crate) fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss_kib(pid).unwrap_or(0)));
        let thread = {
            let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(kib) = rss_kib(pid) {
                        peak.fetch_max(kib, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        Self {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// Stops sampling; the peak in KiB.
    pub(crate) fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_listening_port() {
        let ours = r#"{"time":"x","level":"info","message":"Listening on port 41","event":"listening","kind":"listening","port":41,"packId":"p"}"#;
        assert_eq!(listening_port(ours), Some(41));
        assert_eq!(listening_port(r#"{"kind":"listening","port":7}"#), Some(7));
        assert_eq!(listening_port(r#"{"kind":"env-dropped","port":7}"#), None);
        assert_eq!(listening_port("Listening on port 7"), None);
    }

    #[test]
    fn reads_own_cpu_time_and_memory() {
        assert!(cpu_time("/proc/self/stat").is_some());
        assert!(rss_kib(std::process::id()).is_some_and(|kib| kib > 0));
    }
}
