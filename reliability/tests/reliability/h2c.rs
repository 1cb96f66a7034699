//! The contract over HTTP/2 with prior knowledge (h2c) on the service's own
//! port, with real independent clients: Node's `http2` module (many streams
//! on one connection) and curl `--http2-prior-knowledge`.

use std::path::Path;
use std::time::Duration;

use kindgi_reliability::{PackService, ServiceOptions};
use serde_json::{Value, json};

use crate::common::start;

const WAIT: Duration = Duration::from_secs(30);

/// Sends `requests` at once on one h2c connection with Node's `http2`
/// (`reliability/node/h2c.mjs`): what each got, in order.
fn node_h2c(service: &PackService, requests: &Value) -> Vec<Value> {
    use std::io::Write as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/h2c.mjs");
    let mut child = std::process::Command::new("node")
        .arg(script)
        .arg(format!("http://{}", service.addr()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("node could not run ({e}): Debian's `nodejs` package (scripts/install-test-deps installs it)")
        });
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(requests.to_string().as_bytes())
        .expect("requests written");
    let out = child.wait_with_output().expect("node ran");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON line")
}

fn invoke(token: &str, tool: &str, input: Value, run: &str) -> Value {
    json!({
        "method": "POST", "path": "/v1/invoke",
        "headers": {"kindgi-pack-token": token, "content-type": "application/json"},
        "body": json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input,
                       "ctx": {"tenantId": "t1", "runId": run}}).to_string(),
    })
}

/// `n` calls of `stress.sleep` for `ms`, in runs `{run}-0` to `{run}-{n-1}`.
fn sleeps(token: &str, n: usize, ms: u64, run: &str) -> Value {
    (0..n)
        .map(|i| {
            invoke(
                token,
                "stress.sleep",
                json!({"ms": ms}),
                &format!("{run}-{i}"),
            )
        })
        .collect()
}

