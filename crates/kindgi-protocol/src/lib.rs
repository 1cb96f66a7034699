//! Wire types of Kindgi pack protocol v2 (schema 2.10.0) and the pack index.
//!
//! The crate's README, below, says what it holds.
#![doc = include_str!("../README.md")]

#[macro_use]
mod macros;

pub mod canonical;
mod context;
pub mod env_filter;
mod file;
pub mod file_name;
pub mod headers;
pub mod idempotency;
pub mod ids;
mod index;
mod info;
pub mod percent;
mod request;
mod response;
mod secret;
pub mod traceparent;
mod version;
pub mod vocab;

pub use context::{CallContext, Connection, ConnectionAccount, ToolFilesGrant, WaitToken};
pub use file::{FileValue, FileValueType, NotRead, NotStored, ReadAnswer, StoreAnswer};
pub use index::{
    AgentEntry, AgentToolRef, EnvSpec, FlowEntry, GuardrailEntry, INDEX_ENVELOPE_VERSION,
    PackIndex, ToolEntry,
};
pub use info::{Info, InfoTool};
pub use request::{
    CheckInvoke, CheckRef, ParseError, Request, ToolInvoke, ToolRef, not_an_object, parse_request,
    parse_request_value,
};
pub use response::{
    CheckResult, CheckResultMessage, ErrorCode, ErrorResponse, Issue, Response, ThrownCause,
    ToolPause, ToolResult,
};
pub use secret::Secret;
pub use version::{PROTOCOL_VERSION, ProtocolV2, SCHEMA_VERSION};
