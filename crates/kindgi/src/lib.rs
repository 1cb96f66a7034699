#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod authoring;
mod cancel;
mod context;
pub mod env;
mod error;
mod files;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod index;
mod log;
mod log_events;
mod schema;
mod service;
mod source;
mod telemetry;
pub mod testing;

pub use authoring::agent::Agent;
pub use authoring::check::{Guardrail, IntoCheckResult};
pub use authoring::flow;
pub use authoring::flow::Flow;
pub use authoring::handler::{AsyncHandler, BlockingHandler};
pub use authoring::http_spec::{HttpAuth, HttpBody, HttpMethod, HttpSpec, SecretRef};
pub use authoring::pack::Pack;
pub use authoring::refs::{AgentRef, GuardrailRef, ToolRef};
pub use authoring::reply::{Pause, Reply, ToolOutput};
pub use authoring::tool::{Network, Tool};
pub use authoring::trace::{RunTrace, TraceShapeError};
pub use cancel::{CancelReason, Cancellation};
pub use context::{MissingValue, ToolContext, WaitLink};
pub use error::{PauseNotAvailable, ToolError};
pub use files::{Files, FilesError, FilesNotAvailable, ReadOutcome, StoreOutcome};
pub use kindgi_macros::{check, tool, tools};
pub use kindgi_protocol as protocol;
pub use kindgi_protocol::vocab::{
    EffectKind, GuardrailKind, OnViolation, Sandbox, ScopeWhen, Severity,
};
pub use kindgi_protocol::{CheckResult, Connection, FileValue, NotRead, NotStored, Secret};
pub use schema::{input_schema_for, output_schema_for};
pub use schemars;
pub use serde;
pub use serde_json;
#[cfg(feature = "dev-front")]
pub use service::pack_http;
pub use service::{
    EnvCheck, InvalidTenantId, InvalidToken, ServeError, ServiceConfig, Token, serve,
    shutdown_signal,
};
pub use source::SourceFile;
pub use tracing;

/// The plumbing of the handler traits, public only because their methods
/// return it: not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::authoring::handler::ErasedHandler;
    pub use crate::authoring::reply::ReplyValue;
}

/// The workspace README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct WorkspaceReadme;
