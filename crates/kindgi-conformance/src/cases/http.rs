//! The HTTP surface (CONTRACT §3): routes, statuses, exact bodies, the
//! order of checks, the headers of an invoke answer.

use serde_json::{Value, json};

use super::index::FIXTURE_TOOLS;
use super::{ctx, tool};
use crate::case::{Case, Checked, Feature, answer, ensure, eq, result, status};
use crate::http::{HttpRequest, RequestBody};
use crate::session::{Profile, Session};

/// One byte past the 10 MiB limit, and then some.
const TOO_LARGE: usize = 10 * 1024 * 1024 + 4096;

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Core;
    vec![
        Case::new(
            "http.healthz",
            Core,
            "GET /healthz answers 200 {\"status\":\"ok\"}.",
            healthz,
        ),
        Case::new(
            "http.readyz",
            Core,
            "GET /readyz answers 200 {\"status\":\"ready\"} once booted.",
            readyz,
        ),
        Case::new(
            "http.404",
            Core,
            "An unknown path answers 404 {\"error\":\"No route /nope\"}.",
            not_found,
        ),
        Case::new(
            "http.405.invoke",
            Core,
            "GET /v1/invoke answers 405 {\"error\":\"Use POST\"}.",
            invoke_get,
        ),
        Case::new(
            "http.405.info",
            Core,
            "POST /v1/info answers 405 {\"error\":\"Use GET\"}.",
            info_post,
        ),
        Case::new(
            "http.405.healthz",
            Core,
            "POST /healthz and POST /readyz answer 405 {\"error\":\"Use GET\"}.",
            probes_post,
        ),
        Case::new(
            "http.401.invoke",
            Core,
            "An invoke without a token, or with another, answers 401 {\"error\":\"Bad pack token\"}.",
            invoke_401,
        ),
        Case::new(
            "http.401.info",
            Core,
            "/v1/info without a token, or with another, answers 401 {\"error\":\"Bad pack token\"}.",
            info_401,
        ),
        Case::new(
            "http.order.405-before-401",
            Core,
            "A wrong method is refused before a bad token.",
            order_405_401,
        ),
        Case::new(
            "http.order.401-before-415",
            Core,
            "A bad token is refused before a wrong Content-Type.",
            order_401_415,
        ),
        Case::new(
            "http.415",
            Core,
            "An invoke whose Content-Type isn't application/json (or is missing) answers 415 with the exact body.",
            unsupported,
        ),
        Case::new(
            "http.415.charset",
            Core,
            "Content-Type `application/json; charset=utf-8` is accepted.",
            charset,
        ),
        Case::new(
            "http.413.content-length",
            Core,
            "A body over 10 MiB with Content-Length answers 413 {\"error\":\"Request body too large\"}.",
            too_large_declared,
        ),
        Case::new(
            "http.413.chunked",
            Core,
            "A chunked body over 10 MiB, no Content-Length, answers 413 {\"error\":\"Request body too large\"}.",
            too_large_chunked,
        )
        .http1_only("HTTP/2 has no chunked transfer-encoding"),
        Case::new(
            "http.info",
            Core,
            "/v1/info: protocol 2, packId, packVersion, the pinned artifactVersion, tools with versions, checks, missingEnv [].",
            info,
        ),
        Case::new(
            "http.invoke-headers",
            Core,
            "200 invoke answers (results and errors) carry an integer kindgi-duration-ms and kindgi-artifact-version.",
            invoke_headers,
        ),
    ]
}

async fn healthz(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    answer(
        &s.send(&service, HttpRequest::get("/healthz")).await?,
        200,
        &json!({"status": "ok"}),
    )
}

async fn readyz(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    answer(
        &s.send(&service, HttpRequest::get("/readyz")).await?,
        200,
        &json!({"status": "ready"}),
    )
}

async fn not_found(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    answer(
        &s.send(&service, service.authed(HttpRequest::get("/nope")))
            .await?,
        404,
        &json!({"error": "No route /nope"}),
    )
}

async fn invoke_get(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    answer(
        &s.send(&service, service.authed(HttpRequest::get("/v1/invoke")))
            .await?,
        405,
        &json!({"error": "Use POST"}),
    )
}

async fn info_post(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    answer(
        &s.send(&service, service.authed(HttpRequest::post("/v1/info")))
            .await?,
        405,
        &json!({"error": "Use GET"}),
    )
}

async fn probes_post(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    for path in ["/healthz", "/readyz"] {
        answer(
            &s.send(&service, HttpRequest::post(path)).await?,
            405,
            &json!({"error": "Use GET"}),
        )
        .map_err(|e| format!("POST {path}: {e}"))?;
    }
    Ok(())
}

fn echo(s: &Session) -> Value {
    tool(
        "conformance.echo",
        json!({"message": "hi"}),
        ctx(&s.unique("http")),
    )
}

async fn invoke_401(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let bad = json!({"error": "Bad pack token"});
    let none = s
        .send(&service, HttpRequest::post("/v1/invoke").json(&echo(&s)))
        .await?;
    answer(&none, 401, &bad).map_err(|e| format!("no token: {e}"))?;
    let other = HttpRequest::post("/v1/invoke")
        .header("kindgi-pack-token", "not-the-token")
        .json(&echo(&s));
    answer(&s.send(&service, other).await?, 401, &bad)
        .map_err(|e| format!("another token: {e}"))?;
    let prefix = &service.token()[..service.token().len().saturating_sub(1)];
    let near = HttpRequest::post("/v1/invoke")
        .header("kindgi-pack-token", prefix)
        .json(&echo(&s));
    answer(&s.send(&service, near).await?, 401, &bad)
        .map_err(|e| format!("the token less its last character: {e}"))
}

