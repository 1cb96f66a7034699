//! The stable front: one URL and one token for the whole session, answering
//! exactly like a pack service, forwarding `/v1/invoke` and `/v1/info` to
//! whichever process serves now (its own token swapped in).
//!
//! For an invoke of a tool that stores or reads files or pauses, and that
//! carries no grant of its own, the front opens the call on the embedded
//! dev runtime — a files grant, a wait link — as `kindgi call` does, and
//! records the answer (a pause starts its wait). The secrets and
//! connections the tool declares that the invoke doesn't carry are added
//! from `.kindgi/` (see [`super::local`]), as a runtime resolves them.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kindgi::Token;
use kindgi::pack_http::{self, BODY_TIMEOUT, BodyError};
use kindgi_protocol::{PackIndex, ToolEntry, headers};
use kindgi_runtime::{DevRuntime, OpenCall};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::local::CallValues;
use crate::inspector::Inspector;

/// A body the front answers with.
pub(crate) type FrontBody = BoxBody<Bytes, hyper::Error>;

/// Headers that belong to one connection, not to the request.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The process that serves now.
#[derive(Debug)]
pub(crate) struct Upstream {
    /// Its address.
    pub(crate) addr: SocketAddr,
    /// The token it checks.
    pub(crate) token: String,
    /// The index it serves.
    pub(crate) index: Arc<PackIndex>,
    /// The secrets and connections its calls get.
    pub(crate) values: Arc<CallValues>,
}

/// The front's state.
#[derive(Debug)]
pub(crate) struct Front {
    token: Token,
    upstream: RwLock<Option<Arc<Upstream>>>,
    client: Client<HttpConnector, Full<Bytes>>,
    runtime: Option<DevRuntime>,
    /// Answers `/inspector/…`.
    inspector: Option<Arc<Inspector>>,
}

