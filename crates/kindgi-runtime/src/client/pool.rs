//! The client's connections to its pack service, and when they are given
//! up.
//!
//! A request written on a kept-alive connection just as the service closes
//! it gets no answer, and the client cannot tell whether it ran. A service
//! closes its idle connections in two cases, and the pool keeps out of both:
//!
//! - after it kept one idle for its header timeout (30 s by default): the
//!   pool closes idle connections first, after [`IDLE_FOR`];
//! - as it drains: once it answered `503 draining`, the client starts a new
//!   pool, so that no later attempt is sent on a connection the draining
//!   service is about to close.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long an idle connection is kept for the next call: well within the
/// 30 s a pack service keeps one open.
const IDLE_FOR: Duration = Duration::from_secs(15);

/// The HTTP client whose pool the next attempt uses, and its generation.
#[derive(Debug)]
pub(super) struct Pool {
    current: Mutex<(Generation, reqwest::Client)>,
    /// HTTP/2 with prior knowledge (h2c), else HTTP/1.1.
    http2: bool,
}

/// Which pool an attempt was sent from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Generation(u64);

impl Pool {
    /// A pool with no connection yet.
    pub(super) fn new() -> Self {
        Self {
            current: Mutex::new((Generation(0), fresh(false))),
            http2: false,
        }
    }

    /// A pool of h2c connections, with none yet.
    pub(super) fn http2() -> Self {
        Self {
            current: Mutex::new((Generation(0), fresh(true))),
            http2: true,
        }
    }

    /// The client to send the next attempt with, and its generation.
    pub(super) fn current(&self) -> (Generation, reqwest::Client) {
        self.lock().clone()
    }

    /// The service behind `seen`'s connections is draining: later attempts
    /// start a new pool (once, however many attempts saw it).
    pub(super) fn renew(&self, seen: Generation) {
        let mut current = self.lock();
        if current.0 == seen {
            *current = (Generation(seen.0 + 1), fresh(self.http2));
        }
    }

    /// The pair, even after a panic elsewhere (it is replaced whole).
    fn lock(&self) -> std::sync::MutexGuard<'_, (Generation, reqwest::Client)> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a 503's body is the draining one (`{"error":"draining"}`).
pub(super) fn says_draining(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("error").and_then(serde_json::Value::as_str) == Some("draining"))
}

/// A client with an empty pool, of h2c connections when `http2`.
fn fresh(http2: bool) -> reqwest::Client {
    let builder = reqwest::Client::builder().pool_idle_timeout(IDLE_FOR);
    let builder = if http2 {
        builder.http2_prior_knowledge()
    } else {
        builder
    };
    builder.build().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_draining_503_gives_up_the_pool() {
        assert!(says_draining(br#"{"error":"draining"}"#));
        assert!(!says_draining(br#"{"error":"overloaded"}"#));
        assert!(!says_draining(b"draining"));
        assert!(!says_draining(b""));
    }

    #[test]
    fn a_pool_is_renewed_once_per_generation() {
        let pool = Pool::new();
        let (seen, _) = pool.current();
        pool.renew(seen);
        pool.renew(seen);
        assert_eq!(pool.current().0, Generation(1));
    }
}
