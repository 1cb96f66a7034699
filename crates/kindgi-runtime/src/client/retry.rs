//! How often, and how long apart, a call that provably did not run is sent
//! again.

use std::time::Duration;

/// The retry policy of a [`super::PackClient`]. Every retry stays within
/// the call's deadline.
///
/// ```
/// let policy = kindgi_runtime::client::RetryPolicy::default();
/// assert_eq!(policy.max_attempts, 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts at most, the first included.
    pub max_attempts: u32,
    /// The wait after the first refused connection; doubled each time.
    pub initial_backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
    /// How long past the call's deadline the client still waits for the
    /// service's own `deadline-exceeded` answer.
    pub answer_grace: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            answer_grace: Duration::from_secs(1),
        }
    }
}

/// `Retry-After` in whole seconds; 1 s when absent or an HTTP date.
pub(crate) fn retry_after(value: Option<&str>) -> Duration {
    value
        .and_then(kindgi_protocol::headers::parse_retry_after)
        .unwrap_or(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_retry_after() {
        assert_eq!(retry_after(Some("3")), Duration::from_secs(3));
        assert_eq!(retry_after(Some("0")), Duration::ZERO);
        assert_eq!(
            retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            Duration::from_secs(1)
        );
        assert_eq!(retry_after(None), Duration::from_secs(1));
    }
}
