//! The routes (CONTRACT §3): health, readiness, info, and the invoke —
//! admitted and decoded ([`super::admission`]), run as a tool or a check
//! call — each request answered once, from the [`Reply`] it came to
//! ([`super::answer`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::EXPECT;
use http::request::Parts;
use http::{HeaderValue, Method, Request, StatusCode};
use http_body::Body as _;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use kindgi_protocol::{ErrorCode, ErrorResponse, headers};

use super::admission::Admitted;
use super::answer::{HttpResponse, Reply, respond};
use super::call::CallMeta;
use super::call_headers::CallHeaders;
use super::check::run_check;
use super::decode::Decoded;
use super::half_close::AnswerAwaited;
use super::pack_http::{self, header_text};
use super::refusal::Refusal;
use super::state::ServiceState;
use super::tool::run_tool;
use super::traceparent::transport_ids;

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

/// Answers one request; a panic in the service's own code is answered
/// 500 (and logged by the panic hook) instead of dropping the connection.
/// `awaited` is the connection's flag for an HTTP/1.1 call: set while the
/// call's answer is awaited, so that a caller that half-closes then is
/// answered ([`super::half_close`]).
pub(crate) async fn answer_guarded(
    state: Arc<ServiceState>,
    request: Request<Incoming>,
    awaited: Option<AnswerAwaited>,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    // Taken by the handler once it has read the body to its end.
    let mut body = Some(body);
    let mut response = guarded(handle(&state, &parts, &mut body, awaited.as_ref())).await;
    // Answered before its body was read: read the rest and throw it away
    // for a while, then close (a client that asked `100-continue` has sent
    // no body, and is not asked to).
    if let Some(body) = body
        && !body.is_end_stream()
        && !parts.headers.contains_key(EXPECT)
    {
        response
            .headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        tokio::spawn(discard(body));
    }
    // While draining, every answer closes its connection, so that a client
    // never sends its next request on a connection about to be closed.
    if state.drain.is_draining() {
        response
            .headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
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

/// `answer`, or 500 `The pack service failed` if it panics. (A pack
/// handler's panic never gets here: it is its call's `handler-throw`.) Apart
/// from [`answer_guarded`] so that a test can make it panic: nothing found
/// panics the service from outside.
///
/// A plain function rather than an `async fn`: an `async fn` keeps its
/// argument, here the whole answer's future, besides the future it awaits.
fn guarded(answer: impl Future<Output = HttpResponse>) -> impl Future<Output = HttpResponse> {
    use futures::FutureExt as _;
    std::panic::AssertUnwindSafe(answer)
        .catch_unwind()
        .map(|answered| {
            answered.unwrap_or_else(|_| {
                pack_http::error(StatusCode::INTERNAL_SERVER_ERROR, "The pack service failed")
            })
        })
}

/// The service's routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `GET /healthz`.
    Health,
    /// `GET /readyz`.
    Ready,
    /// `GET /v1/info`.
    Info,
    /// `POST /v1/invoke`.
    Invoke,
}

/// The route of `path` asked with `method`.
///
/// # Errors
///
/// 404 for a path that is no route, 405 for another method than the
/// route's.
fn route(method: &Method, path: &str) -> Result<Route, Refusal> {
    let (route, want) = match path {
        "/healthz" => (Route::Health, Method::GET),
        "/readyz" => (Route::Ready, Method::GET),
        "/v1/info" => (Route::Info, Method::GET),
        "/v1/invoke" => (Route::Invoke, Method::POST),
        path => return Err(Refusal::NoRoute(path.to_owned())),
    };
    if *method != want {
        return Err(Refusal::WrongMethod(want));
    }
    Ok(route)
}

/// Answers one request: its route, then what admission says of it, then,
/// for an admitted call, the call run — and its answer made once, from
/// what came of it. `body` is left as it is unless the body was read to
/// its end.
async fn handle(
    state: &ServiceState,
    request: &Parts,
    body: &mut Option<Incoming>,
    awaited: Option<&AnswerAwaited>,
) -> HttpResponse {
    // A call's time (its deadline, its duration) counts from its request's
    // head: reading the body is part of the call.
    let started = Instant::now();
    let headers = CallHeaders::of(&request.headers);
    // What an admitted call holds (its slot, memory and place in flight),
    // given back only once its answer is made.
    let mut hold = None;
    let reply = match route(&request.method, request.uri.path()) {
        Err(refusal) => Reply::Refused(refusal),
        Ok(Route::Health) => Reply::Healthy,
        Ok(Route::Ready) => state
            .admission
            .not_serving(&state.drain)
            .map_or(Reply::Ready, Reply::NotReady),
        Ok(Route::Info) => state
            .admission
            .refuse(&headers)
            .map_or(Reply::Info, Reply::Refused),
        Ok(Route::Invoke) => match state
            .admission
            .admit(&state.drain, &state.invoker, &headers, body)
            .await
        {
            Err(refusal) => Reply::Refused(refusal),
            Ok(admitted) => {
                let Admitted {
                    call,
                    placement,
                    hold: held,
                } = admitted;
                hold = Some(held);
                // Its request read, the call's answer is awaited from here
                // on.
                let _awaiting = awaited.map(AnswerAwaited::begin);
                let transport = transport_ids(
                    header_text(headers.traceparent),
                    header_text(headers.request_id),
                    state.invoker.telemetry.is_on(),
                );
                let timeout = headers::parse_timeout_ms(header_text(headers.timeout_ms));
                let meta = CallMeta::new(placement, started, timeout, transport);
                let invoker = &state.invoker;
                let ran = match call {
                    Ok(Decoded::Tool(call)) => run_tool(invoker, call, &meta).await,
                    Ok(Decoded::Check(call)) => Ok(run_check(invoker, call, &meta)),
                    Ok(Decoded::Other) => Ok(ErrorResponse::new(
                        ErrorCode::UnexpectedMessageKind,
                        "Unknown request kind",
                    )
                    .into()),
                    Err(malformed) => Ok(malformed.into()),
                };
                // Its duration is the one its `call` record gave, if it has
                // one.
                ran.map_or_else(Reply::Refused, |message| {
                    Reply::Called(message, meta.duration())
                })
            }
        },
    };
    let response = respond(state, reply);
    drop(hold);
    response
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::header::CONTENT_TYPE;

    use super::*;

    use crate::service::answer::body_bytes as body;

    #[tokio::test]
    async fn a_panic_in_the_service_is_a_500() {
        let response = guarded(async { panic!("service bug") }).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers().get(CONTENT_TYPE),
            Some(&http::HeaderValue::from_static(
                "application/json; charset=utf-8"
            ))
        );
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"error":"The pack service failed"}"#)
        );
    }

    #[test]
    fn a_route_is_its_path_and_method() {
        assert_eq!(route(&Method::GET, "/healthz"), Ok(Route::Health));
        assert_eq!(route(&Method::GET, "/readyz"), Ok(Route::Ready));
        assert_eq!(route(&Method::GET, "/v1/info"), Ok(Route::Info));
        assert_eq!(route(&Method::POST, "/v1/invoke"), Ok(Route::Invoke));
        assert_eq!(
            route(&Method::GET, "/v1/invoke"),
            Err(Refusal::WrongMethod(Method::POST))
        );
        assert_eq!(
            route(&Method::POST, "/readyz"),
            Err(Refusal::WrongMethod(Method::GET))
        );
        assert_eq!(
            route(&Method::GET, "/v1/invoke/"),
            Err(Refusal::NoRoute("/v1/invoke/".to_owned()))
        );
    }

    #[tokio::test]
    async fn an_answer_goes_through_unchanged() {
        let response =
            guarded(async { pack_http::json(StatusCode::OK, r#"{"status":"ok"}"#) }).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"status":"ok"}"#)
        );
    }
}
