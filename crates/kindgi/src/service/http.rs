//! The HTTP surface (CONTRACT §3): the routes, and what an invoke goes
//! through once admitted — parse, run, answer with its headers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::EXPECT;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body::Body as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use kindgi_protocol::{ErrorCode, ErrorResponse, Response, headers};

use super::admission::{admit, not_serving};
use super::call_headers::CallHeaders;
use super::check::run_check;
use super::invoke::{Answer, CallMeta, deadline_after, off_worker_on, run_tool};
use super::pack_http::{self, header_text};
use super::read::{Read, read};
use super::state::ServiceState;
use super::traceparent::trace_ids;
use crate::log::TransportIds;

/// An HTTP answer.
pub(crate) type HttpResponse = hyper::Response<Full<Bytes>>;

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

// The duration header's name, made once: inserting a header by a `&str`
// parses the name every time.
const DURATION_MS: HeaderName = HeaderName::from_static(headers::DURATION_MS);

/// 503 `overloaded`: every call slot is taken, or the memory budget is.
pub(super) fn overloaded() -> HttpResponse {
    pack_http::unavailable(&serde_json::json!({"error": "overloaded"}))
}

/// 503 `draining`: the service is stopping.
pub(super) fn draining() -> HttpResponse {
    pack_http::unavailable(&serde_json::json!({"error": "draining"}))
}

/// 421 `pack-tenant-mismatch`: the call is for another tenant than the one
/// this service is pinned to.
pub(super) fn tenant_mismatch() -> HttpResponse {
    pack_http::json(
        StatusCode::MISDIRECTED_REQUEST,
        r#"{"code":"pack-tenant-mismatch"}"#,
    )
}

