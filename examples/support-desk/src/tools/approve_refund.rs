//! `support.approve-refund`: small refunds are approved by policy; larger
//! ones pause the run (protocol 2.8.0) until a support lead decides.
//!
//! The call's wait link goes on the team's approvals queue (a table the
//! approvals page reads); the lead's decision is posted to it as this
//! tool's output, and the run goes on with it.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refunds up to this many cents need no person.
pub const AUTO_APPROVE_CENTS: u64 = 50_00;

/// How long a lead has to decide.
pub const DECISION_WINDOW: Duration = Duration::from_secs(48 * 60 * 60);

/// A refund someone asked for.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundRequest {
    /// The ticket it is for.
    #[schemars(length(min = 1))]
    pub ticket_id: String,
    /// How much, in cents.
    #[schemars(range(min = 1))]
    pub amount_cents: u64,
    /// Why the customer should get it.
    #[schemars(length(min = 1))]
    pub reason: String,
}

/// The decision: by policy now, or by a person later.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundDecision {
    /// Whether the refund goes ahead.
    pub approved: bool,
    /// Who decided: `policy` or the lead's name.
    #[schemars(length(min = 1))]
    pub approver: String,
    /// Anything the approver adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `cents` as dollars: `$250.00`.
pub fn dollars(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}
