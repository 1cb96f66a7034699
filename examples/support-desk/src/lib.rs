//! `support`: the pack a support team ships.
//!
//! | primitive | what it shows |
//! |---|---|
//! | `support.log-ticket` | a write to SQLite keyed by the call's idempotency key: a re-run writes once |
//! | `support.canned-reply` | a plain, pure tool |
//! | `support.weekly-report` | a PDF written with `pdf-writer` and stored with the runtime's files |
//! | `support.approve-refund` | a pause until a person approves |
//! | `support.post-reply` | a call to another app through a connection, `connection-rejected` on 401 |
//! | `support.refund-quote` | a pure tool whose input has a list of objects |
//! | `support.ticket-status` | a declarative HTTP tool: no code, the index carries the request |
//! | `support.no-card-numbers` | a guardrail check |
//! | `support.triage` | an agent using the tools, guarded by the check |
//! | `support.refund` | a flow: approve, then reply |
//! | `support.intake` | a flow with a loop, `when` edges, a sub-flow and a fanout |
//!
//! The binary (`src/main.rs`) only hands [`pack`] to [`kindgi::Pack::run`];
//! the tests build the same pack with their own [`Settings`].

use std::path::PathBuf;

use kindgi::EffectKind;

pub mod agents;
pub mod db;
pub mod flows;
pub mod guardrails;
pub mod pdf;
pub mod tools;

/// The process-level settings the tools share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The SQLite database of tickets and approvals.
    pub database: PathBuf,
    /// The helpdesk app's API that `support.ticket-status` asks. It is in
    /// the index, so it is the same wherever the pack runs:
    /// [`tools::ticket_status::HELPDESK_API`], unless a test says.
    pub helpdesk_api: String,
}

impl Settings {
    /// From the process environment: `SUPPORT_DESK_DB` (default
    /// `support-desk.db` in the working folder).
    pub fn from_env() -> Self {
        let database = kindgi::env::var("SUPPORT_DESK_DB")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("support-desk.db"), PathBuf::from);
        Self {
            database,
            helpdesk_api: tools::ticket_status::HELPDESK_API.to_owned(),
        }
    }
}

/// Every primitive of the pack, its tools using `settings`.
///
/// The agent and the flow name the tools and the guardrail themselves, so
/// renaming one can't leave them naming an id the pack doesn't have.
pub fn pack(settings: &Settings) -> kindgi::Pack {
    let desk = std::sync::Arc::new(tools::Desk {
        settings: settings.clone(),
    });
    let log_ticket = desk
        .log_ticket_tool()
        .effect(EffectKind::Writes, Some("support-desk tickets"));
    let approve_refund = desk.approve_refund_tool();
    let canned_reply = tools::canned_reply::canned_reply_tool();
    let weekly_report = tools::weekly_report::tool(settings);
    let post_reply = tools::post_reply::tool();
    let refund_quote = tools::refund_quote::refund_quote_tool();
    let ticket_status = tools::ticket_status::tool(&settings.helpdesk_api);
    let no_card_numbers = guardrails::no_card_numbers::guardrail();
    let triage = agents::triage(
        &[
            &log_ticket,
            &canned_reply,
            &post_reply,
            &approve_refund,
            &weekly_report,
            &refund_quote,
            &ticket_status,
        ],
        &no_card_numbers,
    );
    let refund = flows::refund(&approve_refund, &post_reply);
    let intake = flows::intake(
        &log_ticket,
        &triage,
        &refund_quote,
        &refund,
        &canned_reply,
        &weekly_report,
        &post_reply,
    );
    kindgi::Pack::new()
        .tool(log_ticket)
        .tool(canned_reply)
        .tool(weekly_report)
        .tool(approve_refund)
        .tool(post_reply)
        .tool(refund_quote)
        .tool(ticket_status)
        .guardrail(no_card_numbers)
        .agent(triage)
        .flow(refund)
        .flow(intake)
}
