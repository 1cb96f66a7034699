//! Declarative HTTP tools (`Tool::http`) end to end: the index carries the
//! spec as `tool.schema.json` spells it, the indexer refuses what a
//! runtime couldn't run, and each call makes the request against a real
//! HTTP server on 127.0.0.1 — URL, headers, secret, body, statuses,
//! timeouts, the response's JSON or text — with no secret in any answer.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kindgi::index::{PackConfig, Pins, build_index};
use kindgi::protocol::ErrorCode;
use kindgi::testing::{TestContext, TestPack};
use kindgi::{HttpBody, HttpSpec, Pack, SecretRef, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A real HTTP/1.1 server on 127.0.0.1 that records every request and
/// answers by path: `/json/…` a JSON echo, `/status/<code>` that status
/// with a text body, `/text`, `/empty`, `/bad-json`, `/big` (10 MiB + 1),
/// `/slow` (never answers), `/redirect/<url>` a 302 to it.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<VecDeque<Seen>>>,
}

impl Server {
    async fn start() -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(VecDeque::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let log = Arc::clone(&log);
                        async move { Ok::<_, Infallible>(answer(request, log).await) }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Server { addr, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests seen so far, oldest first.
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").iter().cloned().collect()
    }
}

async fn answer(
    request: Request<Incoming>,
    log: Arc<Mutex<VecDeque<Seen>>>,
) -> Response<Full<Bytes>> {
    let method = request.method().to_string();
    let target = request
        .uri()
        .path_and_query()
        .map(ToString::to_string)
        .unwrap_or_default();
    let headers = request
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    let seen = Seen {
        method,
        target: target.clone(),
        headers,
        body,
    };
    log.lock().expect("lock").push_back(seen.clone());
    let reply = |status: u16, body: Vec<u8>| {
        Response::builder()
            .status(status)
            .body(Full::new(Bytes::from(body)))
            .expect("a response")
    };
    let path = target.split('?').next().unwrap_or_default();
    if let Some(code) = path.strip_prefix("/status/") {
        return reply(code.parse().unwrap_or(500), b"no such item".to_vec());
    }
    if let Some(to) = path.strip_prefix("/redirect/") {
        let to = percent_decode(to);
        return Response::builder()
            .status(302)
            .header("location", to)
            .body(Full::new(Bytes::new()))
            .expect("a response");
    }
    match path {
        "/text" => reply(200, b"plain words".to_vec()),
        "/empty" => reply(200, Vec::new()),
        "/bad-json" => reply(200, b"{".to_vec()),
        "/big" => reply(200, vec![b' '; 10 * 1024 * 1024 + 1]),
        "/slow" => {
            std::future::pending::<()>().await;
            reply(200, Vec::new())
        }
        _ => reply(
            200,
            json!({"method": seen.method, "target": seen.target, "body": seen.body})
                .to_string()
                .into_bytes(),
        ),
    }
}

fn percent_decode(text: &str) -> String {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Lookup {
    id: String,
    page: u32,
    note: Option<String>,
}

const SECRET: &str = "s3cret-value-never-shown";

/// A tool named `id` making `spec`'s request, with the secret `TOKEN`.
fn http_tool(id: &str, spec: HttpSpec) -> Tool {
    Tool::new(id)
        .description("Looks an item up.")
        .needs_secret("TOKEN")
        .http::<Lookup, Value>(spec)
}

fn pack_of(tools: Vec<Tool>) -> TestPack {
    let pack = tools.into_iter().fold(Pack::new(), Pack::tool);
    TestPack::new(pack).expect("the pack indexes")
}

fn with_secret() -> TestContext {
    TestContext::new().secret("TOKEN", SECRET)
}

/// The error message of a `handler-throw` answer.
fn thrown(answer: Result<Value, kindgi::protocol::ErrorResponse>) -> String {
    let error = answer.expect_err("an error");
    assert_eq!(error.code, ErrorCode::HandlerThrow, "{error:?}");
    assert!(!format!("{error:?}").contains(SECRET), "{error:?}");
    error.message
}

#[tokio::test]
async fn a_get_fills_its_url_headers_and_secret() {
    let server = Server::start().await;
    let spec = HttpSpec::get(server.url("/json/items/{id}?page={page}"))
        .header("Accept", "application/json")
        .header("X-Note", "note: {note}")
        .bearer(SecretRef::new("production", "TOKEN"));
    let pack = pack_of(vec![http_tool("acme.lookup", spec)]);
    let output = pack
        .call(
            "acme.lookup",
            json!({"id": "a b/é", "page": 2, "note": "hi"}),
            with_secret(),
        )
        .await
        .output()
        .expect("an output");
    assert_eq!(
        output,
        json!({"method": "GET", "target": "/json/items/a%20b%2F%C3%A9?page=2", "body": ""})
    );
    let seen = &server.seen()[0];
    assert_eq!(seen.header("accept"), Some("application/json"));
    assert_eq!(seen.header("x-note"), Some("note: hi"));
    let bearer = format!("Bearer {SECRET}");
    assert_eq!(seen.header("authorization"), Some(bearer.as_str()));
    assert_eq!(seen.header("content-type"), None);
}

#[tokio::test]
async fn bodies_are_built_as_the_spec_says() {
    let server = Server::start().await;
    let secret = || SecretRef::new("production", "TOKEN");
    let pack = pack_of(vec![
        http_tool(
            "acme.post",
            HttpSpec::post(server.url("/json/{id}")).auth_header("X-Api-Key", secret()),
        ),
        http_tool(
            "acme.passthrough",
            HttpSpec::put(server.url("/json/{id}"))
                .bearer(secret())
                .body(HttpBody::InputPassthrough),
        ),
        http_tool(
            "acme.text",
            HttpSpec::patch(server.url("/json/{id}"))
                .bearer(secret())
                .body(HttpBody::Text("page {page} of {id}".into())),
        ),
        http_tool(
            "acme.only-url",
            HttpSpec::delete(server.url("/json/{id}/{page}")).bearer(secret()),
        ),
    ]);
    let input = json!({"id": "7", "page": 1});
    for (tool, body) in [
        ("acme.post", r#"{"page":1}"#),
        ("acme.passthrough", r#"{"id":"7","page":1}"#),
        ("acme.text", "page 1 of 7"),
        ("acme.only-url", ""),
    ] {
        let output = pack
            .call(tool, input.clone(), with_secret())
            .await
            .output()
            .expect("an output");
        assert_eq!(output["body"], body, "{tool}");
    }
    let seen = server.seen();
    let types: Vec<Option<&str>> = seen.iter().map(|s| s.header("content-type")).collect();
    assert_eq!(
        types,
        [
            Some("application/json"),
            Some("application/json"),
            Some("text/plain"),
            None
        ]
    );
    let methods: Vec<&str> = seen.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(methods, ["POST", "PUT", "PATCH", "DELETE"]);
    assert_eq!(seen[0].header("x-api-key"), Some(SECRET));
    assert_eq!(seen[0].header("authorization"), None);
}

#[tokio::test]
async fn a_status_outside_the_range_fails_the_call_with_its_body() {
    let server = Server::start().await;
    let pack = pack_of(vec![
        http_tool(
            "acme.strict",
            HttpSpec::get(server.url("/status/404?id={id}"))
                .bearer(SecretRef::new("production", "TOKEN")),
        ),
        http_tool(
            "acme.lenient",
            HttpSpec::get(server.url("/status/404?id={id}"))
                .bearer(SecretRef::new("production", "TOKEN"))
                .parse_json(false)
                .success_status(200..=404),
        ),
    ]);
    let input = json!({"id": "x", "page": 1});
    assert_eq!(
        thrown(
            pack.call("acme.strict", input.clone(), with_secret())
                .await
                .output()
        ),
        "Handler for tool \"acme.strict\" threw: Error: http-tool \"acme.strict\" got status 404 Not Found — no such item"
    );
    assert_eq!(
        pack.call("acme.lenient", input, with_secret())
            .await
            .output(),
        Ok(json!("no such item"))
    );
}

#[tokio::test]
async fn text_empty_and_broken_bodies() {
    let server = Server::start().await;
    let tool = |id: &str, path: &str, parse: Option<bool>| {
        let mut spec =
            HttpSpec::get(server.url(path)).bearer(SecretRef::new("production", "TOKEN"));
        if let Some(parse) = parse {
            spec = spec.parse_json(parse);
        }
        http_tool(id, spec)
    };
    let pack = pack_of(vec![
        tool("acme.text", "/text", Some(false)),
        tool("acme.empty", "/empty", None),
        tool("acme.bad", "/bad-json", None),
        tool("acme.big", "/big", Some(false)),
    ]);
    let input = || json!({"id": "x", "page": 1});
    assert_eq!(
        pack.call("acme.text", input(), with_secret())
            .await
            .output(),
        Ok(json!("plain words"))
    );
    assert_eq!(
        pack.call("acme.empty", input(), with_secret())
            .await
            .output(),
        Ok(Value::Null)
    );
    assert_eq!(
        thrown(pack.call("acme.bad", input(), with_secret()).await.output()),
        "Handler for tool \"acme.bad\" threw: Error: http-tool \"acme.bad\" response was not valid JSON: EOF while parsing an object at line 1 column 1"
    );
    assert_eq!(
        thrown(pack.call("acme.big", input(), with_secret()).await.output()),
        "Handler for tool \"acme.big\" threw: Error: http-tool \"acme.big\": the response body is longer than 10485760 bytes, the most this tool reads"
    );
}

#[tokio::test]
async fn a_slow_server_runs_into_the_timeout() {
    let server = Server::start().await;
    let pack = pack_of(vec![http_tool(
        "acme.slow",
        HttpSpec::get(server.url("/slow"))
            .bearer(SecretRef::new("production", "TOKEN"))
            .timeout(Duration::from_millis(200)),
    )]);
    let started = std::time::Instant::now();
    assert_eq!(
        thrown(
            pack.call("acme.slow", json!({"id": "x", "page": 1}), with_secret())
                .await
                .output()
        ),
        "Handler for tool \"acme.slow\" threw: Error: http-tool \"acme.slow\" timed out after 200ms"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_missing_secret_is_named_and_never_guessed() {
    let server = Server::start().await;
    let pack = pack_of(vec![http_tool(
        "acme.lookup",
        HttpSpec::get(server.url("/json")).bearer(SecretRef::new("production", "TOKEN")),
    )]);
    assert_eq!(
        thrown(
            pack.call(
                "acme.lookup",
                json!({"id": "x", "page": 1}),
                TestContext::new()
            )
            .await
            .output()
        ),
        "Handler for tool \"acme.lookup\" threw: Error: http-tool \"acme.lookup\" needs the secret \"TOKEN\" (production), which the call doesn't carry"
    );
    assert!(server.seen().is_empty(), "no request went out");
}

#[tokio::test]
async fn a_secret_header_goes_to_no_other_origin() {
    let elsewhere = Server::start().await;
    let server = Server::start().await;
    let away = percent_encoding_of(&elsewhere.url("/json/landed"));
    let pack = pack_of(vec![
        http_tool(
            "acme.header",
            HttpSpec::get(server.url(&format!("/redirect/{away}")))
                .auth_header("X-Api-Key", SecretRef::new("production", "TOKEN")),
        ),
        http_tool(
            "acme.bearer",
            HttpSpec::get(server.url(&format!("/redirect/{away}")))
                .bearer(SecretRef::new("production", "TOKEN")),
        ),
    ]);
    let input = || json!({"id": "x", "page": 1});
    assert_eq!(
        thrown(
            pack.call("acme.header", input(), with_secret())
                .await
                .output()
        ),
        "Handler for tool \"acme.header\" threw: Error: http-tool \"acme.header\" got status 302 Found — "
    );
    assert!(elsewhere.seen().is_empty());
    let output = pack
        .call("acme.bearer", input(), with_secret())
        .await
        .output()
        .expect("followed");
    assert_eq!(output["target"], "/json/landed");
    assert_eq!(elsewhere.seen()[0].header("authorization"), None);
}

fn percent_encoding_of(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn index_of(pack: &Pack) -> Result<Value, String> {
    let config = PackConfig {
        id: "acme".to_owned(),
        version: "1.0.0".to_owned(),
        env: None,
    };
    let pins = Pins {
        artifact_version: "20260101.1".to_owned(),
        published_at: "2026-01-01T00:00:00.000Z".to_owned(),
    };
    build_index(pack, &config, &pins)
        .map(|index| serde_json::to_value(&index).expect("JSON"))
        .map_err(|problems| problems.to_string())
}

#[test]
fn the_index_carries_the_spec_as_the_schema_spells_it() {
    let pack = Pack::new().tool(http_tool(
        "acme.lookup",
        HttpSpec::post("https://api.example.com/items/{id}")
            .header("Accept", "application/json")
            .bearer(SecretRef::new("production", "TOKEN"))
            .timeout(Duration::from_secs(5)),
    ));
    let index = index_of(&pack).expect("indexes");
    let tool = &index["tools"][0];
    assert_eq!(
        tool["spec"],
        json!({"kind": "http", "method": "POST", "urlTemplate": "https://api.example.com/items/{id}",
            "headers": [{"name": "Accept", "value": "application/json"}],
            "authorization": {"kind": "bearer", "secretRef": {"envName": "production", "name": "TOKEN"}},
            "timeoutMs": 5000})
    );
    assert_eq!(tool["needsSpec"], json!({"secrets": {"TOKEN": {}}}));
    assert_eq!(tool["input"]["required"], json!(["id", "page"]));
}

#[test]
fn the_indexer_refuses_a_spec_a_runtime_could_not_run() {
    let pack = Pack::new().tool(
        Tool::new("acme.lookup")
            .description("Looks an item up.")
            .http::<Lookup, Value>(
                HttpSpec::get("https://{id}.example.com/items/{item}")
                    .bearer(SecretRef::new("production", "TOKEN")),
            ),
    );
    let problems = index_of(&pack).expect_err("refused");
    let file = "tests/http_tools.rs";
    for line in [
        format!(
            "tool \"acme.lookup\" ({file}): its HTTP spec's URL fills {{placeholders}} in its path and query only, never in its host or port"
        ),
        format!(
            "tool \"acme.lookup\" ({file}): its HTTP spec's URL fills {{item}}, which is not a property of its input: add `item` to the input type, or change the URL"
        ),
        format!(
            "tool \"acme.lookup\" ({file}): its HTTP spec sends the secret \"TOKEN\", which the tool doesn't declare: call .needs_secret(\"TOKEN\")"
        ),
    ] {
        assert!(problems.contains(&line), "no {line:?} in\n{problems}");
    }
}

#[test]
fn a_handler_given_after_the_spec_replaces_it() {
    async fn local(input: Value) -> Result<Value, kindgi::ToolError> {
        Ok(input)
    }
    let pack = Pack::new().tool(
        http_tool("acme.lookup", HttpSpec::get("https://api.example.com/"))
            .input_schema(json!({"type": "object"}))
            .handler(local),
    );
    let index = index_of(&pack).expect("indexes");
    assert_eq!(index["tools"][0].get("spec"), None);
}