fn body(answer: &Value) -> Value {
    serde_json::from_str(answer["body"].as_str().unwrap_or_default()).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_of_the_contract_holds_over_h2c() {
    let service = start(&ServiceOptions::default());
    let token = service.token().to_owned();
    let mut sleep_with_deadline = invoke(&token, "stress.sleep", json!({"ms": 5000}), "r-deadline");
    sleep_with_deadline["headers"]["kindgi-timeout-ms"] = json!("100");
    let mut reset = invoke(&token, "stress.sleep", json!({"ms": 10_000}), "r-reset");
    reset["resetAfterMs"] = json!(300);
    let requests = json!([
        {"path": "/healthz"},
        {"path": "/readyz"},
        {"path": "/v1/info", "headers": {"kindgi-pack-token": token}},
        {"path": "/nowhere"},
        {"path": "/v1/invoke"},
        {"method": "POST", "path": "/v1/invoke", "headers": {"content-type": "application/json"}, "body": "{}"},
        {"method": "POST", "path": "/v1/invoke", "headers": {"kindgi-pack-token": token, "content-type": "text/plain"}, "body": "{}"},
        {"method": "POST", "path": "/v1/invoke", "headers": {"kindgi-pack-token": token, "content-type": "application/json", "content-length": "11000000"}, "zeros": 11_000_000},
        {"method": "POST", "path": "/v1/invoke", "headers": {"kindgi-pack-token": token, "content-type": "application/json"}, "zeros": 10 * 1024 * 1024 + 1},
        invoke(&token, "stress.sleep", json!({"ms": 1}), "r-ok"),
        sleep_with_deadline,
        reset,
    ]);
    let got = node_h2c(&service, &requests);
    let status = |i: usize| got[i]["status"].as_u64().unwrap_or_default();
    assert_eq!(status(0), 200, "{}", got[0]);
    assert_eq!(body(&got[0]), json!({"status": "ok"}));
    assert_eq!(status(1), 200, "{}", got[1]);
    assert_eq!(status(2), 200, "{}", got[2]);
    assert_eq!(body(&got[2])["packId"], "stress");
    assert_eq!(status(3), 404, "{}", got[3]);
    assert_eq!(status(4), 405, "{}", got[4]);
    assert_eq!(status(5), 401, "{}", got[5]);
    assert_eq!(status(6), 415, "{}", got[6]);
    assert_eq!(status(7), 413, "declared: {}", got[7]);
    assert_eq!(status(8), 413, "streamed: {}", got[8]);
    assert_eq!(body(&got[8]), json!({"error": "Request body too large"}));
    assert_eq!(status(9), 200, "{}", got[9]);
    assert_eq!(
        body(&got[9]),
        json!({"v": 2, "kind": "result", "output": {"slept": 1}})
    );
    assert!(
        got[9]["headers"]["kindgi-duration-ms"].is_string(),
        "{}",
        got[9]
    );
    assert!(
        got[9]["headers"]["kindgi-artifact-version"].is_string(),
        "{}",
        got[9]
    );
    assert_eq!(status(10), 200, "{}", got[10]);
    assert_eq!(body(&got[10])["code"], "deadline-exceeded");
    assert!(got[11]["error"].is_string(), "reset: {}", got[11]);

    // Every call has its record; the reset one ended cancelled.
    let recorded = |records: &[Value]| {
        ["r-ok", "r-deadline", "r-reset"].iter().all(|run| {
            records
                .iter()
                .any(|r| r["kind"] == "call" && r["runId"] == *run)
        })
    };
    assert!(tokio::task::block_in_place(
        || service.wait_records(recorded, WAIT)
    ));
    let records = service.records();
    let outcome = |run: &str| {
        records
            .iter()
            .find(|r| r["kind"] == "call" && r["runId"] == run)
            .map(|r| r["outcome"].clone())
    };
    assert_eq!(outcome("r-ok"), Some(json!("ok")));
    assert_eq!(outcome("r-deadline"), Some(json!("deadline-exceeded")));
    assert_eq!(outcome("r-reset"), Some(json!("cancelled")));
}

/// The concurrency cap counts streams as it counts requests: past it, 503
/// `overloaded` with `Retry-After: 1` on that stream, the others served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_concurrency_cap_counts_streams() {
    let service = start(&ServiceOptions::default().max_concurrency(2));
    let got = node_h2c(&service, &sleeps(service.token(), 4, 1500, "r"));
    let mut served = 0;
    let mut refused = 0;
    for answer in &got {
        match answer["status"].as_u64() {
            Some(200) => served += 1,
            Some(503) => {
                refused += 1;
                assert_eq!(body(answer), json!({"error": "overloaded"}));
                assert_eq!(answer["headers"]["retry-after"], "1");
            }
            _ => panic!("{answer}"),
        }
    }
    assert_eq!((served, refused), (2, 2), "{got:?}");
}

/// The pinned tenant over h2c: 421 for another tenant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_service_refuses_another_tenant_over_h2c() {
    let service = start(&ServiceOptions::default().env("KINDGI_PACK_TENANT_ID", "t2"));
    let token = service.token().to_owned();
    let mut call = invoke(&token, "stress.sleep", json!({"ms": 1}), "r");
    call["headers"]["kindgi-tenant-id"] = json!("t1");
    let got = node_h2c(&service, &json!([call]));
    assert_eq!(got[0]["status"], 421, "{}", got[0]);
    assert_eq!(body(&got[0]), json!({"code": "pack-tenant-mismatch"}));
}