/// Answers one request; a panic in the service's own code is answered
/// 500 (and logged by the panic hook) instead of dropping the connection.
/// With the answer, when the call it answers ended, if the clock was read
/// for that (a call's end: see [`CallMeta::ended`]).
pub(crate) async fn answer_guarded(
    state: Arc<ServiceState>,
    request: Request<Incoming>,
) -> (HttpResponse, Option<Instant>) {
    let (parts, body) = request.into_parts();
    // Taken by the handler once it has read the body to its end.
    let mut body = Some(body);
    let mut ended = None;
    let mut response = guarded(handle(Arc::clone(&state), &parts, &mut body, &mut ended)).await;
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
    (response, ended)
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
/// to its end; `ended` is set to when the call an invoke ran ended.
async fn handle(
    state: Arc<ServiceState>,
    request: &Parts,
    body: &mut Option<Incoming>,
    ended: &mut Option<Instant>,
) -> HttpResponse {
    let method = &request.method;
    match request.uri.path() {
        "/healthz" => {
            pack_http::wrong_method(method, &Method::GET).unwrap_or_else(pack_http::healthy)
        }
        "/readyz" => pack_http::wrong_method(method, &Method::GET).unwrap_or_else(|| {
            not_serving(&state)
                .unwrap_or_else(|| pack_http::json(StatusCode::OK, r#"{"status":"ready"}"#))
        }),
        "/v1/info" => pack_http::wrong_method(method, &Method::GET)
            .or_else(|| state.admission.refuse(&CallHeaders::of(&request.headers)))
            .unwrap_or_else(|| pack_http::json(StatusCode::OK, state.info_body.clone())),
        "/v1/invoke" => match pack_http::wrong_method(method, &Method::POST) {
            Some(refused) => refused,
            // On the heap: the call's future is a few KiB, which every
            // future around it (and hyper's slot for it) would otherwise
            // hold and copy as it is made and moved.
            None => Box::pin(invoke(state, &request.headers, body, ended)).await,
        },
        path => pack_http::no_route(path),
    }
}

/// An invoke: admitted ([`super::admission`]), parsed, run, answered;
/// `ended` set to when its call ended, once it ran.
async fn invoke(
    state: Arc<ServiceState>,
    headers: &HeaderMap,
    request_body: &mut Option<Incoming>,
    ended: &mut Option<Instant>,
) -> HttpResponse {
    let headers = CallHeaders::of(headers);
    let admitted = match admit(&state, &headers, request_body).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let started = Instant::now();
    let (reader, input) = (Arc::clone(&state), admitted.input.clone());
    let read = off_worker_on(admitted.large, &admitted.body, move |body| {
        read(&reader.invoker, body, input)
    });
    let message = match read.await {
        Ok(message) => message,
        Err(e) => return answer(&state, started.elapsed(), Answer::Message(e.into())),
    };
    let meta = CallMeta {
        large: admitted.large,
        started,
        deadline: deadline_after(
            started,
            headers::parse_timeout_ms(header_text(headers.timeout_ms)),
        ),
        transport: TransportIds {
            trace: header_text(headers.traceparent).and_then(trace_ids),
            request_id: header_text(headers.request_id).map(str::to_owned),
        },
        blocking_slot: Default::default(),
        ended: Default::default(),
    };
    let invoker = &state.invoker;
    let outcome = match message {
        Read::Tool(call) if !state.admission.tenant_matches(&call.ctx.tenant_id) => {
            Answer::TenantMismatch
        }
        Read::Tool(call) => run_tool(invoker, call, &meta).await,
        Read::Check(call) => run_check(invoker, call, &meta).await,
        Read::Other => Answer::Message(
            ErrorResponse::new(ErrorCode::UnexpectedMessageKind, "Unknown request kind").into(),
        ),
    };
    // The duration its `call` record gave, if it has one.
    let response = answer(&state, meta.duration(), outcome);
    *ended = Some(meta.ended());
    // The call slot, its memory and its place in flight are given back
    // only now, its answer made.
    drop(admitted);
    response
}

/// The HTTP answer of a call that took `took`.
fn answer(state: &ServiceState, took: Duration, outcome: Answer) -> HttpResponse {
    match outcome {
        Answer::TenantMismatch => tenant_mismatch(),
        Answer::Overloaded => overloaded(),
        Answer::Message(message) => {
            // A boxed slice, not the `Vec`: `Bytes` would allocate again
            // to keep a `Vec`'s capacity.
            let body = Bytes::from(message_body(&message).into_boxed_slice());
            let mut response = hyper::Response::new(Full::new(body));
            let duration = duration_value(took.as_millis() as u64);
            set_answer_headers(response.headers_mut(), &state.answer_headers, duration);
            response
        }
    }
}

/// Sets `headers` to `template` (an answer's, made once: see
/// [`ServiceState::answer_headers`]) with `duration` as its
/// `kindgi-duration-ms`, set where the clone holds it: inserting it would
/// hash its name again.
fn set_answer_headers(headers: &mut HeaderMap, template: &HeaderMap, duration: HeaderValue) {
    headers.clone_from(template);
    match headers.iter_mut().find(|(name, _)| **name == DURATION_MS) {
        Some((_, slot)) => *slot = duration,
        None => {
            headers.insert(DURATION_MS, duration);
        }
    }
}

/// `message` as its answer's body. A result, the answer of most calls, is
/// written around its output: serde's internally tagged enum would go
/// through a map of its fields first. The bytes are the same.
fn message_body(message: &Response) -> Vec<u8> {
    const RESULT_HEAD: &[u8] = br#"{"kind":"result","v":2,"output":"#;
    if let Response::Result(result) = message {
        let mut body = Vec::with_capacity(RESULT_HEAD.len() + 64);
        body.extend_from_slice(RESULT_HEAD);
        if serde_json::to_writer(&mut body, &result.output).is_ok() {
            body.push(b'}');
            return body;
        }
    }
    serde_json::to_vec(message).unwrap_or_default()
}

/// `kindgi-duration-ms`'s value: for a call of under 10 ms, as most are,
/// one made once rather than formatted into a new allocation.
fn duration_value(ms: u64) -> HeaderValue {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    match usize::try_from(ms).ok().and_then(|index| DIGITS.get(index)) {
        Some(digit) => HeaderValue::from_static(digit),
        None => HeaderValue::from(ms),
    }
}

#[cfg(test)]
mod tests {
    use http::header::CONTENT_TYPE;
    use http_body_util::BodyExt as _;
    use kindgi_protocol::ToolPause;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_message_body_is_what_serde_writes() {
        let outputs = [
            json!({"message": "hi"}),
            json!({"b": [1, 2.5, null, true], "a": {"é": "\"\n\u{2028}"}}),
            json!(null),
            json!("text"),
            json!(-0.0),
            json!(u64::MAX),
        ];
        let others = [
            Response::Pause(ToolPause::default()),
            Response::Error(ErrorResponse::new(ErrorCode::HandlerThrow, "boom").for_tool("a.b")),
        ];
        for message in outputs.into_iter().map(Response::result).chain(others) {
            let expected = serde_json::to_vec(&message).expect("JSON");
            assert_eq!(
                String::from_utf8(message_body(&message)).expect("UTF-8"),
                String::from_utf8(expected).expect("UTF-8"),
            );
        }
    }

    async fn body(response: HttpResponse) -> Bytes {
        match response.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        }
    }

    #[test]
    fn an_answer_has_the_template_s_headers_and_its_duration_once() {
        let pairs = |map: &HeaderMap| {
            map.iter()
                .map(|(name, value)| (name.as_str().to_owned(), value.clone()))
                .collect::<Vec<_>>()
        };
        let json = HeaderValue::from_static("application/json");
        let mut template = HeaderMap::new();
        template.insert(CONTENT_TYPE, json.clone());
        template.insert(DURATION_MS, HeaderValue::from_static("0"));
        template.insert("kindgi-artifact-version", HeaderValue::from_static("1.2"));
        let mut headers = HeaderMap::new();
        set_answer_headers(&mut headers, &template, HeaderValue::from_static("12"));
        assert_eq!(
            pairs(&headers),
            [
                ("content-type".to_owned(), json.clone()),
                (
                    "kindgi-duration-ms".to_owned(),
                    HeaderValue::from_static("12")
                ),
                (
                    "kindgi-artifact-version".to_owned(),
                    HeaderValue::from_static("1.2")
                ),
            ]
        );
        // A template without the duration's slot gets it all the same.
        template.remove(DURATION_MS);
        set_answer_headers(&mut headers, &template, HeaderValue::from_static("3"));
        assert_eq!(
            headers.get_all(DURATION_MS).iter().collect::<Vec<_>>(),
            ["3"]
        );
        assert_eq!(headers.len(), 3);
    }

    #[test]
    fn durations_are_written_in_decimal() {
        for (ms, text) in [(0, "0"), (7, "7"), (9, "9"), (10, "10"), (12_345, "12345")] {
            assert_eq!(duration_value(ms), text);
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
        let response =
            guarded(async { pack_http::json(StatusCode::OK, r#"{"status":"ok"}"#) }).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            body(response).await,
            Bytes::from_static(br#"{"status":"ok"}"#)
        );
    }
}
