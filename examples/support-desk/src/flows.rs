//! The pack's flows.

use kindgi::Flow;
use kindgi::flow::{END, START};

/// `support.refund`: approve a refund (a lead may have to decide), then
/// tell the customer on their ticket.
pub fn refund() -> Flow {
    Flow::new("support.refund", "1.0.0", kindgi::here!())
        .name("Refund")
        .description("Approves a refund, then replies on the ticket.")
        .tool_node("approve", "support.approve-refund")
        .tool_node("reply", "support.post-reply")
        .edge(START, "approve")
        .edge("approve", "reply")
        .edge("reply", END)
}
