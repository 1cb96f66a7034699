//! `{{name}}.not-empty`: a run's answer must say something.

use kindgi::schemars::{self, JsonSchema};
use kindgi::serde::Deserialize;
use kindgi::{CheckResult, RunTrace};

/// The check's config (it has none yet).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct NotEmptyConfig {}

/// Passes when the run's output, trimmed, isn't empty.
#[kindgi::check(
    id = "{{name}}.not-empty",
    name = "Not empty",
    on_violation = "halt",
    severity = "error"
)]
pub fn not_empty(_config: NotEmptyConfig, trace: RunTrace) -> CheckResult {
    match trace.output_text() {
        Some(text) if !text.trim().is_empty() => CheckResult::pass(),
        _ => CheckResult::fail("the output is empty"),
    }
}
