//! The HTTP surface (CONTRACT §3): routes, the order of their checks, and
//! the exact bodies.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{AsHeaderName, CONTENT_LENGTH, CONTENT_TYPE, EXPECT, RETRY_AFTER};
use http::request::Parts;
use http::{HeaderMap, HeaderName, Method, Request, StatusCode};
use http_body::Body as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use kindgi_protocol::{ErrorCode, ErrorResponse, Request as Message, headers, parse_request};
use subtle::ConstantTimeEq;

use super::budget::Reservation;
use super::invoke::{
    Answer, CallMeta, LARGE_BODY_BYTES, deadline_after, off_worker, run_check, run_tool,
};
use super::state::ServiceState;
use super::traceparent::trace_ids;

/// An HTTP answer.
pub(crate) type HttpResponse = hyper::Response<Full<Bytes>>;

/// How long a client may take to send a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// After an answer sent before its request's body was read (a 413 from
/// `Content-Length`, a 401, 415 or 503), the service goes on reading that
/// body and throwing it away, at most this many bytes and for at most
/// [`DISCARD_TIME`], before it closes the connection: closing a socket with
/// unread bytes makes the kernel reset it, and a client still sending
/// (Node's `fetch`) then gets the reset, not the answer. Nothing read is
/// kept.
const DISCARD_BYTES: u64 = 32 * 1024 * 1024;
/// See [`DISCARD_BYTES`].
const DISCARD_TIME: Duration = Duration::from_secs(5);

// The protocol's headers as header names, made once: looking a header up
// by a `&str` parses the name on every lookup.
const PACK_TOKEN: HeaderName = HeaderName::from_static(headers::PACK_TOKEN);
const TENANT_ID: HeaderName = HeaderName::from_static(headers::TENANT_ID);
const TIMEOUT_MS: HeaderName = HeaderName::from_static(headers::TIMEOUT_MS);
const TRACEPARENT: HeaderName = HeaderName::from_static(headers::TRACEPARENT);
const REQUEST_ID: HeaderName = HeaderName::from_static(headers::REQUEST_ID);
const DURATION_MS: HeaderName = HeaderName::from_static(headers::DURATION_MS);
const ARTIFACT_VERSION: HeaderName = HeaderName::from_static(headers::ARTIFACT_VERSION);

fn json(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    let mut response = hyper::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(status: StatusCode, message: &str) -> HttpResponse {
    json(status, serde_json::json!({ "error": message }).to_string())
}

fn unavailable(body: serde_json::Value) -> HttpResponse {
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, body.to_string());
    response
        .headers_mut()
        .insert(RETRY_AFTER, http::HeaderValue::from_static("1"));
    response
}

/// 503 `overloaded`: every call slot is taken.
fn overloaded() -> HttpResponse {
    unavailable(serde_json::json!({"error": "overloaded"}))
}

/// 503 `draining`: the service is stopping.
fn draining() -> HttpResponse {
    unavailable(serde_json::json!({"error": "draining"}))
}

fn header(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The first reason the service can't take a call, as its 503 answer.
fn not_serving(state: &ServiceState) -> Option<HttpResponse> {
    if state.is_draining() {
        return Some(draining());
    }
    if state.blocked_by_env() {
        return Some(unavailable(
            serde_json::json!({"error": "missing env", "missingEnv": state.missing_env}),
        ));
    }
    None
}

fn token_ok(state: &ServiceState, headers: &HeaderMap) -> bool {
    let sent = headers
        .get(PACK_TOKEN)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    bool::from(sent.ct_eq(state.token.as_bytes()))
}

fn tenant_ok(state: &ServiceState, headers: &HeaderMap) -> bool {
    match &state.tenant_id {
        None => true,
        Some(pinned) => header(headers, TENANT_ID).is_some_and(|t| t == pinned),
    }
}

fn tenant_mismatch() -> HttpResponse {
    json(
        StatusCode::MISDIRECTED_REQUEST,
        r#"{"code":"pack-tenant-mismatch"}"#,
    )
}

/// Answers one request; a panic in the service's own code is answered
/// 500 (and logged by the panic hook) instead of dropping the connection.
pub(crate) async fn answer_guarded(
    state: Arc<ServiceState>,
    request: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let (parts, body) = request.into_parts();
    // Taken by the handler once it has read the body to its end.
    let mut body = Some(body);
    let mut response = guarded(handle(Arc::clone(&state), &parts, &mut body)).await;
    // Answered before its body was read: read the rest and throw it away
    // for a while, then close (a client that asked `100-continue` has sent
    // no body, and is not asked to).
    if let Some(body) = body
        && !body.is_end_stream()
        && !parts.headers.contains_key(EXPECT)
    {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        tokio::spawn(discard(body));
    }
    // While draining, every answer closes its connection, so that a client
    // never sends its next request on a connection about to be closed.
    if state.is_draining() {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    Ok(response)
}

/// Reads `body` and drops what it reads, up to [`DISCARD_BYTES`] and
/// [`DISCARD_TIME`]; then the connection closes.
async fn discard(mut body: Incoming) {
    let mut read = 0u64;
    let _ = tokio::time::timeout(DISCARD_TIME, async {
        while read < DISCARD_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => {
                    read += frame.data_ref().map_or(0, |data| data.len() as u64);
                }
                Some(Err(_)) | None => break,
            }
        }
    })
    .await;
}