async fn info_401(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let bad = json!({"error": "Bad pack token"});
    answer(
        &s.send(&service, HttpRequest::get("/v1/info")).await?,
        401,
        &bad,
    )
    .map_err(|e| format!("no token: {e}"))?;
    let other = HttpRequest::get("/v1/info").header("kindgi-pack-token", "not-the-token");
    answer(&s.send(&service, other).await?, 401, &bad).map_err(|e| format!("another token: {e}"))
}

async fn order_405_401(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let response = s
        .send(
            &service,
            HttpRequest::get("/v1/invoke").header("kindgi-pack-token", "nope"),
        )
        .await?;
    answer(&response, 405, &json!({"error": "Use POST"}))
}

async fn order_401_415(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let request = HttpRequest::post("/v1/invoke")
        .header("kindgi-pack-token", "nope")
        .header("content-type", "text/plain")
        .body(RequestBody::Full(b"hello".to_vec()));
    answer(
        &s.send(&service, request).await?,
        401,
        &json!({"error": "Bad pack token"}),
    )
}

async fn unsupported(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let body = json!({"error": "Content-Type must be application/json"});
    let bytes = echo(&s).to_string().into_bytes();
    let plain = service
        .authed(HttpRequest::post("/v1/invoke"))
        .header("content-type", "text/plain")
        .body(RequestBody::Full(bytes.clone()));
    answer(&s.send(&service, plain).await?, 415, &body).map_err(|e| format!("text/plain: {e}"))?;
    let missing = service
        .authed(HttpRequest::post("/v1/invoke"))
        .body(RequestBody::Full(bytes));
    answer(&s.send(&service, missing).await?, 415, &body)
        .map_err(|e| format!("no Content-Type: {e}"))
}

async fn charset(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .header("content-type", "application/json; charset=utf-8")
        .body(RequestBody::Full(echo(&s).to_string().into_bytes()));
    let response = s.send(&service, request).await?;
    status(&response, 200)?;
    result(&response.json()?, &json!({"message": "hi"}))
}

/// A JSON-looking body of `TOO_LARGE` bytes.
fn large_body() -> Vec<u8> {
    let mut body = br#"{"v":2,"kind":"invoke","tool":{"id":"conformance.echo"},"ctx":{"tenantId":"t1","runId":"r"},"input":{"message":""#.to_vec();
    body.resize(TOO_LARGE - 3, b'a');
    body.extend_from_slice(br#""}}"#);
    body
}

async fn too_large_declared(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .header("content-type", "application/json")
        .body(RequestBody::Full(large_body()));
    answer(
        &s.send(&service, request).await?,
        413,
        &json!({"error": "Request body too large"}),
    )
}

async fn too_large_chunked(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .header("content-type", "application/json")
        .body(RequestBody::Chunked(large_body()));
    answer(
        &s.send(&service, request).await?,
        413,
        &json!({"error": "Request body too large"}),
    )
}

async fn info(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let info = s.info(&service).await?;
    let index = s.index().await?;
    eq(
        "protocol",
        Some(2),
        info.get("protocol").and_then(Value::as_u64),
    )?;
    eq(
        "packId",
        Some("conformance"),
        info.get("packId").and_then(Value::as_str),
    )?;
    eq(
        "packVersion",
        Some("1.0.0"),
        info.get("packVersion").and_then(Value::as_str),
    )?;
    eq(
        "artifactVersion",
        index.json.get("artifactVersion"),
        info.get("artifactVersion"),
    )?;
    let tools = info
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for id in FIXTURE_TOOLS {
        let want = json!({"id": id, "version": "1.0.0"});
        ensure(tools.contains(&want), || {
            format!(
                "tools: expected {want} among them, got {}",
                Value::from(tools.clone())
            )
        })?;
    }
    let checks = info
        .get("checks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for id in ["conformance.checks.min-length", "conformance.checks.throws"] {
        ensure(checks.contains(&json!(id)), || {
            format!("checks: expected {id:?} among them, got {checks:?}")
        })?;
    }
    eq("missingEnv", Some(&json!([])), info.get("missingEnv"))
}

async fn invoke_headers(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let index = s.index().await?;
    let artifact = index
        .json
        .get("artifactVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for (what, message) in [
        ("a result", echo(&s)),
        (
            "an error",
            tool("conformance.nope", json!({}), ctx(&s.unique("http"))),
        ),
    ] {
        let response = s
            .send(
                &service,
                service
                    .authed(HttpRequest::post("/v1/invoke"))
                    .json(&message),
            )
            .await?;
        status(&response, 200)?;
        let duration = response.header("kindgi-duration-ms").unwrap_or_default();
        ensure(
            !duration.is_empty() && duration.bytes().all(|b| b.is_ascii_digit()),
            || format!("{what}: expected an integer kindgi-duration-ms, got {duration:?}"),
        )?;
        eq(
            &format!("{what}: kindgi-artifact-version"),
            Some(artifact.as_str()),
            response.header("kindgi-artifact-version"),
        )?;
    }
    Ok(())
}