/// curl, an independent client, with prior knowledge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_calls_with_prior_knowledge() {
    let service = start(&ServiceOptions::default());
    let out = std::process::Command::new("curl")
        .args(["-s", "--http2-prior-knowledge", "-o", "-", "-w", "\n%{http_version} %{http_code}"])
        .arg(format!("http://{}/v1/invoke", service.addr()))
        .args(["-H", &format!("kindgi-pack-token: {}", service.token())])
        .args(["-H", "content-type: application/json"])
        .args(["-d", r#"{"v":2,"kind":"invoke","tool":{"id":"stress.sleep"},"input":{"ms":1},"ctx":{"tenantId":"t1","runId":"r"}}"#])
        .output()
        .unwrap_or_else(|e| panic!("curl could not run ({e}): Debian's `curl` package"));
    let text = String::from_utf8_lossy(&out.stdout);
    let (answer, version) = text.rsplit_once('\n').expect("the answer and its status");
    assert_eq!(version, "2 200");
    assert_eq!(
        serde_json::from_str::<Value>(answer).expect("JSON"),
        json!({"v": 2, "kind": "result", "output": {"slept": 1}})
    );
}

/// SIGTERM while 4 h2c connections keep 8 calls each in flight: the
/// service sends GOAWAY and finishes its streams; every call answered 200
/// ran exactly once, every other one (503 `draining`, a refused stream, a
/// session gone away) never ran, and none ran without its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_over_h2c_loses_and_doubles_nothing() {
    let _heavy = crate::common::heavy().await;
    let mut service = start(&ServiceOptions::default().max_concurrency(64));
    let file = service.scratch().join("ran.txt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/h2c-drain.mjs");
    let client = std::process::Command::new("node")
        .arg(script)
        .arg(format!("http://{}", service.addr()))
        .arg(service.token())
        .arg(&file)
        .args(["100000", "4"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node could not run ({e}): Debian's `nodejs` package"));
    // Under load: some calls have run.
    let ran = |n: usize| {
        std::fs::read_to_string(&file)
            .map(|text| text.lines().count() >= n)
            .unwrap_or(false)
    };
    let started = std::time::Instant::now();
    while !ran(200) && started.elapsed() < WAIT {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(ran(200), "calls ran before the drain");
    service.sigterm();
    let status = tokio::task::block_in_place(|| service.wait_exit(Duration::from_secs(15)));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let out = tokio::task::block_in_place(|| client.wait_with_output()).expect("node ran");
    let seen: serde_json::Map<String, Value> =
        serde_json::from_slice(&out.stdout).expect("one JSON line");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut counts = std::collections::HashMap::<&str, usize>::new();
    for line in text.lines() {
        *counts.entry(line).or_default() += 1;
    }
    let (mut ok, mut refused) = (0, 0);
    for (id, outcome) in &seen {
        let times = counts.get(id.as_str()).copied().unwrap_or(0);
        match outcome["status"].as_u64() {
            Some(200) => {
                ok += 1;
                assert_eq!(times, 1, "{id} answered 200 ran {times} times");
            }
            Some(503) => {
                refused += 1;
                assert_eq!(body(outcome), json!({"error": "draining"}), "{id}");
                assert_eq!(times, 0, "{id} refused draining ran");
            }
            _ => {
                refused += 1;
                assert_eq!(times, 0, "{id} ran without its answer: {outcome}");
            }
        }
    }
    assert!(counts.values().all(|n| *n == 1), "a call ran twice");
    assert_eq!(counts.len(), ok, "every call that ran was answered");
    println!("h2c drain: {ok} answered, {refused} refused or never sent");
    assert!(ok >= 200 && refused > 0, "{ok} ok, {refused} refused");
}

/// Runs `reliability/node/h2c-attacks.mjs` with `attack` and `n`.
fn attack(service: &PackService, attack: &str, n: usize) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/h2c-attacks.mjs");
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(format!("http://{}", service.addr()))
        .arg(service.token())
        .arg(attack)
        .arg(n.to_string())
        .output()
        .unwrap_or_else(|e| panic!("node could not run ({e}): Debian's `nodejs` package"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON line")
}

/// The known HTTP/2 attacks on one connection — rapid reset, PING and
/// SETTINGS floods, a body in one-byte DATA frames — cost bounded work and
/// memory: `/healthz` on another connection answers at once after each,
/// peak RSS grows by little, no call slot is lost (a call runs after),
/// and a rapid reset is told `GOAWAY`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_attacks_cost_bounded_work_and_memory() {
    use kindgi_reliability::http;
    let _heavy = crate::common::heavy().await;
    let service = start(&ServiceOptions::default().max_concurrency(4));
    let before = service.peak_rss_kib();
    let mut report = Vec::new();
    for (name, n) in [
        ("rapid-reset", 20_000),
        ("pings", 5_000),
        ("settings", 5_000),
        ("tiny-data", 20_000),
    ] {
        let got = attack(&service, name, n);
        let asked = std::time::Instant::now();
        let healthz = http::exchange(
            service.addr(),
            &kindgi_reliability::Request::get("/healthz"),
            Duration::from_secs(10),
        )
        .await;
        let took = asked.elapsed();
        report.push(format!(
            "{name}: {got}; healthz {:?} in {took:?}",
            healthz.status()
        ));
        assert_eq!(healthz.status(), Some(200), "{}", report.join("\n"));
        assert!(took < Duration::from_secs(2), "{}", report.join("\n"));
        if name == "rapid-reset" {
            assert!(!got["goaway"].is_null(), "rapid reset told GOAWAY: {got}");
        }
        if name == "tiny-data" {
            assert_eq!(got["status"], 200, "{got}");
        }
    }
    // No call slot lost: the whole cap still runs at once.
    let got = node_h2c(&service, &sleeps(service.token(), 4, 200, "after"));
    assert!(got.iter().all(|a| a["status"] == 200), "{got:?}");
    let grew = service.peak_rss_kib().saturating_sub(before) / 1024;
    println!("{}\npeak RSS +{grew} MiB", report.join("\n"));
    assert!(grew < 64, "peak RSS +{grew} MiB");
}

/// An HTTP/2 connection that has had no request open for the header
/// timeout is told `GOAWAY` (no error) and closed, as an idle HTTP/1.1
/// connection is: idle connections don't keep their slots for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_h2c_connection_is_closed_after_the_header_timeout() {
    const TIMEOUT_MS: u64 = 1500;
    let service = start(&ServiceOptions::default().env(
        "KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS",
        &TIMEOUT_MS.to_string(),
    ));
    let got = attack(&service, "idle", 15_000);
    assert_eq!(got["status"], 200, "{got}");
    assert_eq!(got["goaway"], 0, "GOAWAY NO_ERROR: {got}");
    let closed = got["closedMs"].as_u64().unwrap_or(u64::MAX);
    assert!(
        (TIMEOUT_MS - 100..TIMEOUT_MS * 4).contains(&closed),
        "closed {closed} ms after its answer: {got}"
    );
}

/// A peer that never takes its answers (every stream's flow-control window
/// left at zero) gets their heads, and then its connection is closed: told
/// `GOAWAY` after the header timeout with nothing open, and cut one header
/// timeout later, since what it still holds is bodies it never reads. Its
/// calls' slots are back at once: the whole cap runs after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_window_stall_gives_back_its_permits_and_its_connection() {
    const TIMEOUT_MS: u64 = 1500;
    let service = start(&ServiceOptions::default().max_concurrency(4).env(
        "KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS",
        &TIMEOUT_MS.to_string(),
    ));
    let got = attack(&service, "zero-window", 20_000);
    assert_eq!(got["statuses"], json!([200, 200, 200, 200]), "{got}");
    let closed = got["closedMs"].as_u64().unwrap_or(u64::MAX);
    assert!(
        (2 * TIMEOUT_MS - 200..5 * TIMEOUT_MS).contains(&closed),
        "closed {closed} ms after its answers' heads: {got}"
    );
    let after = node_h2c(&service, &sleeps(service.token(), 4, 1, "after"));
    let statuses: Vec<&Value> = after.iter().map(|a| &a["status"]).collect();
    assert_eq!(statuses, [&json!(200); 4], "{after:?}");
}

/// A request head sent as a HEADERS frame and CONTINUATION frames without
/// end (each a complete header field) is cut off at the header list limit:
/// the service answers `GOAWAY` `ENHANCE_YOUR_CALM` and closes, having
/// read a bounded number of bytes, and keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuation_floods_end_at_the_header_list_limit() {
    use kindgi_reliability::http;
    let service = start(&ServiceOptions::default());
    for frame_size in [64, 16_384] {
        let flood = continuation_flood(service.addr(), frame_size).await;
        assert_eq!(
            flood.goaway,
            Some(0xb),
            "GOAWAY ENHANCE_YOUR_CALM for frames of {frame_size} bytes: {flood:?}"
        );
        // The service reads a header list's limit (64 KiB) and a little; the
        // client also fills the kernel's buffers on both sides of the
        // loopback (a few MiB under load). A service that read on would
        // take the whole 32 MiB.
        assert!(
            flood.written < 8 * 1024 * 1024,
            "read at most the limit's worth and the socket buffers: {flood:?}"
        );
        let healthz = http::exchange(
            service.addr(),
            &kindgi_reliability::Request::get("/healthz"),
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(healthz.status(), Some(200), "after frames of {frame_size}");
    }
}

/// What a CONTINUATION flood got.
#[derive(Debug)]
struct Flood {
    /// Bytes written before the service closed the connection (or 32 MiB).
    written: usize,
    /// The error code of the service's `GOAWAY`, if one came.
    goaway: Option<u32>,
}

/// An HTTP/2 frame: its 9-byte head and payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).expect("a frame fits");
    let mut out = len.to_be_bytes()[1..].to_vec();
    out.extend([kind, flags]);
    out.extend(stream.to_be_bytes());
    out.extend(payload);
    out
}

