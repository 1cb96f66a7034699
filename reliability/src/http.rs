//! Raw HTTP/1.1 over TCP, so that every way an exchange can end is told
//! apart: no connection (the request provably never left), an answer, or
//! a connection that ended without one. The test kit's client, under the
//! names this crate's tests use.

pub use kindgi_test_kit::http::*;
pub use kindgi_test_kit::http::{HttpRequest as Request, HttpResponse as Response};
