use kindgi::{CheckResult, RunTrace};
use kindgi_macros::check;

#[check(id = "acme.min-length", severity = "error")]
fn no_action(_config: (), _trace: RunTrace) -> CheckResult {
    CheckResult::pass()
}

#[check(id = "acme.min-length", check_id = "acme checks", on_violation = "halt")]
fn bad_check_id(_config: (), _trace: RunTrace) -> CheckResult {
    CheckResult::pass()
}

#[check(id = "acme.min-length", on_violation = "halt")]
async fn not_sync(_config: (), _trace: RunTrace) -> CheckResult {
    CheckResult::pass()
}

#[check(id = "acme.min-length", on_violation = "halt")]
fn one_param(_trace: RunTrace) -> CheckResult {
    CheckResult::pass()
}

fn main() {}
