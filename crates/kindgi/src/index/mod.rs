//! The indexer: a pack's primitives as its canonical `index.json`.

mod build;
pub(crate) mod command;
mod manifest;
mod problems;
mod resolve;
mod write;

pub use build::{Pins, build_index};
pub use manifest::{PackConfig, parse_pack_config, read_pack_config};
pub use problems::PackProblems;
pub use write::{index_bytes, write_atomically};
