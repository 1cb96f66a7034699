//! The inspector's safety, against the real `kindgi inspect` on 127.0.0.1:
//! the page without the token, every API route with it, and no answer to
//! a request whose `Host` or `Origin` is another site's.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// A child process, killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `kindgi inspect`.
struct Inspect {
    _child: Killed,
    base: String,
    port: u16,
    token: String,
    _dir: tempfile::TempDir,
}

fn start() -> Inspect {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = dir.path().join("index.json");
    std::fs::write(
        &index,
        json!({"v": 1, "packId": "acme", "packVersion": "1.0.0", "artifactVersion": "1",
            "publishedAt": "2026-01-01T00:00:00.000Z", "tools": [], "guardrails": [],
            "agents": [], "flows": []})
        .to_string(),
    )
    .expect("index");
    let child = Command::new(Path::new(env!("CARGO_BIN_EXE_kindgi")))
        .args([
            "inspect",
            "--service",
            "http://127.0.0.1:9",
            "--token",
            "svc",
        ])
        .arg("--index")
        .arg(&index)
        .arg("--data-dir")
        .arg(dir.path().join("runtime"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kindgi inspect starts");
    let mut child = Killed(child);
    let stdout = child.0.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("its first line");
    let url = first
        .split_whitespace()
        .find(|word| word.contains("/inspector/#token="))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_owned();
    let (base, token) = url.split_once("/inspector/#token=").expect("a page URL");
    let port = base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    Inspect {
        _child: child,
        base: base.to_owned(),
        port,
        token: token.to_owned(),
        _dir: dir,
    }
}

async fn text(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

#[tokio::test]
async fn the_page_is_open_and_every_api_route_needs_the_token() {
    let inspect = start();
    let http = reqwest::Client::new();
    let page = http
        .get(format!("{}/inspector/", inspect.base))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    assert_eq!(
        page.headers()["content-type"].to_str().ok(),
        Some("text/html; charset=utf-8")
    );
    assert!(
        page.text()
            .await
            .expect("html")
            .contains("/inspector/assets/inspector.js")
    );
    // HEAD answers as GET does, without the body.
    let head = http
        .head(format!("{}/inspector/", inspect.base))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), 200);
    assert_eq!(
        head.headers()["content-type"].to_str().ok(),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(head.text().await.expect("no body"), "");

    let needs_token = r#"{"error":"The inspector needs the dev token: open the /inspector/#token=… URL that kindgi printed"}"#;
    for path in ["pack", "history", "logs", "files/a?runId=r&tenantId=t"] {
        let url = format!("{}/inspector/api/{path}", inspect.base);
        assert_eq!(
            text(http.get(&url).send().await.expect("no token")).await,
            (401, needs_token.to_owned()),
            "{path}"
        );
        assert_eq!(
            text(
                http.get(&url)
                    .bearer_auth("wrong")
                    .send()
                    .await
                    .expect("wrong")
            )
            .await,
            (401, needs_token.to_owned()),
            "{path}"
        );
    }
    let call = http
        .post(format!("{}/inspector/api/call", inspect.base))
        .json(&json!({"toolId": "x"}))
        .send()
        .await
        .expect("call");
    assert_eq!(text(call).await, (401, needs_token.to_owned()));

    let pack: Value = http
        .get(format!("{}/inspector/api/pack", inspect.base))
        .bearer_auth(&inspect.token)
        .send()
        .await
        .expect("pack")
        .json()
        .await
        .expect("json");
    assert_eq!(pack["mode"], "inspect");
    assert_eq!(pack["serviceUrl"], "http://127.0.0.1:9");
    assert_eq!(pack["index"]["packId"], "acme");
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused() {
    let inspect = start();
    let port = inspect.port;
    let http = reqwest::Client::new();
    for path in ["/inspector/", "/inspector/api/pack"] {
        let rebound = http
            .get(format!("{}{path}", inspect.base))
            .header("host", format!("evil.example:{port}"))
            .bearer_auth(&inspect.token)
            .send()
            .await
            .expect("rebound");
        assert_eq!(
            text(rebound).await,
            (
                403,
                json!({"error": format!("Refused: the inspector answers only to Host 127.0.0.1:{port} or localhost:{port}, not \"evil.example:{port}\" (a site that points its name at this machine cannot use it)")}).to_string()
            ),
            "{path}"
        );
    }
    let key = |origin: String| {
        http.post(format!("{}/inspector/api/key", inspect.base))
            .header("origin", origin)
            .bearer_auth(&inspect.token)
            .json(&json!({"toolId": "acme.echo", "runId": "run-1", "step": "s"}))
            .send()
    };
    let cross_site = key("http://evil.example".to_owned()).await.expect("post");
    assert_eq!(
        text(cross_site).await,
        (
            403,
            json!({"error": format!("Refused: a request from \"http://evil.example\" is not from the inspector's own page (http://127.0.0.1:{port})")}).to_string()
        )
    );
    let own = key(format!("http://127.0.0.1:{port}")).await.expect("post");
    let expected = kindgi_protocol::idempotency::idempotency_key("run-1", "s", "acme.echo", None);
    assert_eq!(
        text(own).await,
        (
            200,
            json!({"idempotencyKey": expected.to_string()}).to_string()
        )
    );
}

/// The headers every inspector answer carries.
const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
];

#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let inspect = start();
    let http = reqwest::Client::new();
    let port = inspect.port;
    let answers = [
        http.get(format!("{}/inspector/", inspect.base)),
        http.get(format!("{}/inspector/assets/inspector.js", inspect.base)),
        http.get(format!("{}/inspector/api/pack", inspect.base)),
        http.get(format!("{}/inspector/api/pack", inspect.base))
            .bearer_auth(&inspect.token),
        http.get(format!("{}/inspector/nowhere", inspect.base)),
        http.get(format!("{}/inspector/", inspect.base))
            .header("host", format!("evil.example:{port}")),
    ];
    for request in answers {
        let answer = request.send().await.expect("answer");
        let url = answer.url().clone();
        let status = answer.status();
        for (name, value) in SECURITY_HEADERS {
            assert_eq!(
                answer.headers().get(name).and_then(|v| v.to_str().ok()),
                Some(value),
                "{name} on {status} {url}"
            );
        }
    }
}

#[tokio::test]
async fn a_target_in_absolute_form_for_another_site_is_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let inspect = start();
    let port = inspect.port;
    let ask = |target: String| async move {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let request =
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        answer
    };
    let answer = ask(format!("http://evil.example:{port}/inspector/")).await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    let body = json!({"error": format!("Refused: the inspector answers only to Host 127.0.0.1:{port} or localhost:{port}, not \"evil.example:{port}\" (a site that points its name at this machine cannot use it)")}).to_string();
    assert!(answer.ends_with(&body), "{answer}");
    // Its own authority in absolute form is served.
    let own = ask(format!("http://127.0.0.1:{port}/inspector/")).await;
    assert!(own.starts_with("HTTP/1.1 200 "), "{own}");
}
