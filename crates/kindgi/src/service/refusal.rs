//! Why a request is refused before any call runs: decided by the routes,
//! by admission or, for want of a thread, by a blocking tool, and answered
//! by [`super::answer`] (CONTRACT §3).

use http::Method;

/// A request refused before a call ran. Each is answered with its own
/// status and body; [`Refusal::reason`] names those a call's metrics count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// 404 `No route <path>`.
    NoRoute(String),
    /// 405 `Use GET` / `Use POST`: the route takes this method only.
    WrongMethod(Method),
    /// 401 `Bad pack token`.
    BadToken,
    /// 421 `pack-tenant-mismatch`: the call is for another tenant than the
    /// one the service is pinned to, as the `kindgi-tenant-id` header
    /// (`"header"`) or the message's `ctx.tenantId` (`"context"`) says.
    OtherTenant {
        /// `"header"` or `"context"`.
        via: &'static str,
    },
    /// 503 `draining`: the service is stopping.
    Draining,
    /// 503 `missing env`: required env names have no value, and the env
    /// check is strict.
    MissingEnv(Vec<String>),
    /// 503 `overloaded`: every call slot is taken, or the memory budget
    /// is, or (a blocking tool) every blocking handler's slot.
    Overloaded,
    /// 415 `Content-Type must be application/json`.
    NotJson,
    /// 413 `Request body too large`.
    TooLarge,
    /// 413: parsing the body would take more than `limit` bytes, the most
    /// one call may.
    TooCostly {
        /// The most one call may take, in bytes.
        limit: usize,
    },
    /// 400 `The request body could not be read`.
    Unreadable,
}

impl Refusal {
    /// The reason a call's metrics count this refusal by: the 503s, a
    /// call the service could not take (`kindgi.reason`); `None` for the
    /// others, which no retry would change.
    pub(crate) fn reason(&self) -> Option<&'static str> {
        match self {
            Refusal::Draining => Some("draining"),
            Refusal::MissingEnv(_) => Some("missing-env"),
            Refusal::Overloaded => Some("overloaded"),
            _ => None,
        }
    }
}
