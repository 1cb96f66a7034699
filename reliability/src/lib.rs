//! Load, fault and hostile-input tests of the Kindgi pack service and the
//! dev runtime, and the `kindgi-stress` command.
//!
//! This library is the harness both use: it starts the real binaries on
//! `127.0.0.1` port 0 ([`PackService`], [`RuntimeProcess`]), speaks raw
//! HTTP/1.1 to them so that every way an exchange can end is told apart
//! ([`http::Outcome`]), and reads what the kernel knows about a process
//! ([`proc`]): its resident memory, its open files, its environment.
//!
//! Every load it makes targets `127.0.0.1` only, and every loop in it is
//! bounded in count and in time. See `docs/reliability.md` for what each
//! test proves.

pub mod bins;
pub mod http;
pub mod invoke;
pub mod proc;
pub mod runtime;
pub mod scenarios;
pub mod secrets;
pub mod service;

pub use http::{Outcome, Request, Response};
pub use runtime::RuntimeProcess;
pub use service::{PackService, ServiceOptions};