fn full(body: impl Into<Bytes>) -> FrontBody {
    Full::new(body.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// One of the pack service's own answers ([`kindgi::pack_http`]), as the
/// front sends it.
fn service_answer(response: pack_http::Response) -> Response<FrontBody> {
    response.map(|body| body.map_err(|never: Infallible| match never {}).boxed())
}

fn error(status: StatusCode, message: &str) -> Response<FrontBody> {
    service_answer(pack_http::error(status, message))
}

/// 503 `not ready`: no process serves yet.
fn not_ready() -> Response<FrontBody> {
    service_answer(pack_http::unavailable(&json!({"error": "not ready"})))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

impl Front {
    /// A front checking `token`; with `runtime`, invokes of tools that need
    /// one get their grant from it.
    pub(crate) fn new(token: Token, runtime: Option<DevRuntime>) -> Self {
        Self {
            token,
            upstream: RwLock::new(None),
            client: Client::builder(TokioExecutor::new()).build_http(),
            runtime,
            inspector: None,
        }
    }

    /// The front with the inspector answering `/inspector/…`.
    pub(crate) fn with_inspector(mut self, inspector: Arc<Inspector>) -> Self {
        self.inspector = Some(inspector);
        self
    }

    /// Sends new requests to `upstream` (`None`: answer 503 not ready).
    pub(crate) fn set_upstream(&self, upstream: Option<Arc<Upstream>>) {
        if let Ok(mut current) = self.upstream.write() {
            *current = upstream;
        }
    }

    fn upstream(&self) -> Option<Arc<Upstream>> {
        self.upstream.read().ok().and_then(|u| u.clone())
    }

    /// Serves on `listener` until `shutdown` resolves.
    pub(crate) async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        crate::http_loop::serve(listener, shutdown, move |request| {
            let front = Arc::clone(&self);
            async move { front.answer(request).await }
        })
        .await;
    }

    /// Answers one request, in a pack service's order of checks.
    pub(crate) async fn answer(&self, request: Request<Incoming>) -> Response<FrontBody> {
        let method = request.method().clone();
        let refused = |want: Method| pack_http::wrong_method(&method, &want).map(service_answer);
        let path = request.uri().path().to_owned();
        if let Some(inspector) = &self.inspector
            && (path == "/inspector" || path.starts_with("/inspector/"))
        {
            return inspector.answer(request).await;
        }
        match path.as_str() {
            "/healthz" => {
                refused(Method::GET).unwrap_or_else(|| service_answer(pack_http::healthy()))
            }
            "/readyz" => match refused(Method::GET) {
                Some(refused) => refused,
                None => self.forward_simple(request, false).await,
            },
            "/v1/info" => match refused(Method::GET) {
                Some(refused) => refused,
                None if !pack_http::token_matches(request.headers(), &self.token) => {
                    service_answer(pack_http::bad_token())
                }
                None => self.forward_simple(request, true).await,
            },
            "/v1/invoke" => match refused(Method::POST) {
                Some(refused) => refused,
                None => self.invoke(request).await,
            },
            path => service_answer(pack_http::no_route(path)),
        }
    }

    /// Forwards a bodiless GET.
    async fn forward_simple(
        &self,
        request: Request<Incoming>,
        with_token: bool,
    ) -> Response<FrontBody> {
        let (parts, _body) = request.into_parts();
        self.forward(
            &parts.uri,
            &parts.method,
            &parts.headers,
            Bytes::new(),
            with_token,
        )
        .await
    }

    async fn invoke(&self, request: Request<Incoming>) -> Response<FrontBody> {
        let headers = request.headers();
        if !pack_http::token_matches(headers, &self.token) {
            return service_answer(pack_http::bad_token());
        }
        let Some(upstream) = self.upstream() else {
            return not_ready();
        };
        if !pack_http::is_json(headers) {
            return service_answer(pack_http::not_json());
        }
        let Ok(declared) = pack_http::declared_length(headers) else {
            return service_answer(pack_http::too_large());
        };
        let (parts, mut body) = request.into_parts();
        let reading = pack_http::read_body(&mut body, declared, |_| true);
        let body = match tokio::time::timeout(BODY_TIMEOUT, reading).await {
            Ok(Ok(body)) => body,
            Ok(Err(BodyError::TooLarge)) => return service_answer(pack_http::too_large()),
            Ok(Err(_)) | Err(_) => return service_answer(pack_http::unreadable()),
        };
        let timeout_ms = headers::parse_timeout_ms(header(&parts.headers, headers::TIMEOUT_MS));
        let (body, opened) = self.complete(&upstream, body, timeout_ms).await;
        let response = self
            .forward(&parts.uri, &parts.method, &parts.headers, body, true)
            .await;
        let (Some(opened), Some(runtime)) = (opened, &self.runtime) else {
            return response;
        };
        // Read the answer to record it; it is small JSON.
        let (parts, body) = response.into_parts();
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        if let Ok(answer) = serde_json::from_slice::<Value>(&bytes)
            && answer["kind"] == "pause"
        {
            let name = answer["name"].as_str().map(str::to_owned);
            let _ = runtime
                .pause(&opened.call_id, answer["timeoutMs"].as_u64(), name.clone())
                .await;
            if let Some(url) = &opened.wait_url {
                eprintln!(
                    "kindgi dev: {} paused for {}: POST its output as JSON to {url}",
                    opened.tool_id,
                    name.as_deref().unwrap_or("an answer")
                );
            }
        }
        let _ = runtime.answer_call(&opened.call_id).await;
        Response::from_parts(parts, full(bytes))
    }

    /// The invoke as the pack process gets it: the secrets and connections
    /// its tool declares and it lacks added, and a grant of the dev runtime
    /// when its tool needs one; the body as sent when nothing changes.
    async fn complete(
        &self,
        upstream: &Upstream,
        body: Bytes,
        timeout_ms: u64,
    ) -> (Bytes, Option<Opened>) {
        let Some(mut message) = serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(|m| m["kind"] == "invoke")
        else {
            return (body, None);
        };
        let Some(entry) = message["tool"]["id"]
            .as_str()
            .and_then(|id| upstream.index.tools.iter().find(|t| t.id == id))
        else {
            // The pack answers it `tool-not-in-pack`; the terminal says
            // which ids are near (quoted as Rust does: a caller's id can't
            // write control characters there).
            if let Some(id) = message["tool"]["id"].as_str() {
                let ids = upstream.index.tools.iter().map(|t| t.id.as_str());
                let hint = crate::suggest::did_you_mean(id, ids);
                eprintln!("kindgi dev: the pack has no tool {id:?}{hint}");
            }
            return (body, None);
        };
        let added = upstream.values.add_to(&mut message, entry);
        let opened = match &self.runtime {
            Some(runtime) => open_call(runtime, entry, &mut message, timeout_ms).await,
            None => None,
        };
        if !added && opened.is_none() {
            return (body, None);
        }
        match serde_json::to_vec(&message) {
            Ok(bytes) => (Bytes::from(bytes), opened),
            Err(_) => (body, opened),
        }
    }

    /// Sends the request to the process serving now; a 503 from a process
    /// swapped out meanwhile (it is draining, so the call didn't run) is
    /// sent again to the new one.
    async fn forward(
        &self,
        uri: &http::Uri,
        method: &Method,
        headers: &HeaderMap,
        body: Bytes,
        with_token: bool,
    ) -> Response<FrontBody> {
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        for _attempt in 0..3 {
            let Some(upstream) = self.upstream() else {
                return not_ready();
            };
            let mut request = Request::new(Full::new(body.clone()));
            *request.method_mut() = method.clone();
            *request.uri_mut() = match format!("http://{}{path}", upstream.addr).parse() {
                Ok(uri) => uri,
                Err(_) => return error(StatusCode::BAD_REQUEST, "Bad request path"),
            };
            let out = request.headers_mut();
            for (name, value) in headers {
                let skip = HOP_BY_HOP.contains(&name.as_str())
                    || name == HOST
                    || name == CONTENT_LENGTH
                    || name.as_str() == headers::PACK_TOKEN;
                if !skip {
                    out.append(name.clone(), value.clone());
                }
            }
            if with_token && let Ok(token) = HeaderValue::from_str(&upstream.token) {
                out.insert(headers::PACK_TOKEN, token);
            }
            let swapped = || {
                self.upstream()
                    .is_some_and(|now| !Arc::ptr_eq(&now, &upstream))
            };
            match self.client.request(request).await {
                Ok(response)
                    if response.status() == StatusCode::SERVICE_UNAVAILABLE && swapped() =>
                {
                    continue;
                }
                Ok(response) => {
                    let (mut parts, body) = response.into_parts();
                    for name in HOP_BY_HOP {
                        parts.headers.remove(name);
                    }
                    return Response::from_parts(parts, body.boxed());
                }
                // Nothing reached the process: safe to try the new one.
                Err(e) if e.is_connect() && swapped() => continue,
                Err(e) if e.is_connect() => return not_ready(),
                Err(_) => {
                    return error(
                        StatusCode::BAD_GATEWAY,
                        "The pack process closed the connection during the call",
                    );
                }
            }
        }
        not_ready()
    }
}

/// An invoke opened on the dev runtime.
#[derive(Debug)]
struct Opened {
    call_id: String,
    tool_id: String,
    wait_url: Option<String>,
}

/// Opens the call on the dev runtime when it invokes a tool that stores or
/// reads files or pauses and carries no grant of its own; the grant goes in
/// the message's `ctx`.
async fn open_call(
    runtime: &DevRuntime,
    entry: &ToolEntry,
    message: &mut Value,
    timeout_ms: u64,
) -> Option<Opened> {
    let tool_id = entry.id.clone();
    if !(entry.pauses || entry.stores_files || entry.reads_files) {
        return None;
    }
    let ctx = message.get_mut("ctx")?.as_object_mut()?;
    if ctx.contains_key("toolFiles") || ctx.contains_key("waitToken") {
        return None;
    }
    let text = |key: &str| ctx.get(key).and_then(Value::as_str).map(str::to_owned);
    let idempotency_key = text("idempotencyKey");
    let grant = runtime
        .open_call(OpenCall {
            run_id: text("runId")?,
            tenant_id: text("tenantId")?,
            project_id: text("projectId"),
            tool_id: tool_id.clone(),
            store: entry.stores_files && idempotency_key.is_some(),
            idempotency_key,
            read: entry.reads_files,
            pauses: entry.pauses,
            deadline_ms: Some(timeout_ms),
            output_schema: Some(entry.output.clone()).filter(|s| !s.is_null()),
        })
        .await
        .ok()?
        .ok()?;
    let wait_url = grant.wait_token.as_ref().map(|w| w.url.expose().to_owned());
    if let Some(files) = &grant.tool_files {
        ctx.insert("toolFiles".into(), serde_json::to_value(files).ok()?);
    }
    if let Some(wait) = &grant.wait_token {
        ctx.insert("waitToken".into(), serde_json::to_value(wait).ok()?);
    }
    Some(Opened {
        call_id: grant.call_id,
        tool_id,
        wait_url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn front_without_a_pack() -> (String, tokio::sync::oneshot::Sender<()>) {
        let token = Token::new("front-token").expect("a usable token");
        let front = Arc::new(Front::new(token, None));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(front.serve(listener, async move {
            let _ = stopped.await;
        }));
        (url, stop)
    }

    #[tokio::test]
    async fn answers_like_a_pack_service_while_nothing_serves() {
        let (url, _stop) = front_without_a_pack().await;
        let http = reqwest::Client::new();
        let get = |path: &str| http.get(format!("{url}{path}")).send();

        let health = get("/healthz").await.expect("healthz");
        assert_eq!(health.status(), 200);
        assert_eq!(health.text().await.expect("body"), r#"{"status":"ok"}"#);

        let ready = get("/readyz").await.expect("readyz");
        assert_eq!(ready.status(), 503);
        assert_eq!(
            ready
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        assert_eq!(
            ready.text().await.expect("body"),
            r#"{"error":"not ready"}"#
        );

        let missing = get("/nope").await.expect("404");
        assert_eq!(missing.status(), 404);
        assert_eq!(
            missing.text().await.expect("body"),
            r#"{"error":"No route /nope"}"#
        );

        let wrong_method = get("/v1/invoke").await.expect("405");
        assert_eq!(wrong_method.status(), 405);
        assert_eq!(
            wrong_method.text().await.expect("body"),
            r#"{"error":"Use POST"}"#
        );

        let invoke = |token: &str| {
            http.post(format!("{url}/v1/invoke"))
                .header("kindgi-pack-token", token)
                .header("content-type", "application/json")
                .body("{}")
                .send()
        };
        let bad_token = invoke("wrong").await.expect("401");
        assert_eq!(bad_token.status(), 401);
        assert_eq!(
            bad_token.text().await.expect("body"),
            r#"{"error":"Bad pack token"}"#
        );
        let not_yet = invoke("front-token").await.expect("503");
        assert_eq!(not_yet.status(), 503);
        assert_eq!(
            not_yet.text().await.expect("body"),
            r#"{"error":"not ready"}"#
        );

        let info = http
            .get(format!("{url}/v1/info"))
            .header("kindgi-pack-token", "wrong")
            .send()
            .await
            .expect("info");
        assert_eq!(info.status(), 401);
    }
}
