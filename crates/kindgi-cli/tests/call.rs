//! `kindgi call` and `kindgi info` against a fake pack service in the test.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = head.lines().next().unwrap_or_default().to_owned();
    Some((
        line,
        serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null),
    ))
}

/// A pack service whose one tool pauses; it keeps each invoke's body.
async fn fake_pack(answer: Value) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (log, answer) = (Arc::clone(&log), answer.clone());
            tokio::spawn(async move {
                let Some((line, body)) = read_request(&mut stream).await else {
                    return;
                };
                let reply = if line.starts_with("GET /v1/info") {
                    json!({"protocol": 2, "packId": "demo", "packVersion": "1.0.0", "artifactVersion": "1",
                           "tools": [{"id": "demo.pickup", "version": "1.0.0"}], "checks": [], "missingEnv": []})
                } else {
                    log.lock().expect("log").push(body);
                    answer
                };
                let text = reply.to_string();
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = stream.write_all(resp.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

fn index(dir: &std::path::Path) -> std::path::PathBuf {
    let index = json!({
        "v": 1, "packId": "demo", "packVersion": "1.0.0", "artifactVersion": "1", "publishedAt": "2026-01-01T00:00:00.000Z",
        "tools": [{"id": "demo.pickup", "version": "1.0.0", "input": {"type": "object"},
                   "output": {"type": "object", "required": ["picked"]}, "pauses": true, "storesFiles": true,
                   "modulePath": "src/pickup.ts"}],
        "guardrails": [], "agents": [], "flows": []
    });
    let path = dir.join("index.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&index).expect("json")).expect("write index");
    path
}

fn kindgi() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kindgi"));
    cmd.env_remove("KINDGI_SERVICE_URL")
        .env_remove("KINDGI_SERVICE_TOKEN")
        .env_remove("KINDGI_PACK_INDEX");
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

#[tokio::test]
async fn a_paused_call_is_waited_out_and_its_answer_printed() {
    let dir = tempfile::tempdir().expect("dir");
    let (url, seen) =
        fake_pack(json!({"v": 2, "kind": "pause", "timeoutMs": 20000, "name": "the pickup"})).await;
    let child = kindgi()
        .args([
            "call",
            "demo.pickup",
            "--input",
            r#"{"parcel":"p1"}"#,
            "--service",
            &url,
            "--token",
            "tok",
            "--run",
            "run-1",
        ])
        .arg("--index")
        .arg(index(dir.path()))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .spawn()
        .expect("spawn");
    // The invoke carries a wait token and a files grant; answer through the link.
    let body = loop {
        if let Some(body) = seen.lock().expect("log").first().cloned() {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(body["tool"]["id"], "demo.pickup");
    assert_eq!(body["input"], json!({"parcel": "p1"}));
    assert_eq!(body["ctx"]["runId"], "run-1");
    assert!(body["ctx"]["idempotencyKey"].is_string());
    assert!(
        body["ctx"]["toolFiles"]["token"]
            .as_str()
            .is_some_and(|t| t.starts_with("kgi_tf_"))
    );
    let link = body["ctx"]["waitToken"]["url"]
        .as_str()
        .expect("wait url")
        .to_owned();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let http = reqwest::Client::new();
    let bad = http
        .post(&link)
        .body(r#"{"nope":1}"#)
        .send()
        .await
        .expect("post");
    assert_eq!(bad.status().as_u16(), 400);
    let ok = http
        .post(&link)
        .body(r#"{"picked":true}"#)
        .send()
        .await
        .expect("post");
    assert_eq!(ok.status().as_u16(), 200);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("exits")
        .expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("waiting for the pickup"), "{stderr}");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("stdout JSON");
    assert_eq!(printed, json!({"picked": true}));
}

#[tokio::test]
async fn a_result_is_printed_and_an_error_exits_1() {
    let (url, _) = fake_pack(json!({"v": 2, "kind": "result", "output": {"message": "hi"}})).await;
    let out = kindgi()
        .args([
            "call",
            "demo.pickup",
            "--input",
            "{}",
            "--service",
            &url,
            "--token",
            "tok",
        ])
        .current_dir(std::env::temp_dir())
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).expect("json"),
        json!({"message": "hi"})
    );

    let (url, _) =
        fake_pack(json!({"v": 2, "kind": "error", "code": "handler-throw", "message": "boom"}))
            .await;
    let out = kindgi()
        .args([
            "call",
            "demo.pickup",
            "--input",
            "{}",
            "--service",
            &url,
            "--token",
            "tok",
        ])
        .current_dir(std::env::temp_dir())
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let printed: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(printed["code"], "handler-throw");
}

#[tokio::test]
async fn usage_errors_exit_2_and_connection_problems_are_explained() {
    let out = kindgi()
        .args([
            "call",
            "demo.pickup",
            "--input",
            "{not json",
            "--service",
            "http://x",
            "--token",
            "t",
        ])
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--input is not valid JSON"));
    let out = kindgi()
        .args(["call", "demo.pickup", "--input", "{}"])
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KINDGI_SERVICE_URL"));
    let out = kindgi().args(["call"]).output().await.expect("run");
    assert_eq!(out.status.code(), Some(2));

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let out = kindgi()
        .args([
            "info",
            "--service",
            &format!("http://127.0.0.1:{port}"),
            "--token",
            "t",
        ])
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Could not connect to the pack service") && stderr.contains("refused"),
        "{stderr}"
    );
}

#[tokio::test]
async fn info_prints_the_services_info() {
    let (url, _) = fake_pack(json!({})).await;
    let out = kindgi()
        .args(["info", "--service", &url, "--token", "tok"])
        .output()
        .await
        .expect("run");
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(info["packId"], "demo");
}
