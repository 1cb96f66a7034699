//! The HTTP answers of an invoke: a call's message with its headers, and
//! the refusals only the service gives (CONTRACT §3).

use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderName, HeaderValue, StatusCode};
use http_body_util::Full;
use kindgi_protocol::Response;
use kindgi_protocol::headers::{ARTIFACT_VERSION, DURATION_MS};

use super::pack_http;

/// An HTTP answer.
pub(crate) type HttpResponse = hyper::Response<Full<Bytes>>;

/// What an invoke answers: a message (200), a tenant refusal (421: the
/// message's `ctx.tenantId` is not the pinned tenant), or 503 `overloaded`
/// for a blocking handler with no slot free (it did not run).
#[derive(Debug)]
pub(crate) enum Answer {
    /// A protocol message, answered 200.
    Message(Response),
    /// 421 `pack-tenant-mismatch`.
    TenantMismatch,
    /// 503 `overloaded`.
    Overloaded,
}

/// 503 `overloaded`: every call slot is taken, or the memory budget is.
pub(crate) fn overloaded() -> HttpResponse {
    refused(
        pack_http::unavailable(&serde_json::json!({"error": "overloaded"})),
        "overloaded",
    )
}

/// 503 `draining`: the service is stopping.
pub(crate) fn draining() -> HttpResponse {
    refused(
        pack_http::unavailable(&serde_json::json!({"error": "draining"})),
        "draining",
    )
}

/// Why a call was refused 503 before it ran, carried by the refusal (its
/// extension) to the calls' metrics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refused(pub(crate) &'static str);

/// `response`, a 503 refusal, marked with its `reason`.
pub(crate) fn refused(mut response: HttpResponse, reason: &'static str) -> HttpResponse {
    response.extensions_mut().insert(Refused(reason));
    response
}

/// 421 `pack-tenant-mismatch`: the call is for another tenant than the one
/// this service is pinned to.
pub(crate) fn tenant_mismatch() -> HttpResponse {
    pack_http::json(
        StatusCode::MISDIRECTED_REQUEST,
        r#"{"code":"pack-tenant-mismatch"}"#,
    )
}

/// `kindgi-duration-ms`, made once.
static DURATION_MS_HEADER: HeaderName = HeaderName::from_static(DURATION_MS);
/// `kindgi-artifact-version`, made once.
static ARTIFACT_VERSION_HEADER: HeaderName = HeaderName::from_static(ARTIFACT_VERSION);

/// The HTTP answer of a call that took `took`, of a pack whose
/// `kindgi-artifact-version` is `artifact_version` (`None` when the version
/// can't be a header value).
pub(crate) fn call_answer(
    artifact_version: Option<&HeaderValue>,
    took: Duration,
    outcome: Answer,
) -> HttpResponse {
    match outcome {
        Answer::TenantMismatch => tenant_mismatch(),
        Answer::Overloaded => overloaded(),
        Answer::Message(message) => {
            let body = serde_json::to_vec(&message).unwrap_or_default();
            let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
            let headers = response.headers_mut();
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static(super::pack_http::JSON_CONTENT_TYPE),
            );
            // Digits copied into the value at their length: `From<u64>`
            // writes them into a growable buffer, two allocations.
            let mut digits = itoa::Buffer::new();
            let ms = digits.format(took.as_millis() as u64);
            if let Ok(ms) = HeaderValue::from_str(ms) {
                headers.insert(DURATION_MS_HEADER.clone(), ms);
            }
            if let Some(version) = artifact_version {
                headers.insert(ARTIFACT_VERSION_HEADER.clone(), version.clone());
            }
            response
        }
    }
}

/// The whole body of `response` (for tests).
#[cfg(test)]
pub(crate) async fn body_bytes(response: HttpResponse) -> Bytes {
    use http_body_util::BodyExt as _;
    match response.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use kindgi_protocol::{ErrorCode, ErrorResponse};
    use serde_json::json;

    use super::*;

    fn names_and_values(response: &HttpResponse) -> Vec<(String, String)> {
        response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = value.to_str().expect("visible ASCII").to_owned();
                (name.as_str().to_owned(), value)
            })
            .collect()
    }

    use super::body_bytes as body;

    #[tokio::test]
    async fn a_message_has_its_type_duration_and_version() {
        let version = HeaderValue::from_static("20260101.1");
        let message = Answer::Message(Response::result(json!({"message": "hi"})));
        let response = call_answer(Some(&version), Duration::from_millis(12), message);
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            names_and_values(&response),
            [
                ("content-type", "application/json; charset=utf-8"),
                ("kindgi-duration-ms", "12"),
                ("kindgi-artifact-version", "20260101.1"),
            ]
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
        );
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"kind":"result","v":2,"output":{"message":"hi"}}"#)
        );
    }

    #[tokio::test]
    async fn an_error_without_a_version_header_is_still_a_200_message() {
        let error = ErrorResponse::new(ErrorCode::HandlerThrow, "boom").for_tool("a.b");
        let response = call_answer(None, Duration::ZERO, Answer::Message(error.into()));
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            names_and_values(&response),
            [
                ("content-type", "application/json; charset=utf-8"),
                ("kindgi-duration-ms", "0")
            ]
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
        );
    }

    #[tokio::test]
    async fn refusals_have_their_status_and_body() {
        for (answer, status, text) in [
            (
                Answer::TenantMismatch,
                StatusCode::MISDIRECTED_REQUEST,
                r#"{"code":"pack-tenant-mismatch"}"#,
            ),
            (
                Answer::Overloaded,
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"overloaded"}"#,
            ),
        ] {
            let response = call_answer(None, Duration::ZERO, answer);
            assert_eq!(response.status(), status);
            assert_eq!(body(response).await, Bytes::from(text));
        }
    }
}
