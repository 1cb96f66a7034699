//! The stress pack's checks.

use kindgi::{CheckResult, Guardrail, OnViolation, RunTrace};
use serde_json::{Value, json};

fn ok(_config: Value, _trace: RunTrace) -> CheckResult {
    CheckResult::pass()
}

fn panics(_config: Value, _trace: RunTrace) -> CheckResult {
    panic!("check kaboom")
}

/// `stress.checks.ok`: passes.
pub(crate) fn ok_guardrail() -> Guardrail {
    Guardrail::new("stress.ok")
        .name("Passes")
        .check_id("stress.checks.ok")
        .on_violation(OnViolation::LogOnly)
        .config_schema(json!({"type": "object"}))
        .evaluate(ok)
}

/// `stress.checks.panics`: panics.
pub(crate) fn panics_guardrail() -> Guardrail {
    Guardrail::new("stress.panics")
        .name("Panics")
        .check_id("stress.checks.panics")
        .on_violation(OnViolation::LogOnly)
        .config_schema(json!({"type": "object"}))
        .evaluate(panics)
}
