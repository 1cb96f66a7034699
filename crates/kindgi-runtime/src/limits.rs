//! Protections of the tool-files API: a per-client rate limit and a
//! memory budget for bytes in flight.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Whose budget a request counts against: the credential it carries (a
/// files token's or a wait link's id, as written, before it is checked),
/// or, carrying none that is well formed, its client's address. So a flood
/// without a credential — from a local client, every one of which is
/// 127.0.0.1 — uses up only its own budget, and a valid token's requests
/// still go through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Bucket {
    /// A request with a well-formed credential: its id.
    Credential(String),
    /// A request without one, by client address.
    Anonymous(IpAddr),
}

/// A fixed-window request counter per [`Bucket`].
#[derive(Debug)]
pub(crate) struct RateLimiter {
    limit: u32,
    window: Duration,
    clients: Mutex<HashMap<Bucket, (Instant, u32)>>,
}

impl RateLimiter {
    pub(crate) fn new(limit: u32, window: Duration) -> Self {
        Self {
            limit,
            window,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one request against `bucket`: `Err(retry_after)` past the
    /// limit.
    pub(crate) fn check(&self, bucket: Bucket) -> Result<(), Duration> {
        let now = Instant::now();
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if clients.len() > 10_000 {
            clients.retain(|_, (start, _)| now.duration_since(*start) < self.window);
        }
        let entry = clients.entry(bucket).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
        if entry.1 > self.limit {
            Err(self.window.saturating_sub(now.duration_since(entry.0)))
        } else {
            Ok(())
        }
    }
}

/// Bytes of files the runtime may hold in memory at once.
#[derive(Debug, Clone)]
pub(crate) struct MemoryBudget {
    bytes: Arc<Semaphore>,
    total: u64,
    wait: Duration,
}

impl MemoryBudget {
    pub(crate) fn new(total: u64, wait: Duration) -> Self {
        let total = total.clamp(1, Semaphore::MAX_PERMITS as u64);
        Self {
            bytes: Arc::new(Semaphore::new(usize::try_from(total).unwrap_or(usize::MAX))),
            total,
            wait,
        }
    }

    /// Reserves room for `bytes` (at most the whole budget), waiting up to
    /// the configured time. `None`: no room in time.
    pub(crate) async fn reserve(&self, bytes: u64) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(bytes.clamp(1, self.total)).unwrap_or(u32::MAX);
        tokio::time::timeout(self.wait, Arc::clone(&self.bytes).acquire_many_owned(n))
            .await
            .ok()?
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_counts_per_bucket_and_window() {
        let limiter = RateLimiter::new(2, Duration::from_millis(50));
        let a = Bucket::Anonymous(IpAddr::from([127, 0, 0, 1]));
        let b = Bucket::Anonymous(IpAddr::from([127, 0, 0, 2]));
        let token = Bucket::Credential("abc".to_owned());
        assert!(limiter.check(a.clone()).is_ok());
        assert!(limiter.check(a.clone()).is_ok());
        assert!(limiter.check(a.clone()).is_err());
        assert!(limiter.check(b).is_ok());
        // A credential's own budget, whatever the address used up.
        assert!(limiter.check(token.clone()).is_ok());
        assert!(limiter.check(token).is_ok());
        std::thread::sleep(Duration::from_millis(60));
        assert!(limiter.check(a).is_ok());
    }

    #[tokio::test]
    async fn budget_refuses_when_full() {
        let budget = MemoryBudget::new(100, Duration::from_millis(20));
        let held = budget.reserve(80).await;
        assert!(held.is_some());
        assert!(budget.reserve(30).await.is_none());
        drop(held);
        assert!(budget.reserve(30).await.is_some());
    }
}
