//! Answers sent before the body is read (413 from `Content-Length`, 401,
//! 415, 503) reach the client: the service reads and discards what still
//! arrives, for a bounded time and byte count, before it closes, so that
//! the client's kernel never resets the connection over an unread answer.

use std::path::Path;
use std::time::{Duration, Instant};

use kindgi_reliability::http::Request;
use kindgi_reliability::{PackService, ServiceOptions, bins};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{heavy, pack_bin, start};

/// 11 MiB: over the 10 MiB limit.
const BODY: usize = 11 * 1024 * 1024;
const TRIES: usize = 20;

/// How many of [`TRIES`] posts by Node's `fetch` saw each status, and the
/// errors the others got; `None` when there is no `node` to run (outside
/// CI, where it must be there).
fn node_fetch(service: &PackService, token: &str, content_type: &str) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/early-answers.mjs");
    let url = format!("http://{}/v1/invoke", service.addr());
    let out = std::process::Command::new("node")
        .arg(script)
        .args([url.as_str(), token, content_type])
        .args([BODY.to_string(), TRIES.to_string()])
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if std::env::var_os("CI").is_none() => {
            println!("no node ({e}): the fetch half of this test is skipped");
            return None;
        }
        Err(e) => panic!(
            "node is needed in CI ({e}): Debian's `nodejs` package (scripts/install-test-deps installs it)"
        ),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the script's JSON line"))
}

/// Sends a whole request (head and 11 MiB body) before reading anything,
/// as a plain client does, then reads the answer: its status, or what went
/// wrong.
async fn raw_post(service: &PackService, head: &Request) -> Result<u16, String> {
    let mut stream = tokio::net::TcpStream::connect(service.addr())
        .await
        .map_err(|e| e.to_string())?;
    let mut bytes = head.head_bytes();
    bytes.resize(bytes.len() + BODY, b' ');
    let written = stream.write_all(&bytes).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer)).await;
    let status = std::str::from_utf8(&answer)
        .ok()
        .and_then(|text| text.split(' ').nth(1))
        .and_then(|code| code.parse().ok());
    match (status, written, read) {
        (Some(status), _, _) => Ok(status),
        (None, Err(e), _) => Err(format!("write: {}", e.kind())),
        (None, _, Ok(Err(e))) => Err(format!("read: {}", e.kind())),
        (None, _, _) => Err("no answer".to_owned()),
    }
}

fn head(token: &str, content_type: &str) -> Request {
    Request::post("/v1/invoke")
        .token(token)
        .header("content-type", content_type)
        .header("content-length", &BODY.to_string())
}

/// Runs every client against `service` for one early answer: `want` seen
/// 20 times out of 20 by fetch and by a raw client.
async fn every_client_sees(service: &PackService, token: &str, content_type: &str, want: u16) {
    let mut raw = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..TRIES {
        let key = match raw_post(service, &head(token, content_type)).await {
            Ok(status) => status.to_string(),
            Err(e) => e,
        };
        *raw.entry(key).or_default() += 1;
    }
    let fetched = node_fetch(service, token, content_type);
    println!("{want}: raw client {raw:?}; fetch {fetched:?}");
    assert_eq!(
        raw.get(&want.to_string()),
        Some(&TRIES),
        "raw client: {raw:?}"
    );
    if let Some(fetched) = fetched {
        assert_eq!(
            fetched["statuses"][want.to_string()].as_u64(),
            Some(TRIES as u64),
            "fetch: {fetched}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_answers_reach_fetch_and_raw_clients_every_time() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    let token = service.token().to_owned();
    every_client_sees(&service, &token, "application/json", 413).await;
    every_client_sees(&service, "wrong-token", "application/json", 401).await;
    every_client_sees(&service, &token, "text/plain", 415).await;
    // Not ready: a required variable is missing (strict env check).
    let missing = PackService::start_edited(
        pack_bin(),
        &bins::stress_pack_dir(),
        &ServiceOptions::default(),
        |index| index["env"] = serde_json::json!({"required": ["STRESS_MISSING"], "optional": []}),
    );
    let token = missing.token().to_owned();
    every_client_sees(&missing, &token, "application/json", 503).await;
}

/// A declared 10 GB body is still refused at once, and the service reads
/// a bounded number of its bytes before it closes the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_10_gb_body_is_refused_at_once_with_bounded_reading() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    let stream = tokio::net::TcpStream::connect(service.addr())
        .await
        .expect("connect");
    let (mut read, mut write) = stream.into_split();
    let request = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .header("content-length", "10000000000");
    let started = Instant::now();
    write
        .write_all(&request.head_bytes())
        .await
        .expect("send the head");
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let mut answered = None;
        loop {
            match tokio::time::timeout(Duration::from_secs(30), read.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {
                    got.extend_from_slice(&buf[..n]);
                    if answered.is_none() && got.windows(4).any(|w| w == b"\r\n\r\n") {
                        answered = Some(Instant::now());
                    }
                }
                _ => return (got, answered, Instant::now()),
            }
        }
    });
    // Keep sending until the service closes, for at most 30 s.
    let chunk = vec![b' '; 256 * 1024];
    let mut sent = 0u64;
    while started.elapsed() < Duration::from_secs(30) {
        match write.write_all(&chunk).await {
            Ok(()) => sent += chunk.len() as u64,
            Err(_) => break,
        }
    }
    let (got, answered, closed) = reader.await.expect("reader");
    let text = String::from_utf8_lossy(&got);
    let answered = answered.map(|at| at.duration_since(started));
    let closed = closed.duration_since(started);
    println!(
        "answered after {answered:?}; closed after {closed:?}; {} MiB sent before the close",
        sent >> 20
    );
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    assert!(
        answered.is_some_and(|t| t < Duration::from_millis(500)),
        "{answered:?}"
    );
    assert!(closed < Duration::from_secs(15), "{closed:?}");
    assert!(sent < 200 << 20, "{} MiB sent", sent >> 20);
}
