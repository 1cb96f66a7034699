//! Boot, in the contract's order (CONTRACT §1): read the index, find the
//! code of every module it names, filter the environment (`<pack> serve`
//! only), check the required env, ready every tool and check; then build
//! the service state whole from what it found and the configuration.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use foldhash::HashMap;
use kindgi_protocol::{Info, InfoTool, PackIndex, ProtocolV2};
use kindgi_validate::Validator;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::admission::Admission;
use super::config::{EnvCheck, ServiceConfig};
use super::drain::Drain;
use super::env_filter;
use super::invoker::{CheckRuntime, Invoker, Loaded, ToolRuntime};
use super::process_env;
use super::state::ServiceState;
use super::tool::MAX_BLOCKING_HANDLERS;
use crate::Pack;
use crate::log::{Level, Logger, Record};

/// Reads the index and readies every tool and check, in the contract's
/// boot order; returns every problem of the first step that has any.
///
/// With `config.env_filter` it removes variables from the process
/// environment: only `<pack> serve` sets it, and boots before any thread.
pub(super) fn boot(
    pack: &Pack,
    config: &ServiceConfig,
    logger: &Arc<Logger>,
) -> Result<ServiceState, Vec<String>> {
    let (index, index_hash) = read_index(&config.index)?;
    check_modules(pack, &index)?;
    if config.env_filter {
        filter_env(&index, logger);
    }
    let missing_env = missing_env(&index, config.env_check, logger);
    let loaded = load(pack, &index)?;
    let info_body = info_body(&index, &missing_env, &index_hash);
    let drain = Drain::new();
    let invoker = Invoker::new(
        index,
        loaded,
        Arc::clone(logger),
        config.max_concurrency.min(MAX_BLOCKING_HANDLERS),
        drain.window_closed(),
    );
    let admission = Admission::new(config, missing_env);
    Ok(ServiceState::new(
        invoker,
        admission,
        drain,
        info_body,
        config.header_timeout,
    ))
}

/// The index at `path`, and its hash (`/v1/info`'s `indexHash`).
fn read_index(index: &Path) -> Result<(PackIndex, String), Vec<String>> {
    let path = index.display();
    let bytes = std::fs::read(index).map_err(|e| {
        vec![format!(
            "Cannot read the pack index: {path}: {e}. Pass its path with --index PATH (or KINDGI_PACK_INDEX); `<pack> index --output PATH` writes it"
        )]
    })?;
    let raw: Value = serde_json::from_slice(&bytes)
        .map_err(|e| vec![format!("Cannot read the pack index: {path}: {e}")])?;
    if raw.get("v") != Some(&Value::from(1)) {
        let v = raw
            .get("v")
            .map_or_else(|| "undefined".to_owned(), Value::to_string);
        return Err(vec![format!("Index envelope v{v} is not v1")]);
    }
    let index: PackIndex = serde_json::from_value(raw)
        .map_err(|e| vec![format!("Cannot read the pack index: {path}: {e}")])?;
    let index_hash = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    Ok((index, index_hash))
}

/// Removes from the process environment every variable the index doesn't
/// declare, and logs `env-dropped` with their names (never their values).
/// Only sound before any other thread runs: see [`process_env::remove_vars`].
fn filter_env(index: &PackIndex, logger: &Logger) {
    let declared: Vec<String> = index
        .env
        .iter()
        .flat_map(|env| env.required.iter().chain(env.optional.iter()).cloned())
        .collect();
    let names = process_env::names();
    let dropped = env_filter::dropped(names.iter().map(String::as_str), &declared);
    if !dropped.is_empty() {
        process_env::remove_vars(dropped.iter().map(String::as_str));
        logger.log(
            Record::lifecycle(
                Level::Warn,
                "env-dropped",
                env_filter::dropped_message(&dropped),
            )
            .field("names", dropped),
        );
    }
}

/// The index's `env.required` names without a value, sorted, logged as
/// `missing-env` when there are any.
fn missing_env(index: &PackIndex, check: EnvCheck, logger: &Logger) -> Vec<String> {
    let missing_env: Vec<String> = index
        .env
        .iter()
        .flat_map(|env| env.required.iter())
        .filter(|name| std::env::var_os(name.as_str()).is_none_or(|v| v.is_empty()))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !missing_env.is_empty() {
        let message = if missing_env.len() == 1 {
            format!(
                "The pack's env.required name has no value: {}",
                missing_env[0]
            )
        } else {
            format!(
                "The pack's env.required names have no value: {}",
                missing_env.join(", ")
            )
        };
        logger.log(
            Record::lifecycle(Level::Warn, "missing-env", message)
                .field("check", check.as_str())
                .field("names", missing_env.clone()),
        );
    }

    missing_env
}

/// Logs `boot-failed` with `problems`.
pub(super) fn log_failed(logger: &Logger, problems: Vec<String>) {
    logger.log(
        Record::lifecycle(
            Level::Error,
            "boot-failed",
            "The pack service failed to boot",
        )
        .field("problems", problems),
    );
}

