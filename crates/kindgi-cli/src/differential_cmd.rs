//! `kindgi differential`: one corpus of requests sent to two pack services
//! serving the conformance fixture pack, their answers and records compared.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use kindgi_conformance::Target;
use kindgi_conformance::differential::{Differential, parse_accepted, probe_ids};
use kindgi_conformance::harness::split_command;

use crate::out::say;

/// Options of `kindgi differential`.
#[derive(Debug, Args)]
pub(crate) struct DifferentialArgs {
    /// The service under test's command line, before what a runtime
    /// appends (as `kindgi conformance --serve-command`).
    #[arg(long, value_name = "ARGV", required_unless_present = "list")]
    serve_command: Option<String>,
    /// A shell command that writes its pack's index (as `kindgi
    /// conformance --index-command`).
    #[arg(long, value_name = "SHELL", required_unless_present = "list")]
    index_command: Option<String>,
    /// Its conformance fixture pack's folder.
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    pack_dir: Option<PathBuf>,
    /// The reference service's command line.
    #[arg(long, value_name = "ARGV", required_unless_present = "list")]
    reference_serve_command: Option<String>,
    /// The shell command that writes the reference's index.
    #[arg(long, value_name = "SHELL", required_unless_present = "list")]
    reference_index_command: Option<String>,
    /// The reference's fixture pack folder.
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    reference_pack_dir: Option<PathBuf>,
    /// A Markdown document whose table rows list the accepted differences:
    /// `` | `probe` | part | why | `` (part: `status`, `header <name>`,
    /// `body` or `records`, each with a JSON pointer to narrow it, `*` for
    /// any one segment; a probe ending in `*` is a prefix).
    #[arg(long, value_name = "FILE")]
    accepted: Option<PathBuf>,
    /// How long each service may take to write its `listening` record, in ms.
    #[arg(long, default_value_t = 30_000)]
    boot_timeout_ms: u64,
    /// List the probes' ids and exit.
    #[arg(long)]
    list: bool,
}

/// Runs the corpus against both; exits 1 on a difference not accepted, an
/// accepted one that didn't occur, or a run that couldn't be made.
pub(crate) async fn run(args: DifferentialArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        for id in probe_ids() {
            say(&id);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let boot = Duration::from_millis(args.boot_timeout_ms);
    let ours = target(
        "--serve-command",
        args.serve_command,
        args.index_command,
        args.pack_dir,
    )?
    .boot_timeout(boot);
    let reference = target(
        "--reference-serve-command",
        args.reference_serve_command,
        args.reference_index_command,
        args.reference_pack_dir,
    )?
    .boot_timeout(boot);
    let accepted = match &args.accepted {
        Some(path) => {
            let document = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            parse_accepted(&document)
                .map_err(anyhow::Error::msg)
                .with_context(|| path.display().to_string())?
        }
        None => Vec::new(),
    };
    let report = Differential::new(ours, reference)
        .accept(accepted)
        .run(say)
        .await;
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// A target from its three options (`flag` names the serve command's).
fn target(
    flag: &str,
    serve: Option<String>,
    index: Option<String>,
    pack_dir: Option<PathBuf>,
) -> anyhow::Result<Target> {
    let (Some(serve), Some(index), Some(pack_dir)) = (serve, index, pack_dir) else {
        bail!("{flag} and its index command and pack folder are required");
    };
    let argv = split_command(&serve)
        .map_err(anyhow::Error::msg)
        .with_context(|| flag.to_owned())?;
    if argv.is_empty() {
        bail!("{flag} is empty");
    }
    Ok(Target::new(argv, index, pack_dir))
}
