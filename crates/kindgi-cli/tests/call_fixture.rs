//! End to end: `kindgi call` through the pack client and the dev runtime
//! against the real conformance fixture pack service — a tool that stores
//! a file, and one that pauses and is completed through its wait link.

mod fixture;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kindgi_test_kit::{Listen, ListeningProcess, Stream};
use serde_json::{Value, json};

const KINDGI: &str = env!("CARGO_BIN_EXE_kindgi");
const PNG: &str = "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082";

/// The fixture pack's binary, built if need be.
fn fixture_binary() -> PathBuf {
    fixture::fixture_binary(KINDGI)
}

/// The fixture's service on a free port.
fn start_service(binary: &Path, index: &Path) -> ListeningProcess {
    let mut command = Command::new(binary);
    command
        .args(["serve", "--index"])
        .arg(index)
        .args(["--host", "127.0.0.1"])
        .env("KINDGI_PACK_SERVICE_TOKEN", "e2e-token")
        .env("PORT", "0")
        .env("KINDGI_LOG_FORMAT", "json");
    ListeningProcess::start(&mut command, Listen::on(Stream::Stderr)).expect("a listening record")
}

/// The fixture pack, indexed into a folder of its own and served; the
/// folder `kindgi call` keeps its data in.
struct Served {
    dir: tempfile::TempDir,
    index: PathBuf,
    service: ListeningProcess,
    data: PathBuf,
}

fn served() -> Served {
    let binary = fixture_binary();
    let dir = tempfile::tempdir().expect("temp dir");
    let index = dir.path().join("index.json");
    let indexed = Command::new(&binary)
        .args(["index", "--pack-dir"])
        .arg(fixture::fixture_dir())
        .arg("--output")
        .arg(&index)
        .output()
        .expect("indexed");
    assert!(indexed.status.success(), "{indexed:?}");
    let service = start_service(&binary, &index);
    let data = dir.path().join("data");
    Served {
        dir,
        index,
        service,
        data,
    }
}

fn call(
    tool: &str,
    input: &Value,
    service: &ListeningProcess,
    index: &Path,
    data: &Path,
) -> Command {
    let mut command = Command::new(KINDGI);
    command
        .args(["call", tool, "--input", &input.to_string()])
        .args(["--service", &service.url(), "--token", "e2e-token"])
        .arg("--index")
        .arg(index)
        .arg("--data-dir")
        .arg(data);
    command
}

#[test]
fn kindgi_call_stores_a_file_and_waits_out_a_pause() {
    let Served {
        dir: _dir,
        index,
        service,
        data,
    } = served();

    // A tool that stores a file: the dev runtime issues its files token.
    let out = call(
        "conformance.files",
        &json!({"storeHex": PNG, "name": "dot.png", "contentType": "image/png"}),
        &service,
        &index,
        &data,
    )
    .output()
    .expect("kindgi call runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let file = &printed["files"][0];
    assert_eq!(file["type"], "kindgi.file");
    assert_eq!(file["name"], "dot.png");
    assert_eq!(file["contentType"], "image/png");
    assert_eq!(file["size"], 68);

    // A tool that pauses: complete it through the link it prints.
    let mut child = call(
        "conformance.pause",
        &json!({"name": "approval"}),
        &service,
        &index,
        &data,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("kindgi call runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let started = Instant::now();
    let link = loop {
        assert!(started.elapsed() < Duration::from_secs(20), "no wait line");
        let line = lines.next().expect("a progress line").expect("a line");
        if let Some((_, url)) = line.split_once("POST the output as JSON to ") {
            break url.trim().to_owned();
        }
    };
    let status = post_json(&link, r#"{"approved":true}"#);
    assert_eq!(status, 200);
    let out = child.wait_with_output().expect("kindgi call ends");
    assert!(out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(printed, json!({"approved": true}));
}

/// POSTs a JSON body with no Authorization, the way another system
/// answers a wait link, and returns the status.
fn post_json(url: &str, body: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    })
}

/// A tool id that isn't there, mistyped or without its pack's prefix: the
/// message names the nearest ids, from the local index and from the
/// service's list.
#[test]
fn an_unknown_tool_suggests_the_nearest_ids() {
    let Served {
        dir,
        index,
        service,
        data,
    } = served();
    let out = call("conformance.ecoh", &json!({}), &service, &index, &data)
        .output()
        .expect("kindgi call runs");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "kindgi: The pack index {} has no tool \"conformance.ecoh\"; did you mean \"conformance.echo\"?\n",
            index.display()
        )
    );
    // Without a local index, the service's list of tools.
    let out = Command::new(KINDGI)
        .args(["call", "echo", "--input", "{}"])
        .args(["--service", &service.url(), "--token", "e2e-token"])
        .arg("--data-dir")
        .arg(&data)
        .current_dir(dir.path().join("..").as_path())
        .output()
        .expect("kindgi call runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "kindgi: warning: the pack service at {} doesn't list tool \"echo\"; did you mean \"conformance.echo\"?\n",
            service.url()
        )),
        "{stderr}"
    );
}

/// `kindgi call --http2`: the same call over h2c with prior knowledge; an
/// HTTP/1.1-only server can't answer it, which shows it is HTTP/2.
#[test]
fn kindgi_call_speaks_h2c_with_http2() {
    let Served {
        dir: _dir,
        index,
        service,
        data,
    } = served();
    let out = call(
        "conformance.echo",
        &json!({"message": "h2"}),
        &service,
        &index,
        &data,
    )
    .arg("--http2")
    .output()
    .expect("kindgi call runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(printed, json!({"message": "h2"}));

    // An HTTP/1.1-only listener: the h2c preface gets no HTTP/2 answer.
    let http1_only = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", http1_only.local_addr().expect("addr"));
    std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        for stream in http1_only.incoming().take(4).flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let out = Command::new(KINDGI)
        .args(["call", "conformance.echo", "--input", "{}", "--http2"])
        .args(["--service", &url, "--token", "e2e-token"])
        .arg("--data-dir")
        .arg(&data)
        .output()
        .expect("kindgi call runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
