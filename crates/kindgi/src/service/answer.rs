//! The HTTP answer of every request, made here alone (CONTRACT §3): a
//! route's own answer, a [`Refusal`], or a call's message with its headers.
//! A call refused 503 is counted in the calls' metrics here, and one for
//! another tenant logged (`tenant-mismatch`, warn).

use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderName, HeaderValue, StatusCode};
use http_body_util::Full;
use kindgi_protocol::Response;
use kindgi_protocol::headers::{ARTIFACT_VERSION, DURATION_MS};

use super::invoker::Invoker;
use super::pack_http;
use super::refusal::Refusal;
use super::state::ServiceState;
use crate::log::{Level, Record};

/// An HTTP answer.
pub(crate) type HttpResponse = hyper::Response<Full<Bytes>>;

/// What a request is answered.
#[derive(Debug)]
pub(crate) enum Reply {
    /// `/healthz`: 200 `{"status":"ok"}`.
    Healthy,
    /// `/readyz`: 200 `{"status":"ready"}`.
    Ready,
    /// `/readyz`: the service can't take a call now, and says why (its
    /// 503). No call was refused: it is not counted.
    NotReady(Refusal),
    /// `/v1/info`: 200, the pack's info.
    Info,
    /// Refused before a call ran.
    Refused(Refusal),
    /// A call's message (200), and how long the call took.
    Called(Response, Duration),
}

/// The HTTP answer of `reply`, from `state`.
pub(crate) fn respond(state: &ServiceState, reply: Reply) -> HttpResponse {
    match reply {
        Reply::Called(message, took) => {
            message_answer(state.artifact_version.as_ref(), took, &message)
        }
        Reply::Refused(refusal) => {
            let invoker = &state.invoker;
            if let Some(reason) = refusal.reason() {
                invoker.telemetry.refused(reason);
            }
            if let Refusal::OtherTenant { via } = refusal {
                log_tenant_mismatch(invoker, via);
            }
            refused(&refusal)
        }
        Reply::NotReady(refusal) => refused(&refusal),
        Reply::Healthy => pack_http::healthy(),
        Reply::Ready => pack_http::json(StatusCode::OK, r#"{"status":"ready"}"#),
        Reply::Info => pack_http::json(StatusCode::OK, state.info_body.clone()),
    }
}

/// Logs a call refused `421` for another tenant (`tenant-mismatch`, warn):
/// `via` says whether the `kindgi-tenant-id` header or the message's
/// context named it. No id of the call: they are the other tenant's.
fn log_tenant_mismatch(invoker: &Invoker, via: &'static str) {
    invoker.logger.log(
        Record::lifecycle(
            Level::Warn,
            "tenant-mismatch",
            "A call for another tenant was refused",
        )
        .field("packId", invoker.index.pack_id.as_str())
        .field("artifactVersion", invoker.index.artifact_version.as_str())
        .field("via", via),
    );
}

/// The answer of `refusal`: its status and the contract's body.
fn refused(refusal: &Refusal) -> HttpResponse {
    match refusal {
        Refusal::NoRoute(path) => pack_http::no_route(path),
        Refusal::WrongMethod(want) => pack_http::use_method(want),
        Refusal::BadToken => pack_http::bad_token(),
        Refusal::OtherTenant { .. } => pack_http::json(
            StatusCode::MISDIRECTED_REQUEST,
            r#"{"code":"pack-tenant-mismatch"}"#,
        ),
        Refusal::Draining => pack_http::unavailable(&serde_json::json!({"error": "draining"})),
        Refusal::MissingEnv(names) => pack_http::unavailable(&serde_json::json!({
            "error": "missing env",
            "missingEnv": names,
        })),
        Refusal::Overloaded => pack_http::unavailable(&serde_json::json!({"error": "overloaded"})),
        Refusal::NotJson => pack_http::not_json(),
        Refusal::TooLarge => pack_http::too_large(),
        Refusal::TooCostly { limit } => pack_http::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "Request body too large to parse: its JSON would take more than {} MiB, the most one call may",
                limit / (1024 * 1024)
            ),
        ),
        Refusal::Unreadable => pack_http::unreadable(),
    }
}

/// `kindgi-duration-ms`, made once.
static DURATION_MS_HEADER: HeaderName = HeaderName::from_static(DURATION_MS);
/// `kindgi-artifact-version`, made once.
static ARTIFACT_VERSION_HEADER: HeaderName = HeaderName::from_static(ARTIFACT_VERSION);

/// The HTTP answer of a call's `message`, the call having taken `took`, of
/// a pack whose `kindgi-artifact-version` is `artifact_version` (`None`
/// when the version can't be a header value).
fn message_answer(
    artifact_version: Option<&HeaderValue>,
    took: Duration,
    message: &Response,
) -> HttpResponse {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(pack_http::JSON_CONTENT_TYPE),
    );
    // Digits copied into the value at their length: `From<u64>` writes
    // them into a growable buffer, two allocations.
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
        let message = Response::result(json!({"message": "hi"}));
        let response = message_answer(Some(&version), Duration::from_millis(12), &message);
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
        let response = message_answer(None, Duration::ZERO, &error.into());
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
        for (refusal, status, text) in [
            (
                Refusal::NoRoute("/x".to_owned()),
                StatusCode::NOT_FOUND,
                r#"{"error":"No route /x"}"#,
            ),
            (
                Refusal::WrongMethod(http::Method::POST),
                StatusCode::METHOD_NOT_ALLOWED,
                r#"{"error":"Use POST"}"#,
            ),
            (
                Refusal::BadToken,
                StatusCode::UNAUTHORIZED,
                r#"{"error":"Bad pack token"}"#,
            ),
            (
                Refusal::OtherTenant { via: "context" },
                StatusCode::MISDIRECTED_REQUEST,
                r#"{"code":"pack-tenant-mismatch"}"#,
            ),
            (
                Refusal::Draining,
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"draining"}"#,
            ),
            (
                Refusal::MissingEnv(vec!["API_KEY".to_owned()]),
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"missing env","missingEnv":["API_KEY"]}"#,
            ),
            (
                Refusal::Overloaded,
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"overloaded"}"#,
            ),
            (
                Refusal::NotJson,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                r#"{"error":"Content-Type must be application/json"}"#,
            ),
            (
                Refusal::TooLarge,
                StatusCode::PAYLOAD_TOO_LARGE,
                r#"{"error":"Request body too large"}"#,
            ),
            (
                Refusal::TooCostly {
                    limit: 48 * 1024 * 1024,
                },
                StatusCode::PAYLOAD_TOO_LARGE,
                r#"{"error":"Request body too large to parse: its JSON would take more than 48 MiB, the most one call may"}"#,
            ),
            (
                Refusal::Unreadable,
                StatusCode::BAD_REQUEST,
                r#"{"error":"The request body could not be read"}"#,
            ),
        ] {
            let response = refused(&refusal);
            assert_eq!(response.status(), status, "{refusal:?}");
            let retry = response.headers().get(http::header::RETRY_AFTER);
            assert_eq!(
                retry.map(HeaderValue::as_bytes),
                (status == StatusCode::SERVICE_UNAVAILABLE).then_some(&b"1"[..]),
                "{refusal:?}"
            );
            assert_eq!(body(response).await, Bytes::from(text), "{refusal:?}");
        }
    }
}
