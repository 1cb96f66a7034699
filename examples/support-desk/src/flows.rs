//! The pack's flows.

use kindgi::flow::{END, START};
use kindgi::{Flow, Tool};

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
