//! `support.ticket-status`: a declarative HTTP tool. The pack has no code
//! for it: the index carries the request (`spec: {kind: "http"}`) and a
//! runtime makes it, with the `HELPDESK_TOKEN` secret as a bearer token;
//! the pack service, `kindgi dev`, `kindgi call` and `TestPack` make the
//! same request.

use std::time::Duration;

use kindgi::{EffectKind, HttpSpec, SecretRef, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The helpdesk app's API. A declarative tool's URL is part of the index,
/// so it is fixed when the pack is built ([`crate::Settings::helpdesk_api`]).
pub const HELPDESK_API: &str = "https://helpdesk.example.com/api";

/// The secret that authorizes the request.
pub const TOKEN: &str = "HELPDESK_TOKEN";

/// Which ticket.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TicketQuery {
    /// The ticket's id in the helpdesk.
    #[schemars(length(min = 1))]
    pub ticket_id: String,
}

/// What the helpdesk answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketStatus {
    /// `open`, `pending` or `solved`.
    pub status: String,
    /// Who works on it, if anyone.
    pub assignee: Option<String>,
}

/// The tool, asking the helpdesk at `api` (no trailing `/`).
pub fn tool(api: &str) -> Tool {
    Tool::new("support.ticket-status")
        .description("Looks up a ticket's status and assignee in the helpdesk app.")
        .mutating(false)
        .effect(EffectKind::Reads, Some("helpdesk tickets"))
        .needs_secret(TOKEN)
        .http::<TicketQuery, TicketStatus>(
            HttpSpec::get(format!("{api}/tickets/{{ticketId}}/status"))
                .header("Accept", "application/json")
                .bearer(SecretRef::new("production", TOKEN))
                .timeout(Duration::from_secs(10)),
        )
}
