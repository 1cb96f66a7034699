//! The pack's tools, one module each. The tools that use the desk's
//! database are methods of [`Desk`], sharing its settings.

pub mod approve_refund;
pub mod canned_reply;
pub mod log_ticket;
pub mod post_reply;
pub mod weekly_report;

use kindgi::{Reply, ToolContext, ToolError};

use self::approve_refund::{RefundDecision, RefundRequest};
use self::log_ticket::{NewTicket, TicketLogged};
use crate::Settings;

/// The desk: what the tools that keep tickets and approvals share.
#[derive(Debug, Clone)]
pub struct Desk {
    /// Where the tickets and approvals are.
    pub settings: Settings,
}

#[kindgi::tools]
impl Desk {
    /// Logs a customer's request as a support ticket and answers its id.
    #[tool(id = "support.log-ticket", blocking)]
    fn log_ticket(&self, input: NewTicket, ctx: ToolContext) -> Result<TicketLogged, ToolError> {
        // SQLite blocks, so this runs on the blocking pool.
        log_ticket::log_ticket(&self.settings.database, input, &ctx)
    }

    /// Approves a refund: up to $50.00 by policy, above that a support lead
    /// decides (the run waits).
    #[tool(id = "support.approve-refund")]
    async fn approve_refund(
        &self,
        input: RefundRequest,
        ctx: ToolContext,
    ) -> Result<Reply<RefundDecision>, ToolError> {
        approve_refund::approve_refund(self.settings.database.clone(), input, ctx).await
    }
}
