//! The HTTP each connection speaks: HTTP/1.1, or HTTP/2 over cleartext with
//! prior knowledge (h2c, as Cloud Run's end-to-end HTTP/2 and many meshes
//! send it), told apart by the connection's first bytes (HTTP/2's preface).
//! Both reach the same routes with the same rules; each is bounded as an
//! attacker would test it.
//!
//! HTTP/1.1: a request head is due within the header timeout (after the
//! connection opened, or after the last answer). An answer's head and body
//! go out in one buffer, one `write` (hyper's `writev(false)`): over
//! loopback that takes the kernel less than a two-part `writev` (see
//! `bench/README.md`).
//!
//! HTTP/2 (hyper's `h2`): at most [`MAX_STREAMS`] streams at once on a
//! connection; a header list of at most [`MAX_HEADER_LIST`]; flow-control
//! windows of [`STREAM_WINDOW`] a stream and [`CONNECTION_WINDOW`] a
//! connection, which bound what a peer can have sent and the service not
//! yet read; a peer that resets streams as fast as it opens them (rapid
//! reset) or makes the service reset many is sent `GOAWAY` (h2's own
//! counters, [`MAX_PENDING_RESETS`] and [`MAX_ERROR_RESETS`]); CONTINUATION
//! floods end at the header list size, and SETTINGS and PING floods are
//! answered by h2 at a bounded rate.

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto;

/// The most streams one HTTP/2 connection has open at once: the call
/// concurrency cap counts them as it counts requests.
const MAX_STREAMS: u32 = 256;
/// The largest header list an HTTP/2 request may send, as HTTP/1.1's head
/// limit does.
const MAX_HEADER_LIST: u32 = 64 * 1024;
/// A stream's flow-control window: what a peer may send on it unread.
const STREAM_WINDOW: u32 = 256 * 1024;
/// A connection's flow-control window.
const CONNECTION_WINDOW: u32 = 1024 * 1024;
/// Streams a peer may reset before their requests were taken, at once.
const MAX_PENDING_RESETS: usize = 20;
/// Streams the service may reset for a peer's errors before it gives up
/// on the connection.
const MAX_ERROR_RESETS: usize = 256;

/// The server a connection is served with, for a header timeout of
/// `header_timeout`.
pub(super) fn server(header_timeout: Duration) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .writev(false);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .max_header_list_size(MAX_HEADER_LIST)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_pending_accept_reset_streams(MAX_PENDING_RESETS)
        .max_local_error_reset_streams(MAX_ERROR_RESETS);
    builder
}
