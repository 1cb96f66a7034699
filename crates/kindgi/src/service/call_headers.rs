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
    /// The headers of `map` a call reads, in one pass over the map (a
    /// request has a few headers; a lookup by name hashes the name).
    pub(crate) fn of(map: &'a HeaderMap) -> Self {
        let mut read = CallHeaders::default();
        for (name, value) in map {
            let slot = match name.as_str() {
                headers::PACK_TOKEN => &mut read.token,
                headers::TENANT_ID => &mut read.tenant_id,
                headers::TRACEPARENT => &mut read.traceparent,
                headers::TIMEOUT_MS => &mut read.timeout_ms,
                headers::REQUEST_ID => &mut read.request_id,
                _ if name == CONTENT_TYPE => &mut read.content_type,
                _ if name == CONTENT_LENGTH => &mut read.content_length,
                _ => continue,
            };
            // The first value, as `HeaderMap::get` gives it.
            slot.get_or_insert(value);
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderName;

    use super::*;

    #[test]
    fn each_header_read_is_its_first_value_and_the_rest_are_passed_over() {
        let mut map = HeaderMap::new();
        for (name, value) in [
            ("Host", "pack"),
            ("Kindgi-Pack-Token", "first"),
            ("kindgi-pack-token", "second"),
            ("content-type", "application/json"),
            ("content-length", "2"),
            ("traceparent", "00-trace"),
            ("kindgi-timeout-ms", "50"),
            ("kindgi-request-id", "req-1"),
            ("kindgi-tenant-id", "t"),
            ("x-other", "x"),
        ] {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("a name");
            map.append(name, HeaderValue::from_static(value));
        }
        let read = CallHeaders::of(&map);
        fn text(value: Option<&HeaderValue>) -> Option<&str> {
            value.map(|v| v.to_str().expect("ASCII"))
        }
        assert_eq!(text(read.token), Some("first"));
        assert_eq!(text(read.tenant_id), Some("t"));
        assert_eq!(text(read.content_type), Some("application/json"));
        assert_eq!(text(read.content_length), Some("2"));
        assert_eq!(text(read.traceparent), Some("00-trace"));
        assert_eq!(text(read.timeout_ms), Some("50"));
        assert_eq!(text(read.request_id), Some("req-1"));
        let empty = HeaderMap::new();
        let none = CallHeaders::of(&empty);
        assert!(none.token.is_none() && none.content_type.is_none());
    }
}
