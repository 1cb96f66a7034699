//! The deploy shape (`docs/deploy.md`): the pack binary and its index, alone
//! in an empty folder with a bare environment, answer calls and stop cleanly
//! on SIGTERM — no source tree, no `Cargo.toml`, no toolchain needed.
//!
//! By default this runs the binary cargo built for this test run (the dev
//! profile): a release build of the whole dependency tree (SQLite's C code,
//! tokio, hyper, reqwest, thin LTO) takes about five minutes on a 2-core CI
//! machine, and the binary's behaviour doesn't depend on the profile. To
//! check the release binary itself, build it and point the test at it:
//!
//! ```sh
//! cargo build --release -p support-desk
//! SUPPORT_DESK_TEST_BINARY=target/release/support-desk cargo test -p support-desk --test deploy_shape
//! ```

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use kindgi_test_kit::{Listen, ListeningProcess, Stream};
use serde_json::{Value, json};

const TOKEN: &str = "deploy-test-token";

/// The binary under test: `SUPPORT_DESK_TEST_BINARY` (relative to the
/// workspace root), else the one cargo built for this test run.
fn binary() -> PathBuf {
    match std::env::var_os("SUPPORT_DESK_TEST_BINARY") {
        Some(path) if !path.is_empty() => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_support-desk")),
    }
}

async fn invoke(url: &str, tool: &str, input: Value, key: &str) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/invoke"))
        .header("kindgi-pack-token", TOKEN)
        .json(&json!({
            "v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input,
            "ctx": {"tenantId": "acme", "runId": "run-1", "idempotencyKey": key}
        }))
        .send()
        .await
        .expect("invoke");
    assert_eq!(response.status(), 200);
    response.json().await.expect("JSON answer")
}

#[tokio::test]
async fn the_binary_and_its_index_alone_answer_calls() {
    let binary = binary();
    assert!(binary.is_file(), "no binary at {}", binary.display());
    let app = tempfile::tempdir().expect("temp dir");
    let deployed = app.path().join("support-desk");
    std::fs::copy(&binary, &deployed).expect("copy the binary");

    // The index is made at build time, next to the binary.
    let indexed = std::process::Command::new(&binary)
        .args([
            "index",
            "--pack-dir",
            env!("CARGO_MANIFEST_DIR"),
            "--output",
        ])
        .arg(app.path().join("index.json"))
        .args(["--artifact-version", "1.0.0+test", "--json"])
        .output()
        .expect("index");
    assert!(indexed.status.success(), "{indexed:?}");
    let mut names: Vec<String> = std::fs::read_dir(app.path())
        .expect("read dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["index.json", "support-desk"]);

    let mut command = std::process::Command::new(&deployed);
    command
        .args(["serve", "--host", "127.0.0.1"])
        .current_dir(app.path())
        .env_clear()
        .env("KINDGI_PACK_SERVICE_TOKEN", TOKEN)
        .env("KINDGI_PACK_INDEX", "index.json")
        .env("PORT", "0")
        .env("KINDGI_LOG_FORMAT", "json");
    let listen = Listen::on(Stream::Stderr).timeout(Duration::from_secs(30));
    let mut service = ListeningProcess::start(&mut command, listen).expect("listening in time");
    let before_listening = service.lines_to_listening(Stream::Stderr);
    for line in &before_listening {
        let _: Value = serde_json::from_str(line).expect("a JSON log record");
    }
    assert_eq!(service.record()["artifactVersion"], "1.0.0+test");
    let url = service.url();

    let ready = reqwest::get(format!("{url}/readyz")).await.expect("readyz");
    assert_eq!(ready.status(), 200);
    let reply = invoke(
        &url,
        "support.canned-reply",
        json!({"customerName": "Ana", "topic": "shipping"}),
        "k0",
    )
    .await;
    assert!(
        reply["output"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("your delivery")),
        "{reply}"
    );
    let ticket =
        json!({"customerEmail": "ana@example.com", "subject": "Late", "body": "Where is it?"});
    let logged = invoke(&url, "support.log-ticket", ticket.clone(), "k1").await;
    assert_eq!(
        logged["output"],
        json!({"ticketId": "T-000001", "created": true})
    );
    let again = invoke(&url, "support.log-ticket", ticket, "k1").await;
    assert_eq!(again["output"]["created"], false);
    assert!(
        app.path().join("support-desk.db").is_file(),
        "SQLite wrote in the working folder"
    );

    // SIGTERM: drain, `stopped`, exit 0.
    service.sigterm();
    let status = service
        .wait_exit(Duration::from_secs(15))
        .expect("exits in time");
    let mut kinds = Vec::new();
    let mut logged_lines = Vec::new();
    for line in service
        .stderr_lines()
        .into_iter()
        .skip(before_listening.len())
    {
        if let Ok(record) = serde_json::from_str::<Value>(&line) {
            kinds.extend(record["kind"].as_str().map(str::to_owned));
            if record["message"] == "ticket logged" {
                logged_lines.push(line);
            }
        }
    }
    // The handler's `tracing::info!` is a record of the service's own
    // format (subsystem `pack.tool`, a handler's during its call), with
    // the call's ids and the pack's, once per call.
    assert_eq!(logged_lines.len(), 2, "{logged_lines:?}");
    let (time, rest) = logged_lines[0]
        .split_once(r#"","level""#)
        .expect("a time first");
    assert!(
        time.starts_with(r#"{"time":"20"#) && time.ends_with('Z'),
        "{time}"
    );
    assert_eq!(
        rest,
        r#":"info","severity":"INFO","subsystem":"pack.tool","message":"ticket logged","tenantId":"acme","runId":"run-1","toolId":"support.log-ticket","ticket":"T-000001","created":true,"packId":"support","artifactVersion":"1.0.0+test"}"#
    );
    assert!(status.success(), "{status}");
    assert!(
        kinds.ends_with(&["draining".to_owned(), "stopped".to_owned()]),
        "{kinds:?}"
    );
}
