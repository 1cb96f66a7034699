//! What the workspace's tests share, so that each piece of test plumbing
//! exists once:
//!
//! - [`http`]: the raw HTTP/1.1 client (the conformance suite's own, which
//!   its library needs at run time; re-exported here);
//! - [`server`]: a scripted HTTP server, for the fake pack services, file
//!   stores and apps tests stand up;
//! - [`process`]: a process under test that writes a `listening` record
//!   (a pack service, the dev runtime): started, its output collected,
//!   signalled, waited for;

pub use kindgi_conformance::http;

pub mod process;
pub mod server;

pub use process::{Listen, ListeningProcess, StartError, Stream};
pub use server::{Reply, ScriptedServer, SeenRequest};
