//! The pieces of the pack service's HTTP surface (CONTRACT §3) that a
//! server standing in front of a pack service — `kindgi dev`'s front — needs
//! to answer exactly as the service does: the JSON bodies of its refusals,
//! the token and content-type checks, and the reading of a request body
//! within its limit. Public only with the `dev-front` feature, for the
//! `kindgi` command: not part of the SDK's API.
//!
//! ```
//! # #[cfg(feature = "dev-front")] {
//! use kindgi::pack_http;
//! use http::{HeaderMap, Method, StatusCode};
//!
//! let token = kindgi::Token::new("4f1c0d9e2b7a").expect("a usable token");
//! let headers = HeaderMap::new();
//! assert!(!pack_http::token_matches(&headers, &token));
//! assert_eq!(pack_http::bad_token().status(), StatusCode::UNAUTHORIZED);
//! let refused = pack_http::wrong_method(&Method::GET, &Method::POST);
//! assert_eq!(refused.map(|r| r.status()), Some(StatusCode::METHOD_NOT_ALLOWED));
//! # }
//! ```

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt as _, Full};
use kindgi_protocol::headers;

use super::token::Token;

/// An answer of the pack service: a whole body, JSON.
pub type Response = http::Response<Full<Bytes>>;

/// How long a client may take to send a request body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);

const PACK_TOKEN: HeaderName = HeaderName::from_static(headers::PACK_TOKEN);

/// The content type of every answer: JSON in UTF-8, spelt as the Node and
/// Python reference services spell it.
pub const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

/// `body` with `status`, as [`JSON_CONTENT_TYPE`].
pub fn json(status: StatusCode, body: impl Into<Bytes>) -> Response {
    let mut response = http::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE));
    response
}

/// `{"error": message}` with `status`.
pub fn error(status: StatusCode, message: &str) -> Response {
    json(status, serde_json::json!({ "error": message }).to_string())
}

/// A 503 with `body` and `Retry-After: 1`, as every 503 of the service.
pub fn unavailable(body: &serde_json::Value) -> Response {
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, body.to_string());
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// `/healthz`: 200 `{"status":"ok"}`.
pub fn healthy() -> Response {
    json(StatusCode::OK, r#"{"status":"ok"}"#)
}

/// 404 `No route <path>`.
pub fn no_route(path: &str) -> Response {
    error(StatusCode::NOT_FOUND, &format!("No route {path}"))
}

/// 405 `Use GET` / `Use POST` when a route that takes `want` was asked
/// with `method`; `None` when they are the same.
pub fn wrong_method(method: &Method, want: &Method) -> Option<Response> {
    (method != want).then(|| use_method(want))
}

/// 405 `Use GET` / `Use POST`, for a route that takes `want` alone.
pub fn use_method(want: &Method) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        if want == Method::GET {
            "Use GET"
        } else {
            "Use POST"
        },
    )
}

/// Whether the request carries `token` in `kindgi-pack-token`, compared in
/// constant time.
pub fn token_matches(headers: &HeaderMap, token: &Token) -> bool {
    sent_token_matches(headers.get(PACK_TOKEN), token)
}

/// [`token_matches`], of the `kindgi-pack-token` value `sent`.
pub(crate) fn sent_token_matches(sent: Option<&HeaderValue>, token: &Token) -> bool {
    token.matches(sent.map(HeaderValue::as_bytes).unwrap_or_default())
}

/// 401 `Bad pack token`.
pub fn bad_token() -> Response {
    error(StatusCode::UNAUTHORIZED, "Bad pack token")
}

/// Whether the request's `Content-Type` says JSON (contains
/// `application/json`, parameters and all).
pub fn is_json(headers: &HeaderMap) -> bool {
    is_json_type(headers.get(CONTENT_TYPE))
}

/// [`is_json`], of the `Content-Type` value `sent`.
pub(crate) fn is_json_type(sent: Option<&HeaderValue>) -> bool {
    header_text(sent).is_some_and(|t| t.contains("application/json"))
}

/// A header's value as text, when it is visible ASCII.
pub(crate) fn header_text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

/// 415 `Content-Type must be application/json`.
pub fn not_json() -> Response {
    error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Content-Type must be application/json",
    )
}

/// The body's length as `Content-Length` declares it (`None` when absent
/// or not a number).
///
/// # Errors
///
/// [`BodyError::TooLarge`] when it declares more than the limit
/// ([`headers::MAX_BODY_BYTES`]): answer [`too_large`] before a byte of it
/// is read.
pub fn declared_length(headers: &HeaderMap) -> Result<Option<u64>, BodyError> {
    length_declared(headers.get(CONTENT_LENGTH))
}

