//! The indexer: a pack's primitives as its canonical `index.json`.

mod build;
mod checks;
pub(crate) mod command;
mod manifest;
mod problems;
mod resolve;
mod write;

pub use build::{Pins, build_index};
pub use checks::{RESERVED_CHECK_IDS, unprefixed_check_warnings};
pub use manifest::{PackConfig, parse_pack_config, read_pack_config};
pub use problems::PackProblems;
pub use write::{index_bytes, write_atomically};
