//! The pack's flows.

use kindgi::flow::{END, START};
use kindgi::{Agent, Flow, Tool};
use serde_json::json;

/// `support.refund`: approve a refund (a lead may have to decide) with
/// `approve`, then tell the customer on their ticket with `reply`.
pub fn refund(approve: &Tool, reply: &Tool) -> Flow {
    Flow::new("support.refund", "1.0.0")
        .name("Refund")
        .description("Approves a refund, then replies on the ticket.")
        .tool_node("approve", approve)
        .tool_node("reply", reply)
        .edge(START, "approve")
        .edge("approve", "reply")
        .edge("reply", END)
}

/// `support.intake`: a batch of customer messages, from tickets to answers.
/// Every message is logged (`log-each`, a loop), `triage` (the agent)
/// reads them; a refund is quoted, then run through `refund` (the
/// `support.refund` flow, as a sub-flow), any other topic gets a canned
/// answer; `wrap-up` then writes the report and posts a note at once (a
/// fanout).
///
/// Loops, fanouts, sub-flows, `when` and edge policies have no builder
/// method of their own: [`Flow::node`] and [`Flow::edge_value`] take them
/// as `flow.schema.json` declares them.
pub fn intake(
    log: &Tool,
    triage: &Agent,
    quote: &Tool,
    refund: &Flow,
    answer: &Tool,
    report: &Tool,
    note: &Tool,
) -> Flow {
    let any = json!({"type": "object"});
    let wants_refund = |op: &str| json!({"op": op, "left": {"path": "nodeOutputs.triage.intent"}, "right": {"literal": "refund"}});
    Flow::new("support.intake", "1.0.0")
        .name("Intake")
        .description("Logs a batch of messages, triages them, then refunds or answers, and reports.")
        .node(json!({
            "id": "log-each",
            "kind": "loop",
            "loopKind": "foreach",
            "iterateOver": {"path": "runInput.messages"},
            "maxIterations": 100,
            "concurrency": 4,
            "collectAllIterations": true,
            "outputSchema": any,
            "body": {
                "nodes": [{"id": "log", "kind": "tool", "ref": log.id()}],
                "edges": [
                    {"id": "log-in", "from": "$loop-start", "to": "log"},
                    {"id": "log-out", "from": "log", "to": "$loop-end"},
                ],
            },
        }))
        .agent_node("triage", triage)
        .tool_node("quote", quote)
        .node(json!({
            "id": "refund",
            "kind": "subgraph",
            "flowRef": {"flowId": refund.id(), "version": "1.0.0"},
            "inputMapping": {
                "ticketId": {"path": "nodeOutputs.quote.ticketId"},
                "amountCents": {"path": "nodeOutputs.quote.totalCents"},
                "reason": {"literal": "Quoted at intake"},
            },
            "outputSchema": any,
            "convergence": "settle-all",
        }))
        .tool_node("answer", answer)
        .node(json!({
            "id": "wrap-up",
            "kind": "fanout",
            "convergence": "settle-all",
            "branches": [
                {"branchId": "report", "handler": report.id(), "outputSchema": any},
                {"branchId": "note", "handler": note.id(), "outputSchema": any},
            ],
        }))
        .edge(START, "log-each")
        .edge("log-each", "triage")
        .edge_value(json!({"id": "triage->quote", "from": "triage", "to": "quote", "when": wants_refund("eq")}))
        .edge_value(json!({"id": "triage->answer", "from": "triage", "to": "answer", "when": wants_refund("ne")}))
        .edge_value(json!({
            "id": "quote->refund",
            "from": "quote",
            "to": "refund",
            "when": {"op": "gt", "left": {"path": "nodeOutputs.quote.totalCents"}, "right": {"literal": 0}},
            "policy": {"retry": {"maxAttempts": 3, "delayMs": 1000, "backoff": "fixed"}},
        }))
        .edge("refund", "wrap-up")
        .edge("answer", "wrap-up")
        .edge("wrap-up", END)
}
