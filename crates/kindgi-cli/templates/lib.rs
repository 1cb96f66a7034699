//! The `{{name}}` pack: a tool and a guardrail check.
//!
//! The binary (`src/main.rs`) hands [`pack`] to [`kindgi::Pack::run`]; the
//! tests call the same pack in-process.

pub mod greet;
pub mod not_empty;

/// Every primitive of the pack.
pub fn pack() -> kindgi::Pack {
    kindgi::Pack::new()
        .tool(greet::greet_tool())
        .guardrail(not_empty::not_empty_guardrail())
}
