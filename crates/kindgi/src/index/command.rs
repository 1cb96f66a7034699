//! `<pack> index`: the indexer's command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use super::{
    Pins, build_index, index_bytes, read_pack_config, unprefixed_check_warnings, write,
    write_atomically,
};
use crate::Pack;

#[derive(Debug, Default)]
struct IndexArgs {
    pack_dir: Option<PathBuf>,
    output: Option<PathBuf>,
    artifact_version: Option<String>,
    published_at: Option<String>,
    json: bool,
}

/// A failure of the command: its code, message and problems.
#[derive(Debug)]
struct Failure {
    code: &'static str,
    message: String,
    problems: Vec<String>,
    exit: u8,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>, problems: Vec<String>) -> Self {
        Self {
            code,
            message: message.into(),
            problems,
            exit: 1,
        }
    }
}

fn parse_args(args: &[String]) -> Result<IndexArgs, Failure> {
    let mut parsed = IndexArgs::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = |flag: &str| {
            iter.next().cloned().ok_or_else(|| Failure {
                exit: 2,
                ..Failure::new("usage", format!("{flag} needs a value"), Vec::new())
            })
        };
        match arg.as_str() {
            "--pack-dir" => parsed.pack_dir = Some(value("--pack-dir")?.into()),
            "--output" => parsed.output = Some(value("--output")?.into()),
            "--artifact-version" => parsed.artifact_version = Some(value("--artifact-version")?),
            "--published-at" => parsed.published_at = Some(value("--published-at")?),
            "--json" => parsed.json = true,
            other => {
                return Err(Failure {
                    exit: 2,
                    ..Failure::new("usage", format!("Unknown argument {other}"), Vec::new())
                });
            }
        }
    }
    Ok(parsed)
}

/// Runs `index` with the arguments after it.
pub(crate) fn run(pack: &Pack, args: &[String]) -> ExitCode {
    let json = args.iter().any(|a| a == "--json");
    match index(pack, args) {
        Ok(summary) => {
            if json {
                println!("{}", json!({"kind": "ok", "value": summary}));
            } else {
                let counts = &summary["counts"];
                println!(
                    "Indexed {} {} (artifact {}): {} tools, {} guardrails, {} agents, {} flows -> {}",
                    summary["packId"].as_str().unwrap_or_default(),
                    summary["packVersion"].as_str().unwrap_or_default(),
                    summary["artifactVersion"].as_str().unwrap_or_default(),
                    counts["tools"],
                    counts["guardrails"],
                    counts["agents"],
                    counts["flows"],
                    summary["outputPath"].as_str().unwrap_or_default(),
                );
                for warning in summary["warnings"].as_array().into_iter().flatten() {
                    eprintln!(
                        "warning: {}",
                        warning["message"].as_str().unwrap_or_default()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            if json {
                let mut error = json!({"code": failure.code, "message": failure.message});
                if !failure.problems.is_empty() {
                    error["problems"] = json!(failure.problems);
                }
                println!("{}", json!({"kind": "err", "error": error}));
            } else {
                eprintln!("error: {}", failure.message);
                for problem in &failure.problems {
                    eprintln!("  - {problem}");
                }
            }
            ExitCode::from(failure.exit)
        }
    }
}

fn index(pack: &Pack, args: &[String]) -> Result<Value, Failure> {
    let args = parse_args(args)?;
    let pack_dir = args.pack_dir.unwrap_or_else(|| PathBuf::from("."));
    if !pack_dir.is_dir() {
        return Err(Failure::new(
            "pack-dir-unreadable",
            format!("Cannot read the pack folder {}", pack_dir.display()),
            Vec::new(),
        ));
    }
    let config = read_pack_config(&pack_dir).map_err(|problems| {
        Failure::new(
            "config-invalid",
            "The pack's config is invalid",
            problems.into_vec(),
        )
    })?;
    let output = args.output.unwrap_or_else(|| pack_dir.join("index.json"));
    let pins = Pins {
        artifact_version: args.artifact_version.unwrap_or_else(|| {
            write::next_artifact_version(
                &write::today(),
                write::previous_artifact_version(&output).as_deref(),
            )
        }),
        published_at: args.published_at.unwrap_or_else(write::now_published_at),
    };
    let index = build_index(pack, &config, &pins).map_err(|problems| {
        Failure::new("pack-invalid", "The pack has mistakes", problems.into_vec())
    })?;
    write_atomically(&output, &index_bytes(&index))
        .map_err(|message| Failure::new("write-failed", message, Vec::new()))?;
    Ok(json!({
        "packId": index.pack_id,
        "packVersion": index.pack_version,
        "artifactVersion": index.artifact_version,
        "publishedAt": index.published_at,
        "counts": {
            "tools": index.tools.len(),
            "guardrails": index.guardrails.len(),
            "agents": index.agents.len(),
            "flows": index.flows.len(),
        },
        "outputPath": display_path(&output),
        "fileErrors": [],
        "warnings": unprefixed_check_warnings(pack, &config.id)
            .into_iter()
            .map(|message| json!({"code": "check-id-unprefixed", "message": message, "field": "check"}))
            .collect::<Vec<_>>(),
    }))
}

fn display_path(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}
