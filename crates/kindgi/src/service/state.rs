//! What the service knows once booted: the [`Invoker`], which runs calls,
//! and around it what the HTTP surface serves — its admission and drain.
//! It is built whole from what boot read and the configuration: nothing is
//! patched in afterwards.

use std::time::Duration;

use bytes::Bytes;

use super::admission::Admission;
use super::drain::Drain;
use super::invoker::Invoker;

/// The booted service: the invoker, and who may call it, when.
pub(crate) struct ServiceState {
    pub(crate) invoker: Invoker,
    pub(crate) admission: Admission,
    pub(crate) drain: Drain,
    /// The `/v1/info` body, made once.
    pub(crate) info_body: Bytes,
    /// Every message answer's `kindgi-artifact-version`: `None` when the
    /// version can't be a header value.
    pub(crate) artifact_version: Option<http::HeaderValue>,
    /// How long a client may take to send a request's head.
    pub(crate) header_timeout: Duration,
}

impl ServiceState {
    /// The service of `invoker`, admitting calls by `admission` and
    /// stopping by `drain` (whose window-closed token `invoker` holds),
    /// answering `/v1/info` with `info_body`, giving clients
    /// `header_timeout` for a request's head.
    pub(crate) fn new(
        invoker: Invoker,
        admission: Admission,
        drain: Drain,
        info_body: Bytes,
        header_timeout: Duration,
    ) -> Self {
        Self {
            artifact_version: http::HeaderValue::from_str(&invoker.index.artifact_version).ok(),
            invoker,
            admission,
            drain,
            info_body,
            header_timeout,
        }
    }
}
