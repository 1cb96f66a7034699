//! `support.log-ticket`: logs a ticket in the desk's SQLite database, once
//! per call — a re-run of the same call (same idempotency key) finds the
//! ticket it logged the first time instead of writing another.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
