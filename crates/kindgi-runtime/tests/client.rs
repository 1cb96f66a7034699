//! The pack client's retry classification against a scripted test server
//! that refuses, answers 503 and 421, drops connections and hangs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use kindgi_protocol::{CallContext, Connection, ConnectionAccount, Response, Secret};
use kindgi_runtime::client::{
    CallError, PackClient, RenewConnection, RenewError, RetryPolicy, ToolCall,
};
use kindgi_test_kit::{Reply, ScriptedServer, SeenRequest};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// One request the server saw: its headers by (lowercased) name, and its
/// JSON body.
#[derive(Debug, Clone)]
struct Seen {
    headers: BTreeMap<String, String>,
    body: Value,
}

/// What `server` has seen so far.
fn seen(server: &ScriptedServer) -> Vec<Seen> {
    server
        .seen()
        .iter()
        .map(|request: &SeenRequest| Seen {
            headers: request.headers.clone(),
            body: request.json(),
        })
        .collect()
}

/// A JSON answer of `status`, with the header lines `extra`.
fn answer(status: u16, extra: &[(&str, &str)], body: &str) -> Reply {
    extra
        .iter()
        .fold(Reply::json_text(status, body), |reply, (name, value)| {
            reply.header(name, value)
        })
}

/// Holds the connection far past every call's deadline.
fn hang() -> Reply {
    Reply::Hang(Duration::from_secs(30))
}

async fn server(script: Vec<Reply>) -> (String, ScriptedServer) {
    let server = ScriptedServer::replying(script).await;
    (server.url(), server)
}

fn result(output: Value) -> Reply {
    Reply::json(200, &json!({"v": 2, "kind": "result", "output": output}))
}

fn client(url: &str) -> PackClient {
    PackClient::new(url, Secret::new("pack-token")).with_retry(RetryPolicy {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        answer_grace: Duration::from_millis(100),
    })
}

fn call() -> ToolCall {
    let ctx = CallContext {
        tenant_id: "t1".into(),
        run_id: "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13".into(),
        ..Default::default()
    };
    let mut call = ToolCall::new("acme.payments.charge", json!({"amount": 1}), ctx)
        .for_step("charge-card", None);
    call.timeout = Duration::from_secs(5);
    call
}

#[tokio::test]
async fn an_answer_carries_every_header_and_the_idempotency_key() {
    let (url, log) = server(vec![result(json!({"ok": true}))]).await;
    let mut call = call();
    call.traceparent = Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into());
    let answer = client(&url).invoke(&call).await.expect("answer");
    assert_eq!(answer, Response::result(json!({"ok": true})));
    let seen = seen(&log)[0].clone();
    assert_eq!(seen.headers["kindgi-pack-token"], "pack-token");
    assert_eq!(
        seen.headers["kindgi-run-id"],
        "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13"
    );
    assert_eq!(seen.headers["kindgi-tenant-id"], "t1");
    assert_eq!(seen.headers["kindgi-protocol"], "2.10.0");
    assert_eq!(
        seen.headers["traceparent"],
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    );
    assert!(!seen.headers["kindgi-request-id"].is_empty());
    let timeout: u64 = seen.headers["kindgi-timeout-ms"].parse().expect("ms");
    assert!((4000..=5000).contains(&timeout), "{timeout}");
    assert_eq!(
        seen.body,
        json!({"v": 2, "kind": "invoke", "tool": {"id": "acme.payments.charge"}, "input": {"amount": 1},
               "ctx": {"tenantId": "t1", "runId": "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13",
                       "idempotencyKey": "f6c8a374-b63c-5453-8320-1ca9c067447a"}})
    );
}

#[test]
fn a_step_s_call_carries_its_idempotency_key() {
    // The key itself is pinned by the protocol crate's contract vectors.
    let run_id = "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13";
    let ctx = CallContext {
        tenant_id: "t".into(),
        run_id: run_id.into(),
        ..Default::default()
    };
    for (scope, tool, model_call) in [
        ("charge-card", "acme.payments.charge", None),
        (
            "agent-loop#2/dispatch-tools",
            "acme.refunds.issue",
            Some("call_0"),
        ),
    ] {
        let call = ToolCall::new(tool, json!({}), ctx.clone()).for_step(scope, model_call);
        let expected =
            kindgi_protocol::idempotency::idempotency_key(run_id, scope, tool, model_call);
        assert_eq!(
            call.ctx.idempotency_key,
            Some(expected.to_string()),
            "{scope} {tool}"
        );
    }
}

