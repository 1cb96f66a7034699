//! How a call to a pack service can fail, kept apart by what it tells the
//! caller: the call did not run, may have run, or the service said no.

/// Why a call produced no response message.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The call provably did not run: the service stayed unavailable (503,
    /// connection refused) through every retry the deadline allowed.
    #[error(
        "the pack service was unavailable ({last}) after {attempts} attempt(s); the call did not run"
    )]
    Unavailable {
        /// Attempts made.
        attempts: u32,
        /// What the last attempt met.
        last: String,
    },
    /// 421 `pack-tenant-mismatch`: the service is pinned to another tenant.
    /// The call did not run, and is not retried.
    #[error(
        "the pack service serves another tenant (421 pack-tenant-mismatch); the call did not run"
    )]
    TenantMismatch,
    /// 401: the service refused the pack token.
    #[error("the pack service refused the pack token (401)")]
    Unauthorized,
    /// The request went out and no answer came back (a timeout or a dropped
    /// connection): the call may have run, so it is not retried.
    #[error("{reason}; the call may have run")]
    MayHaveRun {
        /// What happened.
        reason: String,
    },
    /// Another transport-level status (404, 405, 413, 415, 500, …).
    #[error("the pack service answered HTTP {status}: {body}")]
    Status {
        /// The status.
        status: u16,
        /// The body, as text.
        body: String,
    },
    /// A 200 whose body is not a response message.
    #[error("the pack service's answer is not a protocol response: {0}")]
    InvalidAnswer(String),
    /// A `connection-rejected` answer, and renewing the connection failed.
    #[error("renewing connection {connection} failed: {source}")]
    Renew {
        /// The tool's name for the connection.
        connection: String,
        /// Why.
        #[source]
        source: RenewError,
    },
}

impl CallError {
    /// Whether the call provably did not run (safe to run again later).
    pub fn did_not_run(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. } | Self::TenantMismatch | Self::Unauthorized
        )
    }

    /// Whether the call may have run (a timeout or a dropped connection).
    pub fn may_have_run(&self) -> bool {
        matches!(self, Self::MayHaveRun { .. })
    }
}

/// Why a connection's token could not be renewed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RenewError(pub String);