/// Every `modulePath` / `checkModulePath` the index names must be code
/// this binary has.
fn check_modules(pack: &Pack, index: &PackIndex) -> Result<(), Vec<String>> {
    let have: BTreeSet<String> = pack
        .tools
        .iter()
        .map(|t| t.source.module_path())
        .chain(pack.guardrails.iter().map(|g| g.source.module_path()))
        .collect();
    let mut missing = Vec::new();
    let named = index
        .tools
        .iter()
        .map(|t| &t.module_path)
        .chain(index.guardrails.iter().map(|g| &g.check_module_path));
    for path in named {
        if !have.contains(path) && !missing.contains(path) {
            missing.push(path.clone());
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let none_here = index
        .tools
        .iter()
        .map(|t| &t.module_path)
        .chain(index.guardrails.iter().map(|g| &g.check_module_path))
        .all(|path| !have.contains(path));
    let mut problems: Vec<String> = missing
        .into_iter()
        .map(|path| format!("Missing module: {path}"))
        .collect();
    if none_here {
        problems.push(another_pack(pack, index));
    }
    Err(problems)
}

/// Says that `index` is another pack's: none of its code is in this binary.
fn another_pack(pack: &Pack, index: &PackIndex) -> String {
    let ids: Vec<&str> = pack
        .tools
        .iter()
        .map(|t| t.id.as_str())
        .chain(pack.guardrails.iter().map(|g| g.id.as_str()))
        .collect();
    let has = match ids.as_slice() {
        [] => "no tools or checks".to_owned(),
        [a] => a.to_string(),
        [a, b] => format!("{a} and {b}"),
        [a, b, rest @ ..] => format!("{a}, {b} and {} more", rest.len()),
    };
    format!(
        "The index is another pack's ({}): none of its tools and checks is in this binary, which has {has}. Serve this pack's own index: `<pack> index --output PATH` writes it",
        index.pack_id
    )
}

/// The invoker of `index`, in memory, without a service around it: what
/// [`crate::testing`] calls tools and checks through. It has no admission
/// at all — no token to check, no cap, no drain — and can't be served.
pub(crate) fn in_memory(
    pack: &Pack,
    index: PackIndex,
    logger: Arc<Logger>,
) -> Result<Invoker, Vec<String>> {
    let loaded = load(pack, &index)?;
    // Nothing ever closes its drain window.
    let never = tokio_util::sync::CancellationToken::new();
    Ok(Invoker::new(
        index,
        loaded,
        logger,
        MAX_BLOCKING_HANDLERS,
        never,
    ))
}

/// Pairs each index entry with its code and compiles its schemas.
fn load(pack: &Pack, index: &PackIndex) -> Result<Loaded, Vec<String>> {
    let mut problems = Vec::new();
    let mut tools = HashMap::default();
    for entry in &index.tools {
        let handler = pack
            .tools
            .iter()
            .find(|t| t.id == entry.id)
            .and_then(|t| t.handler.clone());
        let Some(handler) = handler else {
            problems.push(format!(
                "{}: this pack binary has no handler for it",
                entry.id
            ));
            continue;
        };
        let compiled = Validator::new(&entry.input)
            .map_err(|e| format!("{}: its input schema doesn't compile: {e}", entry.id))
            .and_then(|input| {
                Validator::new(&entry.output)
                    .map(|output| (input, output))
                    .map_err(|e| format!("{}: its output schema doesn't compile: {e}", entry.id))
            });
        match compiled {
            Ok((input, output)) => {
                tools.insert(
                    entry.id.clone(),
                    Arc::new(ToolRuntime {
                        entry: entry.clone(),
                        handler,
                        input,
                        output,
                    }),
                );
            }
            Err(problem) => problems.push(problem),
        }
    }
    let mut checks = HashMap::default();
    for entry in &index.guardrails {
        let check_id = entry.effective_check_id().to_owned();
        let evaluate = pack
            .guardrails
            .iter()
            .find(|g| g.resolved_check_id() == check_id)
            .and_then(|g| g.evaluate.clone());
        let Some(evaluate) = evaluate else {
            problems.push(format!("{check_id}: this pack binary has no check for it"));
            continue;
        };
        let config = match entry.config_schema.as_ref().map(Validator::new).transpose() {
            Ok(config) => config,
            Err(e) => {
                problems.push(format!(
                    "{check_id}: its config schema doesn't compile: {e}"
                ));
                continue;
            }
        };
        checks.insert(check_id, Arc::new(CheckRuntime { config, evaluate }));
    }
    if problems.is_empty() {
        Ok((tools, checks))
    } else {
        Err(problems)
    }
}

/// The `/v1/info` body.
fn info_body(index: &PackIndex, missing_env: &[String], index_hash: &str) -> Bytes {
    let info = Info {
        protocol: ProtocolV2,
        pack_id: index.pack_id.clone(),
        pack_version: index.pack_version.clone(),
        artifact_version: index.artifact_version.clone(),
        tools: index
            .tools
            .iter()
            .map(|t| InfoTool {
                id: t.id.clone(),
                version: t.version.clone(),
            })
            .collect(),
        checks: index
            .guardrails
            .iter()
            .map(|g| g.effective_check_id().to_owned())
            .collect(),
        missing_env: missing_env.to_vec(),
        index_hash: Some(index_hash.to_owned()),
    };
    Bytes::from(serde_json::to_vec(&info).unwrap_or_default())
}