#[tokio::test]
async fn a_503_is_retried_after_retry_after() {
    let (url, log) = server(vec![
        answer(503, &[("retry-after", "0")], r#"{"error":"not ready"}"#),
        answer(503, &[("retry-after", "0")], r#"{"error":"overloaded"}"#),
        result(json!({"n": 3})),
    ])
    .await;
    let answer = client(&url).invoke(&call()).await.expect("answer");
    assert_eq!(answer, Response::result(json!({"n": 3})));
    let seen = seen(&log);
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0].headers["kindgi-request-id"], seen[2].headers["kindgi-request-id"],
        "one call, one request id"
    );
}

#[tokio::test]
async fn a_503_that_outlasts_the_deadline_did_not_run() {
    let (url, log) = server(vec![answer(
        503,
        &[("retry-after", "5")],
        r#"{"error":"draining"}"#,
    )])
    .await;
    let mut call = call();
    call.timeout = Duration::from_millis(500);
    let started = std::time::Instant::now();
    let err = client(&url).invoke(&call).await.expect_err("unavailable");
    assert!(
        matches!(err, CallError::Unavailable { attempts: 1, .. }),
        "{err:?}"
    );
    assert!(err.did_not_run());
    // Gave up without waiting out the 5 s Retry-After (a generous bound:
    // the machine may be busy).
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "gave up at once: {:?}",
        started.elapsed()
    );
    assert_eq!(log.count(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_retried_until_the_service_listens() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        probe.local_addr().expect("addr").port()
    };
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(120)).await;
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("rebind");
        ScriptedServer::serve_replying(listener, vec![result(json!({"late": true}))])
    });
    let c = client(&format!("http://127.0.0.1:{port}")).with_retry(RetryPolicy {
        max_attempts: 20,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(40),
        answer_grace: Duration::from_millis(100),
    });
    let answer = c.invoke(&call()).await.expect("answer");
    assert_eq!(answer, Response::result(json!({"late": true})));
    assert_eq!(late.await.expect("the late server").count(), 1);
}

