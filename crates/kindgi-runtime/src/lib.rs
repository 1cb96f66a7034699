//! The runtime side of Kindgi pack protocol v2 for development.
//!
//! - [`DevRuntime`]: the tool-files API (`POST /v1/tool-files`,
//!   `GET /v1/tool-files/{artifactId}`), wait links (`POST /v1/waits/{link}`)
//!   and a dev admin API, over an embedded store (SQLite + a
//!   content-addressed blob directory) under a data directory. Usable in
//!   process, or served over HTTP with [`DevRuntime::serve`].
//! - [`client::PackClient`]: sends `invoke` / `check-invoke` to a pack
//!   service and classifies every outcome, retrying only what provably did
//!   not run.
//!
//! See the crate's README (included below) for the HTTP API, the CLI and the store layout.
#![doc = include_str!("../README.md")]

mod api;
pub mod client;
mod config;
mod error;
mod history;
mod limits;
mod runtime;
mod serve;
pub mod sniff;
pub mod store;
mod tokens;
mod validate;

pub use config::{MAX_BODY_BYTES, MAX_FILES_PER_CALL, RuntimeConfig, TypeLimits};
pub use error::RuntimeError;
pub use history::HISTORY_KEEP;
pub use runtime::{CallGrant, DEFAULT_PAUSE_TIMEOUT_MS, DevRuntime};
pub use store::records::{OpenCall, OpenRefusal, TenantSettings, WaitRecord, WaitState};
pub use tokens::{TOOL_FILES_PREFIX, WAIT_LINK_PREFIX};
