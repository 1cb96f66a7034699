//! The pack's tools, one module each.

pub mod approve_refund;
pub mod canned_reply;
pub mod log_ticket;
pub mod post_reply;
pub mod weekly_report;
