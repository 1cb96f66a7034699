//! `kindgi conformance`: the conformance suite against a pack service
//! implementation in any language.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use kindgi_conformance::harness::split_command;
use kindgi_conformance::{Feature, Suite, Target, Transport};

use crate::out::say;

/// Options of `kindgi conformance`.
#[derive(Debug, Args)]
pub(crate) struct ConformanceArgs {
    /// The service's command line, before what a runtime appends
    /// (`--index <out> --module-root <pack-dir> --host 127.0.0.1`); split
    /// like a shell splits words and quotes.
    #[arg(long, value_name = "ARGV", required_unless_present = "list")]
    serve_command: Option<String>,
    /// A shell command that writes the pack's index; `{out}`,
    /// `{artifactVersion}` and `{publishedAt}` are replaced by quoted values.
    #[arg(long, value_name = "SHELL", required_unless_present = "list")]
    index_command: Option<String>,
    /// The conformance fixture pack's folder (passed as `--module-root`).
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    pack_dir: Option<PathBuf>,
    /// Skip every case of a feature (repeatable): core, index, process,
    /// env, logs, 2.7-tenant, 2.7-index-hash, 2.8-pause, 2.9-connections,
    /// 2.10-files, rust-only. `FEATURE=REASON` prints the reason on each
    /// skipped case's line.
    #[arg(long = "skip", value_name = "FEATURE[=REASON]", value_parser = parse_skip)]
    skip: Vec<Skip>,
    /// Run only the cases whose id starts with this.
    #[arg(long, value_name = "PREFIX")]
    only: Option<String>,
    /// How long the service may take to write its `listening` record, in ms.
    #[arg(long, default_value_t = 30_000)]
    boot_timeout_ms: u64,
    /// Speak HTTP/2 over cleartext with prior knowledge (h2c), as a
    /// runtime behind Cloud Run's end-to-end HTTP/2 does, instead of
    /// HTTP/1.1. A case only HTTP/1.1 framing can express (a chunked body)
    /// is skipped, its line saying why.
    #[arg(long)]
    http2: bool,
    /// List the cases (id, feature, what each checks) and exit.
    #[arg(long)]
    list: bool,
}

/// A `--skip`: the feature, and why, when given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Skip {
    feature: Feature,
    reason: Option<String>,
}

/// `FEATURE` or `FEATURE=REASON` (a reason isn't empty).
fn parse_skip(value: &str) -> Result<Skip, String> {
    let (feature, reason) = match value.split_once('=') {
        Some((feature, reason)) => {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(format!("{value:?}: the reason after `=` is empty"));
            }
            (feature, Some(reason.to_owned()))
        }
        None => (value, None),
    };
    Ok(Skip {
        feature: feature.trim().parse()?,
        reason,
    })
}

/// Runs the suite; exits 1 when a case failed.
pub(crate) async fn run(args: ConformanceArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        for case in kindgi_conformance::cases() {
            say(&format!(
                "{}\t{}\t{}",
                case.id(),
                case.feature(),
                case.what()
            ));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(serve), Some(index), Some(pack_dir)) =
        (args.serve_command, args.index_command, args.pack_dir)
    else {
        bail!("--serve-command, --index-command and --pack-dir are required");
    };
    let argv = split_command(&serve)
        .map_err(anyhow::Error::msg)
        .context("--serve-command")?;
    if argv.is_empty() {
        bail!("--serve-command is empty");
    }
    let target = Target::new(argv, index, pack_dir)
        .boot_timeout(Duration::from_millis(args.boot_timeout_ms));
    let mut suite = Suite::new(target).transport(if args.http2 {
        Transport::H2c
    } else {
        Transport::Http1
    });
    for Skip { feature, reason } in args.skip {
        suite = match reason {
            Some(reason) => suite.skip_because(feature, reason),
            None => suite.skip(feature),
        };
    }
    if let Some(prefix) = args.only {
        suite = suite.only(prefix);
    }
    let report = suite.run(say).await;
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::{Feature, Skip, parse_skip};

    #[test]
    fn a_skip_takes_a_reason() {
        assert_eq!(
            parse_skip("rust-only"),
            Ok(Skip {
                feature: Feature::RustOnly,
                reason: None
            })
        );
        assert_eq!(
            parse_skip("2.7-tenant=predates protocol 2.7 (a=b)"),
            Ok(Skip {
                feature: Feature::Tenant,
                reason: Some("predates protocol 2.7 (a=b)".to_owned())
            })
        );
        assert!(parse_skip("2.7-tenant=").is_err());
        assert!(parse_skip("nope=why").is_err());
    }
}
