//! HTTP header names of the protocol, lowercase as HTTP/2 would send them.

/// The pack service's token (required on `/v1/invoke` and `/v1/info`).
pub const PACK_TOKEN: &str = "kindgi-pack-token";
/// The call's relative deadline in milliseconds (default 120000).
pub const TIMEOUT_MS: &str = "kindgi-timeout-ms";
/// The run the call belongs to.
pub const RUN_ID: &str = "kindgi-run-id";
/// The individual request.
pub const REQUEST_ID: &str = "kindgi-request-id";
/// The protocol version the runtime speaks.
pub const PROTOCOL: &str = "kindgi-protocol";
/// W3C Trace Context of the run (protocol 2.4.1).
pub const TRACEPARENT: &str = "traceparent";
/// The tenant the call is for (protocol 2.7.0).
pub const TENANT_ID: &str = "kindgi-tenant-id";
/// On an invoke answer: how long the call took, whole milliseconds.
pub const DURATION_MS: &str = "kindgi-duration-ms";
/// On an invoke answer: the artifact version of the index being served.
pub const ARTIFACT_VERSION: &str = "kindgi-artifact-version";
/// On a tool-files store: the file's name, percent-encoded UTF-8.
pub const FILE_NAME: &str = "kindgi-file-name";

/// The default deadline when `kindgi-timeout-ms` is absent or invalid.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// Largest request body a pack service reads: 10 MiB.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Whether `value` may be a token or id sent in a header: printable ASCII
/// without spaces (`!` to `~`), not empty. The pack service's token, a
/// tenant id and the dev runtime's tokens follow this rule, so that each
/// travels in an HTTP header unchanged.
///
/// ```
/// use kindgi_protocol::headers::is_header_token;
/// assert!(is_header_token("tok_3f9a-._~!"));
/// assert!(!is_header_token(""));
/// assert!(!is_header_token("has space"));
/// assert!(!is_header_token("caf\u{e9}"));
/// ```
pub fn is_header_token(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Parses a `Retry-After` value in whole seconds (`delta-seconds`), or
/// `None` for anything else — an HTTP date included, which a caller reads
/// as its own default wait.
///
/// ```
/// use std::time::Duration;
/// use kindgi_protocol::headers::parse_retry_after;
/// assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
/// assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
/// assert_eq!(parse_retry_after("+3"), None);
/// assert_eq!(parse_retry_after("1.5"), None);
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
/// ```
pub fn parse_retry_after(value: &str) -> Option<std::time::Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value
        .parse::<u64>()
        .ok()
        .map(std::time::Duration::from_secs)
}

/// Parses `kindgi-timeout-ms`: a positive integer, else the default.
///
/// ```
/// use kindgi_protocol::headers::{parse_timeout_ms, DEFAULT_TIMEOUT_MS};
/// assert_eq!(parse_timeout_ms(Some("300")), 300);
/// assert_eq!(parse_timeout_ms(Some("-1")), DEFAULT_TIMEOUT_MS);
/// assert_eq!(parse_timeout_ms(Some("1.5")), DEFAULT_TIMEOUT_MS);
/// assert_eq!(parse_timeout_ms(None), DEFAULT_TIMEOUT_MS);
/// ```
pub fn parse_timeout_ms(raw: Option<&str>) -> u64 {
    raw.map(str::trim)
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .unwrap_or(DEFAULT_TIMEOUT_MS)
}