/// Header fields of about `size` bytes in HPACK: literals without
/// indexing, each with a new name (`x-flood-N: aaa…`), so no table helps.
fn header_block(size: usize, first: &mut u32) -> Vec<u8> {
    let mut block = Vec::with_capacity(size);
    while block.len() + 40 < size {
        let name = format!("x-flood-{first}");
        *first += 1;
        let value = "a".repeat(20);
        block.push(0x00);
        block.push(u8::try_from(name.len()).expect("short name"));
        block.extend(name.as_bytes());
        block.push(u8::try_from(value.len()).expect("short value"));
        block.extend(value.as_bytes());
    }
    block
}

/// Opens an h2c connection and sends stream 1's head as a HEADERS frame
/// and then CONTINUATION frames of `frame_size` bytes, none ending the
/// head, until the service closes the connection (or 32 MiB were sent).
async fn continuation_flood(addr: std::net::SocketAddr, frame_size: usize) -> Flood {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const HEADERS: u8 = 0x1;
    const SETTINGS: u8 = 0x4;
    const GOAWAY: u8 = 0x7;
    const CONTINUATION: u8 = 0x9;
    const END_STREAM: u8 = 0x1;
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connected");
    let (mut reader, mut writer) = stream.into_split();
    // The service's frames: the first GOAWAY's error code, or none by EOF.
    let read = tokio::spawn(async move {
        let mut seen = Vec::new();
        let mut buf = [0u8; 16_384];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => seen.extend(&buf[..n]),
            }
            let mut at = 0;
            while seen.len() >= at + 9 {
                let len = usize::from(seen[at]) << 16
                    | usize::from(seen[at + 1]) << 8
                    | usize::from(seen[at + 2]);
                if seen.len() < at + 9 + len {
                    break;
                }
                if seen[at + 3] == GOAWAY && len >= 8 {
                    let code = &seen[at + 13..at + 17];
                    return Some(u32::from_be_bytes([code[0], code[1], code[2], code[3]]));
                }
                at += 9 + len;
            }
            seen.drain(..at);
        }
    });
    let mut counter = 0;
    let mut head = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    head.extend(frame(SETTINGS, 0, 0, &[]));
    // :method POST, :scheme http, :path /v1/invoke (static table), then
    // fields without end.
    let mut first = vec![0x83, 0x86, 0x04, 0x0a];
    first.extend(b"/v1/invoke");
    first.extend(header_block(frame_size, &mut counter));
    head.extend(frame(HEADERS, END_STREAM, 1, &first));
    let mut written = 0;
    if writer.write_all(&head).await.is_ok() {
        written += head.len();
        while written < 32 * 1024 * 1024 {
            let next = frame(CONTINUATION, 0, 1, &header_block(frame_size, &mut counter));
            if writer.write_all(&next).await.is_err() {
                break;
            }
            written += next.len();
        }
    }
    let goaway = tokio::time::timeout(WAIT, read)
        .await
        .expect("the service answered or closed")
        .expect("reader ran");
    Flood { written, goaway }
}
