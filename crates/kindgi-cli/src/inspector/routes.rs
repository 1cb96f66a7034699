//! The inspector's routes: the page and its files without the token, and
//! every `/inspector/api/…` route with it; [`super::guard`] first.
//!
//! | route | what |
//! |---|---|
//! | `GET /inspector/` | the page |
//! | `GET /inspector/api/pack` | the index, generation, last failure, context defaults |
//! | `POST /inspector/api/key` | a call's idempotency key |
//! | `POST /inspector/api/call` | calls a tool |
//! | `POST /inspector/api/cancel` | cancels a call in flight, by its ticket |
//! | `POST /inspector/api/check` | runs a check |
//! | `POST /inspector/api/calls/{callId}/answer` | answers a paused call |
//! | `GET /inspector/api/files/{artifactId}?runId=&tenantId=` | a stored file's bytes |
//! | `GET /inspector/api/logs` | the service's log records (server-sent events) |
//! | `GET /inspector/api/history` | past calls |

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use kindgi::pack_http::{self, BODY_TIMEOUT};
use serde_json::{Value, json};

use super::Inspector;
use super::assets::asset;
use super::guard::Refusal;

/// A body the inspector answers with.
pub(crate) type InspectorBody = BoxBody<Bytes, hyper::Error>;

fn full(bytes: impl Into<Bytes>) -> InspectorBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// `value` as JSON with `status`.
pub(super) fn json_answer(status: StatusCode, value: &Value) -> Response<InspectorBody> {
    let mut response = Response::new(full(value.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `{"error": message}` with `status`.
pub(super) fn error(status: StatusCode, message: &str) -> Response<InspectorBody> {
    json_answer(status, &json!({ "error": message }))
}

fn refused(refusal: &Refusal, port: u16) -> Response<InspectorBody> {
    let status = match refusal {
        Refusal::Token => StatusCode::UNAUTHORIZED,
        Refusal::Host(_) | Refusal::Origin(_) => StatusCode::FORBIDDEN,
    };
    error(status, &refusal.message(port))
}

/// The page's Content Security Policy: everything from the inspector
/// itself, nothing framing it. Scripts may `eval`: the form library's
/// validator (Ajv) compiles each schema to a function. Styles may be
/// inline (the form library sets some); images and the PDF preview's
/// worker may come from `blob:` URLs of files the page fetched itself.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-eval'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; \
    connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// Sets the headers every inspector answer carries: its policy, no
/// framing, no sniffing of its types, no referrer.
fn secure(headers: &mut http::HeaderMap) {
    let set = [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
    ];
    for (name, value) in set {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

impl Inspector {
    /// Answers one request under `/inspector`, with the headers every
    /// answer carries.
    pub(crate) async fn answer(&self, request: Request<Incoming>) -> Response<InspectorBody> {
        let mut response = self.route(request).await;
        secure(response.headers_mut());
        response
    }

    async fn route(&self, request: Request<Incoming>) -> Response<InspectorBody> {
        let port = self.guard.port();
        if let Err(refusal) = self.guard.check_site(request.uri(), request.headers()) {
            return refused(&refusal, port);
        }
        let path = request.uri().path().to_owned();
        let method = request.method().clone();
        if path == "/inspector" {
            let mut response = Response::new(full(Bytes::new()));
            *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
            response
                .headers_mut()
                .insert(LOCATION, HeaderValue::from_static("/inspector/"));
            return response;
        }
        let Some(rest) = path.strip_prefix("/inspector/") else {
            return error(StatusCode::NOT_FOUND, &format!("No route {path}"));
        };
        let Some(api) = rest.strip_prefix("api/") else {
            // HEAD as GET: hyper leaves the body out (`curl -I`).
            let reads = method == Method::GET || method == Method::HEAD;
            return match (reads, asset(rest)) {
                (false, _) => error(StatusCode::METHOD_NOT_ALLOWED, "Use GET"),
                (true, Some((kind, bytes))) => {
                    let mut response = Response::new(full(Bytes::from_static(bytes)));
                    let headers = response.headers_mut();
                    headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
                    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                    response
                }
                (true, None) => error(StatusCode::NOT_FOUND, &format!("No route {path}")),
            };
        };
        if let Err(refusal) = self.guard.check_token(request.headers()) {
            return refused(&refusal, port);
        }
        let segments: Vec<&str> = api.split('/').collect();
        let query = request.uri().query().unwrap_or_default().to_owned();
        match (method.as_str(), segments.as_slice()) {
            ("GET", ["pack"]) => json_answer(StatusCode::OK, &self.pack()),
            ("GET", ["logs"]) => {
                let mut response = Response::new(self.logs.events().boxed());
                let headers = response.headers_mut();
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            ("GET", ["history"]) => json_answer(StatusCode::OK, &self.history.list().await),
            ("GET", ["files", artifact_id]) => {
                let artifact_id = (*artifact_id).to_owned();
                self.file(&artifact_id, &query).await
            }
            ("POST", ["key" | "call" | "check" | "cancel"] | ["calls", _, "answer"]) => {
                let body = match read_json(request).await {
                    Ok(body) => body,
                    Err(response) => return response,
                };
                match segments.as_slice() {
                    ["key"] => self.key(&body),
                    ["call"] => self.call(body).await,
                    ["cancel"] => self.cancel(&body),
                    ["check"] => self.check(&body).await,
                    [_, call_id, _] => self.answer_pause(call_id, &body).await,
                    _ => error(StatusCode::NOT_FOUND, &format!("No route {path}")),
                }
            }
            (_, ["pack" | "logs" | "history"] | ["files", _]) => {
                error(StatusCode::METHOD_NOT_ALLOWED, "Use GET")
            }
            (_, ["key" | "call" | "check" | "cancel"] | ["calls", _, "answer"]) => {
                error(StatusCode::METHOD_NOT_ALLOWED, "Use POST")
            }
            _ => error(StatusCode::NOT_FOUND, &format!("No route {path}")),
        }
    }
}

/// The request's body as JSON; a refusal when it isn't JSON.
async fn read_json(request: Request<Incoming>) -> Result<Value, Response<InspectorBody>> {
    if !pack_http::is_json(request.headers()) {
        return Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    let declared = pack_http::declared_length(request.headers())
        .map_err(|_| error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large"))?;
    let mut body = request.into_body();
    let reading = pack_http::read_body(&mut body, declared, |_| true);
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, reading).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(pack_http::BodyError::TooLarge)) => {
            return Err(error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Request body too large",
            ));
        }
        Ok(Err(_)) | Err(_) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                "The request body could not be read",
            ));
        }
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            &format!("The body is not JSON: {e}"),
        )
    })
}

/// Bytes as a body.
pub(super) fn bytes_body(bytes: Bytes) -> InspectorBody {
    full(bytes)
}
