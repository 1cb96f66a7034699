//! The stress pack's tools, one file each.

pub(crate) mod append;
pub(crate) mod block;
pub(crate) mod count;
pub(crate) mod echo_input;
pub(crate) mod environ;
pub(crate) mod log;
pub(crate) mod panics;
pub(crate) mod sleep;
pub(crate) mod store;
pub(crate) mod throws;
