//! Write Kindgi packs in Rust.
//!
//! A pack is an ordinary cargo binary crate. Its tools are async functions
//! whose input and output types derive `serde` and `schemars` traits; its
//! guardrail checks are functions of a typed config and the run trace; its
//! agents and flows are data. The same binary indexes itself
//! (`<pack> index`) and serves the pack protocol (`<pack> serve`).
//!
//! ```no_run
//! use std::process::ExitCode;
//! use kindgi::{Pack, Tool, ToolContext, ToolError};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoInput {
//!     #[schemars(length(min = 1))]
//!     message: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct EchoOutput {
//!     message: String,
//! }
//!
//! async fn echo(input: EchoInput, _ctx: ToolContext) -> Result<EchoOutput, ToolError> {
//!     Ok(EchoOutput { message: input.message })
//! }
//!
//! fn main() -> ExitCode {
//!     Pack::new()
//!         .tool(Tool::new("acme.echo").description("Echo.").handler(echo))
//!         .run()
//! }
//! ```
//!
//! The [`tool`] and [`check`] attributes write the builder calls for you:
//! the function stays as written, and `#[tool]` adds `<name>_tool()`,
//! `#[check]` adds `<name>_guardrail()`. A doc comment becomes the
//! description, and ids are checked at compile time.
//!
//! ```
//! use kindgi::{CheckResult, RunTrace, ToolContext, ToolError};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Input { message: String }
//! #[derive(Serialize, JsonSchema)]
//! struct Output { message: String }
//!
//! /// Returns the message it is given.
//! #[kindgi::tool(id = "acme.echo", mutating = false)]
//! async fn echo(input: Input, _ctx: ToolContext) -> Result<Output, ToolError> {
//!     Ok(Output { message: input.message })
//! }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Config { #[serde(default)] max: usize }
//!
//! #[kindgi::check(id = "acme.short", on_violation = "halt")]
//! fn short(config: Config, trace: RunTrace) -> CheckResult {
//!     (trace.output_text().unwrap_or("").len() <= config.max).into()
//! }
//!
//! let pack = kindgi::Pack::new().tool(echo_tool()).guardrail(short_guardrail());
//! assert_eq!(pack.tools()[0].id(), "acme.echo");
//! ```
//!
//! The pack's id, version and declared env live in its `Cargo.toml`
//! under `[package.metadata.kindgi]` (see [`index::PackConfig`]).
//!
//! # Features
//!
//! - `https` (default): HTTPS to the runtime's tool-files URL, through the
//!   platform's TLS library.
//! - `testing`: [`testing`] with an in-process dev runtime for files and
//!   pauses.
//! - `mimalloc`: mimalloc as the process's global allocator. A pack
//!   service allocates for every call; with it the fixture pack serves
//!   echo calls with about a seventh fewer instructions (`bench/`). Leave
//!   it off when the binary sets its own `#[global_allocator]`:
//!
//!   ```toml
//!   kindgi = { version = "0.1", features = ["mimalloc"] }
//!   ```

#![deny(missing_docs)]

mod authoring;
mod cancel;
mod context;
pub mod env;
mod error;
mod files;
pub mod index;
mod log;
mod log_events;
mod percent;
mod schema;
mod service;
mod source;
pub mod testing;

pub use authoring::agent::Agent;
pub use authoring::check::{Guardrail, IntoCheckResult};
pub use authoring::flow;
pub use authoring::flow::Flow;
#[doc(hidden)]
pub use authoring::handler::ErasedHandler;
pub use authoring::handler::{AsyncHandler, BlockingHandler};
pub use authoring::pack::Pack;
pub use authoring::refs::{AgentRef, GuardrailRef, ToolRef};
pub use authoring::tool::{Network, Pause, Reply, ReplyValue, Tool, ToolOutput};
pub use authoring::trace::{RunTrace, TraceShapeError};
pub use cancel::{CancelReason, Cancellation};
pub use context::{Missing, ToolContext, WaitLink};
pub use error::{PauseNotAvailable, ToolError};
pub use files::{Files, FilesError, FilesNotAvailable, Read, Stored};
pub use kindgi_macros::{check, tool, tools};
pub use kindgi_protocol as protocol;
pub use kindgi_protocol::vocab::{
    EffectKind, GuardrailKind, OnViolation, Sandbox, ScopeWhen, Severity,
};
pub use kindgi_protocol::{CheckResult, Connection, FileValue, NotRead, NotStored, Secret};
pub use percent::encode_component;
pub use schema::{input_schema_for, output_schema_for};
pub use schemars;
pub use serde;
pub use serde_json;
pub use tracing;

/// The process's allocator with the `mimalloc` feature: see the feature's
/// note in this crate's `Cargo.toml`.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
pub use source::SourceFile;
