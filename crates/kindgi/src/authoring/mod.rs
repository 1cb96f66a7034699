//! What a pack author declares: tools, guardrail checks, agents, flows.

pub(crate) mod agent;
pub(crate) mod check;
pub mod flow;
pub(crate) mod handler;
mod http_call;
pub(crate) mod http_spec;
pub(crate) mod input;
mod numbers;
pub(crate) mod pack;
pub(crate) mod refs;
pub(crate) mod reply;
#[cfg(feature = "fast-input")]
pub(crate) mod text_input;
#[cfg(feature = "fast-input")]
mod text_numbers;
pub(crate) mod tool;
pub(crate) mod trace;
