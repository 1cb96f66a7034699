//! What a pack author declares: tools, guardrail checks, agents, flows.

pub(crate) mod agent;
pub(crate) mod check;
pub mod flow;
pub(crate) mod handler;
mod numbers;
pub(crate) mod pack;
pub(crate) mod refs;
pub(crate) mod tool;
pub(crate) mod trace;
