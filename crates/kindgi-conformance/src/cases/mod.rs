//! The cases, one module per part of the contract.

use std::time::Duration;

use serde_json::{Value, json};

use crate::case::Case;
use crate::harness::Service;

mod checks;
mod connections;
mod env;
mod files;
mod http;
mod index;
mod invoke;
mod logs;
mod messages;
mod pause;
mod process;
mod rust;
mod tenant;

/// Every case, in report order.
pub(crate) fn all() -> Vec<Case> {
    [
        index::cases(),
        process::cases(),
        http::cases(),
        messages::cases(),
        invoke::cases(),
        checks::cases(),
        env::cases(),
        logs::cases(),
        tenant::cases(),
        pause::cases(),
        connections::cases(),
        files::cases(),
        rust::cases(),
    ]
    .concat()
}

/// How long to wait for a record or a line that should come at once.
pub(crate) const SOON: Duration = Duration::from_secs(5);

/// An `invoke` of `tool` with `input` and `ctx`.
pub(crate) fn tool(id: &str, input: Value, ctx: Value) -> Value {
    json!({"v": 2, "kind": "invoke", "tool": {"id": id}, "input": input, "ctx": ctx})
}

/// The smallest context: tenant `t1` and run `run`.
pub(crate) fn ctx(run: &str) -> Value {
    json!({"tenantId": "t1", "runId": run})
}

/// A run trace as a runtime sends one: its run, its tenant (`t1`), and the
/// run's `output`. `runId` and `tenantId` are required fields of `RunTrace`
/// (`@kindgi/guardrails`), and a service may refuse a trace without them.
pub(crate) fn run_trace(run: &str, output: &str) -> Value {
    json!({"runId": run, "tenantId": "t1", "output": output})
}

/// A `check-invoke` of `check` with `config` and `trace`.
pub(crate) fn check(id: &str, config: Value, trace: Value) -> Value {
    json!({"v": 2, "kind": "check-invoke", "check": {"id": id}, "config": config, "trace": trace})
}

/// The `call` record of the call whose run id is `run`.
pub(crate) async fn call_record(service: &Service, run: &str) -> Result<Value, String> {
    service
        .output()
        .wait_for_record(
            |r| r.get("runId") == Some(&Value::from(run)) && r.get("outcome").is_some(),
            SOON,
        )
        .await
        .ok_or_else(|| format!("expected a call record with runId {run:?} on stderr, got none"))
}

/// `Ok` when no stderr record matches within `wait`.
pub(crate) async fn no_record(
    service: &Service,
    wait: Duration,
    matches: impl Fn(&Value) -> bool,
) -> Result<(), String> {
    match service.output().wait_for_record(matches, wait).await {
        None => Ok(()),
        Some(found) => Err(format!("expected no such record, got {found}")),
    }
}

/// The tool ids of an index or `/v1/info`.
pub(crate) fn ids(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::all;

    #[test]
    fn ids_are_unique() {
        let cases = all();
        let ids: HashSet<&str> = cases.iter().map(|c| c.id()).collect();
        assert_eq!(ids.len(), cases.len());
    }

    #[test]
    fn readme_lists_every_case() {
        let readme = include_str!("../../README.md");
        for case in all() {
            let row = format!("| `{}` | {} | {} |", case.id(), case.feature(), case.what());
            assert!(readme.contains(&row), "README.md lacks the row {row}");
        }
    }
}
