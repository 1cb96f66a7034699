//! The request headers a call reads: token, tenant, content type and
//! length, `traceparent`, timeout and request id — the first value of
//! each, as [`HeaderMap::get`] gives it.

use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};
use kindgi_protocol::headers;

/// The first value of each header a call reads.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CallHeaders<'a> {
    /// `kindgi-pack-token`.
    pub(crate) token: Option<&'a HeaderValue>,
    /// `kindgi-tenant-id`.
    pub(crate) tenant_id: Option<&'a HeaderValue>,
    /// `Content-Type`.
    pub(crate) content_type: Option<&'a HeaderValue>,
    /// `Content-Length`.
    pub(crate) content_length: Option<&'a HeaderValue>,
    /// `traceparent`.
    pub(crate) traceparent: Option<&'a HeaderValue>,
    /// `kindgi-timeout-ms`.
    pub(crate) timeout_ms: Option<&'a HeaderValue>,
    /// `kindgi-request-id`.
    pub(crate) request_id: Option<&'a HeaderValue>,
}

impl<'a> CallHeaders<'a> {
    /// The headers of `map` a call reads.
    pub(crate) fn of(map: &'a HeaderMap) -> Self {
        CallHeaders {
            token: map.get(headers::PACK_TOKEN),
            tenant_id: map.get(headers::TENANT_ID),
            content_type: map.get(CONTENT_TYPE),
            content_length: map.get(CONTENT_LENGTH),
            traceparent: map.get(headers::TRACEPARENT),
            timeout_ms: map.get(headers::TIMEOUT_MS),
            request_id: map.get(headers::REQUEST_ID),
        }
    }
}
