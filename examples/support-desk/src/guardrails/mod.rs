//! The pack's guardrails.

pub mod no_card_numbers;
