//! Wire types of Kindgi pack protocol v2 (schema 2.10.0).
//!
//! This crate holds the messages a Kindgi runtime and a pack service
//! exchange, the pack index, and the two pure algorithms both sides must
//! agree on byte for byte: the canonical index JSON ([`canonical`]) and the
//! call's idempotency key ([`idempotency`]). It does no I/O.
//!
//! ```
//! use kindgi_protocol::{Request, parse_request};
//!
//! let body = br#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},
//!                 "input":{"message":"hi"},"ctx":{"tenantId":"t1","runId":"r1"}}"#;
//! match parse_request(body) {
//!     Ok(Request::Invoke(invoke)) => assert_eq!(invoke.tool.id, "acme.echo"),
//!     other => panic!("unexpected: {other:?}"),
//! }
//! ```

#[macro_use]
mod macros;

pub mod canonical;
mod context;
pub mod env_filter;
mod fast_request;
mod file;
pub mod headers;
pub mod idempotency;
pub mod ids;
mod index;
mod info;
pub mod percent;
mod request;
mod response;
mod secret;
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
    CheckInvoke, CheckRef, ParseError, Request, ToolInvoke, ToolRef, parse_request,
    parse_request_value,
};
pub use response::{
    CheckResult, CheckResultMessage, ErrorCode, ErrorResponse, Issue, Response, ThrownCause,
    ToolPause, ToolResult,
};
pub use secret::Secret;
pub use version::{PROTOCOL_VERSION, ProtocolV2, SCHEMA_VERSION};
