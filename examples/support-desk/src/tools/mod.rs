//! The pack's tools, their types one module each. The tools that keep
//! tickets and approvals are methods of [`Desk`], sharing its settings.

pub mod approve_refund;
pub mod canned_reply;
pub mod log_ticket;
pub mod post_reply;
pub mod refund_quote;
pub mod ticket_status;
pub mod weekly_report;

use kindgi::{Pause, Reply, ToolContext, ToolError};

use self::approve_refund::{
    AUTO_APPROVE_CENTS, DECISION_WINDOW, RefundDecision, RefundRequest, dollars,
};
use self::log_ticket::{NewTicket, TicketLogged, ticket_id};
use crate::{Settings, db};

/// The desk: what the tools that keep tickets and approvals share.
#[derive(Debug, Clone)]
pub struct Desk {
    /// Where the tickets and approvals are.
    pub settings: Settings,
}

#[kindgi::tools]
impl Desk {
    /// Logs a customer's request as a support ticket and answers its id;
    /// a re-run of the same call finds the ticket it logged.
    #[tool(id = "support.log-ticket", blocking)]
    fn log_ticket(&self, input: NewTicket, ctx: ToolContext) -> Result<TicketLogged, ToolError> {
        // SQLite blocks, so this runs on the blocking pool.
        let db = db::open(&self.settings.database)?;
        let (row_id, created) = db::log_ticket(
            &db,
            &db::NewTicket {
                tenant_id: ctx.tenant_id(),
                idempotency_key: ctx.idempotency_key(),
                customer_email: &input.customer_email,
                subject: &input.subject,
                body: &input.body,
                priority: input.priority.as_str(),
            },
        )?;
        let ticket_id = ticket_id(row_id);
        kindgi::tracing::info!(ticket = %ticket_id, created, "ticket logged");
        Ok(TicketLogged { ticket_id, created })
    }

    /// Approves a refund: up to $50.00 by policy, above that a support lead
    /// decides (the run waits).
    #[tool(id = "support.approve-refund")]
    async fn approve_refund(
        &self,
        input: RefundRequest,
        ctx: ToolContext,
    ) -> Result<Reply<RefundDecision>, ToolError> {
        if input.amount_cents <= AUTO_APPROVE_CENTS {
            return Ok(Reply::Done(RefundDecision {
                approved: true,
                approver: "policy".to_owned(),
                note: Some(format!(
                    "refunds up to {} are approved automatically",
                    dollars(AUTO_APPROVE_CENTS)
                )),
            }));
        }
        // Without a wait token (an older runtime) `?` answers pause-not-available.
        let link = ctx.wait_link()?;
        let (database, tenant) = (self.settings.database.clone(), ctx.tenant_id().to_owned());
        let name = format!(
            "a lead's approval of a {} refund",
            dollars(input.amount_cents)
        );
        tokio::task::spawn_blocking(move || {
            db::queue_approval(
                &db::open(&database)?,
                &db::PendingApproval {
                    wait_id: link.id(),
                    tenant_id: &tenant,
                    ticket_id: &input.ticket_id,
                    amount_cents: input.amount_cents,
                    reason: &input.reason,
                    answer_url: link.url(),
                },
            )
        })
        .await??;
        Ok(Reply::Pause(
            Pause::new().name(name).timeout(DECISION_WINDOW),
        ))
    }
}
