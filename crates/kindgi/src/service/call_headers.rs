//! The request headers a call reads: token, tenant, content type and
//! length, `traceparent`, timeout and request id — the first value of
//! each, as [`HeaderMap::get`] gives it.

use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderName};
use http::{HeaderMap, HeaderValue};
use kindgi_protocol::headers;

// The protocol's names as `HeaderName`s, made once: looked up by a `&str`,
// a name is parsed again on every lookup.
static PACK_TOKEN: HeaderName = HeaderName::from_static(headers::PACK_TOKEN);
static TENANT_ID: HeaderName = HeaderName::from_static(headers::TENANT_ID);
static TRACEPARENT: HeaderName = HeaderName::from_static(headers::TRACEPARENT);
static TIMEOUT_MS: HeaderName = HeaderName::from_static(headers::TIMEOUT_MS);
static REQUEST_ID: HeaderName = HeaderName::from_static(headers::REQUEST_ID);

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
            token: map.get(&PACK_TOKEN),
            tenant_id: map.get(&TENANT_ID),
            content_type: map.get(CONTENT_TYPE),
            content_length: map.get(CONTENT_LENGTH),
            traceparent: map.get(&TRACEPARENT),
            timeout_ms: map.get(&TIMEOUT_MS),
            request_id: map.get(&REQUEST_ID),
        }
    }
}
