//! Per-core mode: each target on a CPU of its own, the load generator on
//! another, so that a target's numbers are one core's and the load
//! generator never takes its cycles. Pinning is `taskset` (util-linux):
//! the load generator pins itself (every thread) once, and each target is
//! started through `taskset -c`, which sets its CPU and then execs it
//! (same process id).

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::service::Launch;

/// The CPUs of a per-core run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PerCore {
    target_cpu: usize,
    loadgen_cpu: usize,
}

impl PerCore {
    /// Pins this process (the load generator, every thread it has) to CPU
    /// 1, and readies CPU 0 for the targets.
    ///
    /// # Errors
    ///
    /// With fewer than two CPUs, or when `taskset` is missing or fails.
    pub(crate) fn take() -> Result<Self> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cpus < 2 {
            bail!("--per-core needs two CPUs; this machine has {cpus}");
        }
        let pin = Self {
            target_cpu: 0,
            loadgen_cpu: 1,
        };
        let status = Command::new("taskset")
            .args(["-a", "-p", "-c"])
            .arg(pin.loadgen_cpu.to_string())
            .arg(std::process::id().to_string())
            .stdout(std::process::Stdio::null())
            .status()
            .context("running taskset (util-linux) to pin the load generator")?;
        if !status.success() {
            bail!("taskset could not pin the load generator: {status}");
        }
        Ok(pin)
    }

    /// `launch`, started through `taskset` on the targets' CPU.
    pub(crate) fn target(&self, launch: &Launch) -> Launch {
        let mut args = vec![
            "-c".to_owned(),
            self.target_cpu.to_string(),
            launch.program.display().to_string(),
        ];
        args.extend(launch.args.iter().cloned());
        Launch {
            program: "taskset".into(),
            args,
            env: launch.env.clone(),
        }
    }

    /// The report's line about the mode.
    pub(crate) fn describe(&self) -> String {
        format!(
            "Per core: every target pinned to CPU {} and the load generator (one thread) to CPU {}, with taskset; a target's start time includes taskset's exec",
            self.target_cpu, self.loadgen_cpu
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_runs_through_taskset_on_its_cpu() {
        let pin = PerCore {
            target_cpu: 0,
            loadgen_cpu: 1,
        };
        let launch = Launch {
            program: "/bin/pack".into(),
            args: vec!["serve".into()],
            env: vec![("A".into(), "1".into())],
        };
        let pinned = pin.target(&launch);
        assert_eq!(pinned.program, std::path::PathBuf::from("taskset"));
        assert_eq!(pinned.args, ["-c", "0", "/bin/pack", "serve"]);
        assert_eq!(pinned.env, launch.env);
    }
}