/// A request body read to its end, or why it wasn't.
enum BodyError {
    /// Past [`headers::MAX_BODY_BYTES`].
    TooLarge,
    /// Holding it would pass the memory budget.
    Overloaded,
    /// The connection failed or the body was malformed.
    Unreadable,
}

/// Reads `body` into one buffer, refusing it past the limit: what it costs
/// is about its size, whatever its framing (each of a million one-byte
/// chunks would otherwise keep its own buffer until the end). The buffer's
/// capacity is reserved from the memory budget before it is taken: a
/// declared length at once, a chunked body as its buffer grows.
async fn read_body(
    body: &mut Incoming,
    declared: Option<u64>,
    reservation: &mut Reservation,
) -> Result<Bytes, BodyError> {
    let limit = headers::MAX_BODY_BYTES;
    let expected = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit).min(limit));
    if !reservation.grow(expected) {
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
                if !reservation.grow(capacity - out.capacity()) {
                    return Err(BodyError::Overloaded);
                }
                out.reserve_exact(capacity - out.len());
            }
            out.extend_from_slice(data);
        }
    }
    Ok(Bytes::from(out))
}

/// `answer`, or 500 `The pack service failed` if it panics. (A pack
/// handler's panic never gets here: it is its call's `handler-throw`.) Apart
/// from [`answer_guarded`] so that a test can make it panic: nothing found
/// panics the service from outside.
async fn guarded(answer: impl Future<Output = HttpResponse>) -> HttpResponse {
    use futures::FutureExt as _;
    std::panic::AssertUnwindSafe(answer)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "The pack service failed"))
}