#[tokio::test]
async fn refused_every_time_gives_up_after_the_bounded_attempts() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        probe.local_addr().expect("addr").port()
    };
    let err = client(&format!("http://127.0.0.1:{port}"))
        .invoke(&call())
        .await
        .expect_err("refused");
    assert!(
        matches!(err, CallError::Unavailable { attempts: 5, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("connection refused"), "{err}");
}

#[tokio::test]
async fn a_421_is_not_retried() {
    let (url, log) = server(vec![
        answer(421, &[], r#"{"code":"pack-tenant-mismatch"}"#),
        result(json!({})),
    ])
    .await;
    let err = client(&url).invoke(&call()).await.expect_err("421");
    assert!(matches!(err, CallError::TenantMismatch), "{err:?}");
    assert!(err.did_not_run());
    assert_eq!(log.count(), 1);
}

#[tokio::test]
async fn a_dropped_connection_after_the_request_is_not_retried() {
    let (url, log) = server(vec![Reply::Drop, result(json!({}))]).await;
    let err = client(&url).invoke(&call()).await.expect_err("dropped");
    assert!(err.may_have_run(), "{err:?}");
    assert!(err.to_string().contains("dropped"), "{err}");
    assert_eq!(log.count(), 1);
}

#[tokio::test]
async fn a_timeout_is_not_retried() {
    let (url, log) = server(vec![hang(), result(json!({}))]).await;
    let mut call = call();
    call.timeout = Duration::from_millis(200);
    let started = std::time::Instant::now();
    let err = client(&url).invoke(&call).await.expect_err("timeout");
    assert!(err.may_have_run(), "{err:?}");
    assert!(err.to_string().contains("deadline"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(log.count(), 1);
}

#[derive(Debug, Default)]
struct Renewer {
    calls: Mutex<u32>,
}

impl RenewConnection for Renewer {
    fn renew<'a>(
        &'a self,
        name: &'a str,
        current: &'a Connection,
    ) -> BoxFuture<'a, Result<Connection, RenewError>> {
        Box::pin(async move {
            *self.calls.lock().expect("calls") += 1;
            assert_eq!(name, "gh");
            let mut fresh = current.clone();
            fresh.access_token = Secret::new("renewed-token");
            Ok(fresh)
        })
    }
}

fn connection_call() -> ToolCall {
    let mut call = call();
    let conn = Connection {
        connection_id: "c1".into(),
        app: "github".into(),
        app_name: "GitHub".into(),
        access_token: Secret::new("old-token"),
        account: ConnectionAccount {
            id: "1".into(),
            label: "ana".into(),
        },
        expires_at: None,
    };
    call.ctx.connections = Some(BTreeMap::from([("gh".to_owned(), conn)]));
    call
}

fn rejected() -> Reply {
    Reply::json(
        200,
        &json!({"v": 2, "kind": "error", "code": "connection-rejected", "message": "GitHub refused the token", "connection": "gh", "toolId": "acme.payments.charge"}),
    )
}

#[tokio::test]
async fn connection_rejected_renews_once_and_runs_again() {
    let (url, log) = server(vec![rejected(), result(json!({"ok": 1}))]).await;
    let renewer = Arc::new(Renewer::default());
    let c = client(&url).with_renewer(Arc::clone(&renewer) as Arc<dyn RenewConnection>);
    let answer = c.invoke(&connection_call()).await.expect("answer");
    assert_eq!(answer, Response::result(json!({"ok": 1})));
    assert_eq!(*renewer.calls.lock().expect("calls"), 1);
    let seen = seen(&log);
    assert_eq!(
        seen[0].body["ctx"]["connections"]["gh"]["accessToken"],
        "old-token"
    );
    assert_eq!(
        seen[1].body["ctx"]["connections"]["gh"]["accessToken"],
        "renewed-token"
    );
    assert_eq!(
        seen[0].body["ctx"]["idempotencyKey"],
        seen[1].body["ctx"]["idempotencyKey"]
    );

    // Rejected again after renewing: the answer stands, no second renewal.
    let (url, log) = server(vec![rejected(), rejected(), result(json!({}))]).await;
    let renewer = Arc::new(Renewer::default());
    let c = client(&url).with_renewer(Arc::clone(&renewer) as Arc<dyn RenewConnection>);
    let answer = c.invoke(&connection_call()).await.expect("answer");
    assert_eq!(
        answer.error_code().map(|c| c.as_str()),
        Some("connection-rejected")
    );
    assert_eq!(*renewer.calls.lock().expect("calls"), 1);
    assert_eq!(log.count(), 2);
}

/// A kept-alive server: answers each request of `replies` in turn (status
/// and body), never closing a connection, and notes the peer port each
/// request came from.
async fn kept_alive_server(replies: Vec<(u16, &'static str)>) -> (String, Arc<Mutex<Vec<u16>>>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let ports = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(Mutex::new(replies.into_iter()));
    let noted = Arc::clone(&ports);
    tokio::spawn(async move {
        while let Ok((stream, peer)) = listener.accept().await {
            let (ports, replies) = (Arc::clone(&noted), Arc::clone(&replies));
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end().to_ascii_lowercase();
                        if line.is_empty() {
                            break;
                        }
                        if let Some(n) = line.strip_prefix("content-length:") {
                            length = n.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if stream.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    ports.lock().expect("ports").push(peer.port());
                    let Some((status, body)) = replies.lock().expect("replies").next() else {
                        return;
                    };
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.get_mut().write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, ports)
}

#[tokio::test]
async fn after_a_503_draining_no_attempt_reuses_a_kept_connection() {
    let result = r#"{"v":2,"kind":"result","output":{}}"#;
    let (url, ports) = kept_alive_server(vec![
        (200, result),
        (503, r#"{"error":"overloaded"}"#),
        (200, result),
        (503, r#"{"error":"draining"}"#),
        (200, result),
    ])
    .await;
    let c = client(&url);
    for _ in 0..3 {
        let answer = c.invoke(&call()).await.expect("answer");
        assert_eq!(answer, Response::result(json!({})));
    }
    let ports = ports.lock().expect("ports").clone();
    assert_eq!(ports.len(), 5, "{ports:?}");
    // An overloaded service keeps its connections: the retry reuses it.
    assert_eq!(ports[..4], [ports[0]; 4], "{ports:?}");
    // A draining one is about to close them: the retry opens a new one.
    assert_ne!(ports[4], ports[3], "{ports:?}");
}