/// [`declared_length`], of the `Content-Length` value `sent`.
///
/// # Errors
///
/// As [`declared_length`].
pub(crate) fn length_declared(sent: Option<&HeaderValue>) -> Result<Option<u64>, BodyError> {
    let declared = header_text(sent).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > headers::MAX_BODY_BYTES as u64) {
        return Err(BodyError::TooLarge);
    }
    Ok(declared)
}

/// 413 `Request body too large`.
pub fn too_large() -> Response {
    error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large")
}

/// 400 `The request body could not be read`.
pub fn unreadable() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "The request body could not be read",
    )
}

/// Why [`read_body`] did not return a body, or [`declared_length`]
/// refused one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyError {
    /// Past [`headers::MAX_BODY_BYTES`]: answer [`too_large`].
    TooLarge,
    /// `reserve` refused the memory it needs (the service answers 503
    /// `overloaded`).
    Overloaded,
    /// The connection failed or the body was malformed: answer
    /// [`unreadable`].
    Unreadable,
}

/// Reads `body` into one buffer, refusing it past the limit
/// ([`headers::MAX_BODY_BYTES`], counted as it streams: never buffered past
/// it). What it costs is about its size, whatever its framing: each of a
/// million one-byte chunks would otherwise keep its own buffer until the
/// end. Before the buffer grows, `reserve` is asked for the bytes it takes
/// — a declared length at once, a chunked body as its buffer doubles — and
/// may refuse them (a memory budget); pass `|_| true` for none.
///
/// It does not time out: wrap it in [`BODY_TIMEOUT`].
///
/// # Errors
///
/// [`BodyError`]: too large, refused by `reserve`, or unreadable.
pub async fn read_body<B>(
    body: &mut B,
    declared: Option<u64>,
    mut reserve: impl FnMut(usize) -> bool,
) -> Result<Bytes, BodyError>
where
    B: Body<Data = Bytes> + Unpin,
{
    let limit = headers::MAX_BODY_BYTES;
    let expected = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit).min(limit));
    if !reserve(expected) {
        return Err(BodyError::Overloaded);
    }
    let mut out = Vec::with_capacity(expected);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Unreadable)?;
        if let Some(data) = frame.data_ref() {
            let needed = out.len() + data.len();
            if needed > limit {
                return Err(BodyError::TooLarge);
            }
            if needed > out.capacity() {
                // Doubling, as a Vec would, but reserved first and never
                // past the limit.
                let capacity = needed.max(out.capacity() * 2).max(16 * 1024).min(limit);
                if !reserve(capacity - out.capacity()) {
                    return Err(BodyError::Overloaded);
                }
                out.reserve_exact(capacity - out.len());
            }
            out.extend_from_slice(data);
        }
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn text(response: Response) -> String {
        match response.into_body().collect().await {
            Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
            Err(never) => match never {},
        }
    }

    #[tokio::test]
    async fn the_bodies_are_the_contracts() {
        assert_eq!(text(healthy()).await, r#"{"status":"ok"}"#);
        assert_eq!(text(no_route("/x")).await, r#"{"error":"No route /x"}"#);
        assert_eq!(text(bad_token()).await, r#"{"error":"Bad pack token"}"#);
        assert_eq!(
            text(not_json()).await,
            r#"{"error":"Content-Type must be application/json"}"#
        );
        let busy = unavailable(&serde_json::json!({"error": "overloaded"}));
        assert_eq!(
            busy.headers().get(RETRY_AFTER).map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
        assert_eq!(text(busy).await, r#"{"error":"overloaded"}"#);
        assert!(wrong_method(&Method::GET, &Method::GET).is_none());
        let post = wrong_method(&Method::GET, &Method::POST).expect("405");
        assert_eq!(text(post).await, r#"{"error":"Use POST"}"#);
    }

    #[tokio::test]
    async fn a_body_is_read_within_its_limit_and_reservation() {
        let mut small = Full::new(Bytes::from_static(b"{}"));
        assert_eq!(
            read_body(&mut small, Some(2), |_| true).await,
            Ok(Bytes::from_static(b"{}"))
        );
        let big = Bytes::from(vec![b' '; headers::MAX_BODY_BYTES + 1]);
        let mut too_big = Full::new(big);
        assert_eq!(
            read_body(&mut too_big, None, |_| true).await,
            Err(BodyError::TooLarge)
        );
        let mut refused = Full::new(Bytes::from_static(b"{}"));
        assert_eq!(
            read_body(&mut refused, None, |n| n == 0).await,
            Err(BodyError::Overloaded)
        );
    }
}
