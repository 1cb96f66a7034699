//! The routes (CONTRACT §3): health, readiness, info, and the invoke —
//! admitted ([`super::admission`]), decoded ([`super::decode`]), run as a
//! tool or a check call, answered ([`super::answer`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::EXPECT;
use http::request::Parts;
use http::{HeaderValue, Method, Request, StatusCode};
use http_body::Body as _;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use kindgi_protocol::{ErrorCode, ErrorResponse, headers};

use super::admission::admit;
use super::answer::{Answer, HttpResponse, Refused, call_answer};
use super::call::CallMeta;
use super::call_headers::CallHeaders;
use super::check::run_check;
use super::decode::{Decoded, decode};
use super::half_close::AnswerAwaited;
use super::pack_http::{self, header_text};
use super::state::{Invoker, ServiceState};
use super::tool::run_tool;
use super::traceparent::{caller_span, trace_ids};
use crate::log::{Level, Record, TransportIds};

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
    let mut response = guarded(handle(
        Arc::clone(&state),
        &parts,
        &mut body,
        awaited.as_ref(),
    ))
    .await;
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

/// Answers one request: the route (404), its method (405), then the
/// route's own checks. `body` is left as it is unless the body was read
/// to its end.
async fn handle(
    state: Arc<ServiceState>,
    request: &Parts,
    body: &mut Option<Incoming>,
    awaited: Option<&AnswerAwaited>,
) -> HttpResponse {
    let method = &request.method;
    match request.uri.path() {
        "/healthz" => {
            pack_http::wrong_method(method, &Method::GET).unwrap_or_else(pack_http::healthy)
        }
        "/readyz" => pack_http::wrong_method(method, &Method::GET).unwrap_or_else(|| {
            state
                .admission
                .not_serving(&state.drain)
                .unwrap_or_else(|| pack_http::json(StatusCode::OK, r#"{"status":"ready"}"#))
        }),
        "/v1/info" => pack_http::wrong_method(method, &Method::GET)
            .or_else(|| {
                let refused = state.admission.refuse(&CallHeaders::of(&request.headers));
                if refused
                    .as_ref()
                    .is_some_and(|r| r.status() == StatusCode::MISDIRECTED_REQUEST)
                {
                    log_tenant_mismatch(&state.invoker, "header");
                }
                refused
            })
            .unwrap_or_else(|| pack_http::json(StatusCode::OK, state.info_body.clone())),
        "/v1/invoke" => match pack_http::wrong_method(method, &Method::POST) {
            Some(refused) => refused,
            None => invoke(state, request, body, awaited).await,
        },
        path => pack_http::no_route(path),
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

/// An invoke: admitted, decoded, run, answered.
async fn invoke(
    state: Arc<ServiceState>,
    request: &Parts,
    request_body: &mut Option<Incoming>,
    awaited: Option<&AnswerAwaited>,
) -> HttpResponse {
    // The call's time (its deadline, its duration) counts from its
    // request's head: reading the body is part of the call.
    let started = Instant::now();
    let headers = CallHeaders::of(&request.headers);
    let mut admitted = match admit(&state.admission, &state.drain, &headers, request_body).await {
        Ok(admitted) => admitted,
        Err(refused) => {
            if let Some(Refused(reason)) = refused.extensions().get::<Refused>() {
                state.invoker.telemetry.refused(reason);
            }
            if refused.status() == StatusCode::MISDIRECTED_REQUEST {
                log_tenant_mismatch(&state.invoker, "header");
            }
            return refused;
        }
    };
    // Its request read, the call's answer is awaited from here on.
    let _awaiting = awaited.map(AnswerAwaited::begin);
    let meta = CallMeta::new(
        admitted.placement,
        started,
        headers::parse_timeout_ms(header_text(headers.timeout_ms)),
        {
            let trace = header_text(headers.traceparent).and_then(trace_ids);
            let caller = trace
                .as_ref()
                .and(header_text(headers.traceparent))
                .and_then(caller_span);
            let call_span = state
                .invoker
                .telemetry
                .is_on()
                .then(|| crate::telemetry::call_span(trace.as_ref(), caller));
            TransportIds {
                trace,
                caller,
                call_span,
                request_id: header_text(headers.request_id).map(str::to_owned),
            }
        },
    );
    // The body is freed once decoded: what the call goes on with is its own.
    let body = std::mem::take(&mut admitted.body);
    let decoded = match admitted.malformed.take() {
        Some(malformed) => Err(malformed),
        None => meta.placement.run(|| decode(&state.invoker, &body)),
    };
    drop(body);
    let invoker = &state.invoker;
    let outcome = match decoded {
        Err(malformed) => Answer::Message(malformed.into()),
        Ok(Decoded::Tool(call)) if !state.admission.tenant_matches(&call.ctx.tenant_id) => {
            log_tenant_mismatch(invoker, "context");
            Answer::TenantMismatch
        }
        Ok(Decoded::Tool(call)) => run_tool(invoker, call, &meta).await,
        Ok(Decoded::Check(call)) => run_check(invoker, call, &meta).await,
        Ok(Decoded::Other) => Answer::Message(
            ErrorResponse::new(ErrorCode::UnexpectedMessageKind, "Unknown request kind").into(),
        ),
    };
    // The duration its `call` record gave, if it has one.
    let version = state.artifact_version.as_ref();
    let response = call_answer(version, meta.duration(), outcome);
    // The call slot, its memory and its place in flight are given back
    // only now, its answer made.
    drop(admitted);
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
