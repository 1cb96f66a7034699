//! The request headers a call reads, found in one pass over the request's
//! headers: looking each one up in the `HeaderMap` hashes its name, seven
//! times a call, where a request carries a handful of headers.

use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};
use kindgi_protocol::headers;

/// The first value of each header a call reads, as
/// [`HeaderMap::get`] gives it.
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
        let mut found = CallHeaders::default();
        for (name, value) in map {
            let slot = if *name == CONTENT_TYPE {
                &mut found.content_type
            } else if *name == CONTENT_LENGTH {
                &mut found.content_length
            } else {
                match name.as_str() {
                    headers::PACK_TOKEN => &mut found.token,
                    headers::TENANT_ID => &mut found.tenant_id,
                    headers::TRACEPARENT => &mut found.traceparent,
                    headers::TIMEOUT_MS => &mut found.timeout_ms,
                    headers::REQUEST_ID => &mut found.request_id,
                    _ => continue,
                }
            };
            // A repeated header's values come in order: the first stays.
            slot.get_or_insert(value);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderName;

    use super::*;

    /// Every header a call reads is found as `HeaderMap::get` finds it:
    /// the first of repeated values, none when absent, whatever else the
    /// request carries.
    #[test]
    fn one_pass_finds_what_get_finds() {
        let names = [
            headers::PACK_TOKEN,
            headers::TENANT_ID,
            "content-type",
            "content-length",
            headers::TRACEPARENT,
            headers::TIMEOUT_MS,
            headers::REQUEST_ID,
        ];
        let read = |found: &CallHeaders<'_>| {
            [
                found.token,
                found.tenant_id,
                found.content_type,
                found.content_length,
                found.traceparent,
                found.timeout_ms,
                found.request_id,
            ]
            .map(|v| v.map(|v| v.as_bytes().to_vec()))
        };
        // Each subset of the headers, some repeated, among others.
        for present in 0u32..(1 << names.len()) {
            let mut map = HeaderMap::new();
            map.append("host", HeaderValue::from_static("127.0.0.1"));
            for (i, name) in names.iter().enumerate() {
                if present & (1 << i) != 0 {
                    let name = HeaderName::from_static(name);
                    map.append(&name, HeaderValue::from(i));
                    map.append("x-other", HeaderValue::from_static("x"));
                    if present & (1 << ((i + 3) % names.len())) != 0 {
                        map.append(&name, HeaderValue::from(100 + i));
                    }
                }
            }
            let expected = names.map(|name| map.get(name).map(|v| v.as_bytes().to_vec()));
            assert_eq!(read(&CallHeaders::of(&map)), expected, "{present:b}");
        }
    }
}
