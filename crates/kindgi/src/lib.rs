//! Write Kindgi packs in Rust: tools, guardrail checks, agents and flows, the indexer and the pack service.