/// Answers one request. `body` is left as it is unless the body was read
/// to its end.
async fn handle(
    state: Arc<ServiceState>,
    request: &Parts,
    body: &mut Option<Incoming>,
) -> HttpResponse {
    let method = request.method.clone();
    let expect = |want: Method| -> Option<HttpResponse> {
        (method != want).then(|| {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                if want == Method::GET {
                    "Use GET"
                } else {
                    "Use POST"
                },
            )
        })
    };
    match request.uri.path() {
        "/healthz" => {
            expect(Method::GET).unwrap_or_else(|| json(StatusCode::OK, r#"{"status":"ok"}"#))
        }
        "/readyz" => expect(Method::GET).unwrap_or_else(|| {
            not_serving(&state).unwrap_or_else(|| json(StatusCode::OK, r#"{"status":"ready"}"#))
        }),
        "/v1/info" => {
            if let Some(refused) = expect(Method::GET) {
                refused
            } else if !token_ok(&state, &request.headers) {
                error(StatusCode::UNAUTHORIZED, "Bad pack token")
            } else if !tenant_ok(&state, &request.headers) {
                tenant_mismatch()
            } else {
                json(StatusCode::OK, state.info_body.clone())
            }
        }
        "/v1/invoke" => match expect(Method::POST) {
            Some(refused) => refused,
            None => invoke(state, &request.headers, body).await,
        },
        path => error(StatusCode::NOT_FOUND, &format!("No route {path}")),
    }
}

async fn invoke(
    state: Arc<ServiceState>,
    headers: &HeaderMap,
    request_body: &mut Option<Incoming>,
) -> HttpResponse {
    if !token_ok(&state, headers) {
        return error(StatusCode::UNAUTHORIZED, "Bad pack token");
    }
    if !tenant_ok(&state, headers) {
        return tenant_mismatch();
    }
    if let Some(refused) = not_serving(&state) {
        return refused;
    }
    // Counted in flight, then checked again: a drain that began after the
    // first check either sees this call in flight or refuses it here, so it
    // never ends with this call running.
    let _in_flight = state.in_flight.enter();
    if state.is_draining() {
        return draining();
    }
    // No room: refused before the body, as the contract says. The permit
    // itself is taken only once the body is in (below), so that a client
    // sending its body slowly never holds a call slot while it does.
    if state.capacity.available_permits() == 0 {
        return overloaded();
    }
    if !header(headers, CONTENT_TYPE).is_some_and(|t| t.contains("application/json")) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let too_large = || error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
    let declared = header(headers, CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > headers::MAX_BODY_BYTES as u64) {
        return too_large();
    }
    let timeout_ms = headers::parse_timeout_ms(header(headers, TIMEOUT_MS));
    let trace = header(headers, TRACEPARENT).and_then(trace_ids);
    let header_request_id = header(headers, REQUEST_ID).map(str::to_owned);

    let Some(incoming) = request_body.as_mut() else {
        return error(
            StatusCode::BAD_REQUEST,
            "The request body could not be read",
        );
    };
    // The body's memory and its document's, reserved until the call ends.
    let mut reservation = state.budget.reservation();
    let collected = tokio::select! {
        collected = tokio::time::timeout(BODY_TIMEOUT, read_body(incoming, declared, &mut reservation)) => collected,
        // The drain window closed before the body came: the call never ran.
        () = state.window_closed.cancelled() => return draining(),
    };
    let body = match collected {
        Ok(Ok(body)) => body,
        Ok(Err(BodyError::TooLarge)) => return too_large(),
        Ok(Err(BodyError::Overloaded)) => return overloaded(),
        Ok(Err(BodyError::Unreadable)) | Err(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "The request body could not be read",
            );
        }
    };
    // Read to its end: nothing is left to discard.
    *request_body = None;
    // What parsing will build, at most: past the budget, the call is
    // refused before it is parsed (it has not run).
    let large = body.len() >= LARGE_BODY_BYTES;
    if !off_worker(large, || reservation.grow_for_document(&body)) {
        return overloaded();
    }
    // The room seen before the body may be gone now: then this call is
    // refused like any other past the cap (it has not run).
    let Ok(permit) = Arc::clone(&state.capacity).try_acquire_owned() else {
        return overloaded();
    };
    let started = Instant::now();
    let message = match off_worker(large, || parse_request(&body)) {
        Ok(message) => message,
        Err(e) => return answer(&state, started, Answer::Message(e.into())),
    };
    let meta = CallMeta {
        large,
        started,
        deadline: deadline_after(timeout_ms),
        trace,
        header_request_id,
        blocking_slot: Default::default(),
    };
    let outcome = match message {
        Message::Invoke(call) => run_tool(&state, call, meta).await,
        Message::CheckInvoke(call) => run_check(&state, call, &meta),
        _ => Answer::Message(
            ErrorResponse::new(ErrorCode::UnexpectedMessageKind, "Unknown request kind").into(),
        ),
    };
    let response = answer(&state, started, outcome);
    drop(permit);
    response
}

fn answer(state: &ServiceState, started: Instant, outcome: Answer) -> HttpResponse {
    match outcome {
        Answer::TenantMismatch => tenant_mismatch(),
        Answer::Overloaded => overloaded(),
        Answer::Message(message) => {
            let body = serde_json::to_vec(&message).unwrap_or_default();
            let mut response = json(StatusCode::OK, body);
            let headers = response.headers_mut();
            headers.insert(
                DURATION_MS,
                http::HeaderValue::from(started.elapsed().as_millis() as u64),
            );
            if let Some(version) = &state.artifact_version_header {
                headers.insert(ARTIFACT_VERSION, version.clone());
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;

    use super::*;

    async fn body(response: HttpResponse) -> Bytes {
        match response.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        }
    }

    #[tokio::test]
    async fn a_panic_in_the_service_is_a_500() {
        let response = guarded(async { panic!("service bug") }).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers().get(CONTENT_TYPE),
            Some(&http::HeaderValue::from_static("application/json"))
        );
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"error":"The pack service failed"}"#)
        );
    }

    #[tokio::test]
    async fn an_answer_goes_through_unchanged() {
        let response = guarded(async { json(StatusCode::OK, r#"{"status":"ok"}"#) }).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"status":"ok"}"#)
        );
    }
}
