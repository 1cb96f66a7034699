//! The pack's agents.

use kindgi::{Agent, Guardrail, Tool};
use serde_json::json;

/// `support.triage`: reads a customer's message, logs it, answers it, and
/// asks for refunds — never showing a card number. It may call `tools`
/// (each at its own version) and is guarded by `guardrail`.
pub fn triage(tools: &[&Tool], guardrail: &Guardrail) -> Agent {
    let agent = Agent::new("support.triage", "1.0.0", "Support triage")
        .description("Logs, answers and routes customer requests.")
        .instructions(
            "You triage support requests. Log every request as a ticket first. \
             Answer with a canned reply when one fits, then post it on the ticket. \
             For refunds, ask for approval before promising anything. \
             Never repeat payment card numbers.",
        )
        .guardrail(guardrail)
        .field("tags", json!(["support", "triage"]))
        .field(
            "budget",
            json!({"maxCostUsd": 0.25, "maxLatencyMs": 60_000}),
        )
        .field("toolErrors", json!({"maxRetries": 2}));
    tools.iter().fold(agent, |agent, tool| agent.tool(*tool))
}
