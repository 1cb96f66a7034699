//! What the kernel knows about a process (Linux `/proc`), and signals.

use std::process::Command;

/// A field of `/proc/<pid>/status` in kibibytes (`VmRSS`, `VmHWM`, …).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Resident memory now (`VmRSS`), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS")
}

/// The most resident memory so far (`VmHWM`), in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM")
}

/// How many files (sockets included) the process has open.
pub fn open_fds(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}

/// How many threads the process has.
pub fn threads(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
}

/// The bytes of `/proc/<pid>/environ`.
pub fn environ(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/environ")).ok()
}

/// The bytes of `/proc/<pid>/cmdline`.
pub fn cmdline(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/cmdline")).ok()
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

pub use kindgi_test_kit::process::signal;

/// Samples a process's resident memory on a thread of its own until
/// stopped: the largest `VmRSS` seen, in KiB.
#[derive(Debug)]
pub struct RssSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl RssSampler {
    /// Starts sampling `pid` every `every`.
    pub fn start(pid: u32, every: std::time::Duration) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut max = 0;
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                match rss_kib(pid) {
                    Some(kib) => max = max.max(kib),
                    None => break,
                }
                std::thread::sleep(every);
            }
            max
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops sampling: the largest resident memory seen, in KiB.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

/// Whether the process has exited: gone, or a zombie not yet waited for.
pub fn has_exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state == "Z" || state == "X"),
    }
}

/// Watches for a process's exit on a thread of its own: the instant it
/// was first seen gone (within `every`), or `None` after `limit`.
pub fn watch_exit(
    pid: u32,
    every: std::time::Duration,
    limit: std::time::Duration,
) -> std::thread::JoinHandle<Option<std::time::Instant>> {
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if has_exited(pid) {
                return Some(std::time::Instant::now());
            }
            std::thread::sleep(every);
        }
        None
    })
}

/// The soft limit of open files of this process (`Max open files` in
/// `/proc/self/limits`); a child inherits it.
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
}

/// Raises the soft limit of open files of this process to `want`, or to
/// its hard limit if that is lower, with `prlimit(1)`; processes started
/// after it inherit it. Returns the soft limit then.
pub fn raise_open_files_limit(want: u64) -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let hard: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    let soft = open_files_limit()?;
    let target = want.min(hard);
    if soft < target {
        let _ = Command::new("prlimit")
            .arg("--pid")
            .arg(std::process::id().to_string())
            .arg(format!("--nofile={target}:"))
            .status();
    }
    open_files_limit()
}

/// How many connections a test may hold open at once: up to `want`, and
/// no more than a quarter of what the open-files limit leaves once
/// 300 descriptors are kept back (tests run side by side).
pub fn connections_budget(want: usize) -> usize {
    let limit = open_files_limit().unwrap_or(1024);
    let spare = usize::try_from(limit.saturating_sub(300)).unwrap_or(usize::MAX) / 4;
    want.min(spare.max(50))
}
