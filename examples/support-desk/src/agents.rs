//! The pack's agents.

use kindgi::Agent;

/// `support.triage`: reads a customer's message, logs it, answers it, and
/// asks for refunds — never showing a card number.
pub fn triage() -> Agent {
    Agent::new("support.triage", "1.0.0", "Support triage", kindgi::here!())
        .description("Logs, answers and routes customer requests.")
        .instructions(
            "You triage support requests. Log every request as a ticket first. \
             Answer with a canned reply when one fits, then post it on the ticket. \
             For refunds, ask for approval before promising anything. \
             Never repeat payment card numbers.",
        )
        .tool("support.log-ticket", "1.0.0")
        .tool("support.canned-reply", "1.0.0")
        .tool("support.post-reply", "1.0.0")
        .tool("support.approve-refund", "1.0.0")
        .tool("support.weekly-report", "1.0.0")
        .guardrail("support.no-card-numbers")
}
