//! `support.log-ticket`: logs a ticket in the desk's SQLite database, once
//! per call — a re-run of the same call (same idempotency key) finds the
//! ticket it logged the first time instead of writing another.

use std::path::Path;

use kindgi::{ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::db;

/// How urgent a ticket is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever someone has time.
    Low,
    /// The usual.
    #[default]
    Normal,
    /// Today.
    High,
    /// Now.
    Urgent,
}

impl Priority {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
            Self::Urgent => "urgent",
        }
    }
}

/// A customer's request.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTicket {
    /// Who wrote in.
    #[schemars(email)]
    pub customer_email: String,
    /// One line about what it is.
    #[schemars(length(min = 1, max = 200))]
    pub subject: String,
    /// What they wrote.
    pub body: String,
    /// How urgent it is.
    #[serde(default)]
    pub priority: Priority,
}

/// The logged ticket.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketLogged {
    /// The ticket's id, like `T-000042`.
    pub ticket_id: String,
    /// `false` when an earlier run of this same call had logged it.
    pub created: bool,
}

/// The ticket id people see.
pub fn ticket_id(row_id: i64) -> String {
    format!("T-{row_id:06}")
}

/// Logs `input` in the database at `database`, once per idempotency key.
///
/// # Errors
///
/// SQLite's error.
pub fn log_ticket(
    database: &Path,
    input: NewTicket,
    ctx: &ToolContext,
) -> Result<TicketLogged, ToolError> {
    let db = db::open(database)?;
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
