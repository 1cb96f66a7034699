//! The dev runtime's tool-files store under hostile use: tokens confined
//! to their call and run, names stored as labels only, and SIGKILL during
//! uploads leaving a consistent store that starts again.

use std::path::Path;

use kindgi_reliability::RuntimeProcess;
use kindgi_reliability::bins::kindgi_bin;
use kindgi_reliability::http::Request;
use kindgi_reliability::runtime::check_store;
use kindgi_reliability::scenarios::files_crash::{self, CrashPlan};
use serde_json::{Value, json};

use crate::common::heavy;

fn token(call: &Value) -> String {
    call["toolFiles"]["token"]
        .as_str()
        .expect("a files token")
        .to_owned()
}

async fn open(rt: &RuntimeProcess, run: &str, tenant: &str, store: bool, read: bool) -> Value {
    rt.open_call(&json!({
        "runId": run, "tenantId": tenant, "toolId": "stress.store",
        "store": store, "read": read, "deadlineMs": 600_000
    }))
    .await
}

/// Every path under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(
                path.strip_prefix(dir)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn a_token_reaches_only_its_own_call_and_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = RuntimeProcess::start(&kindgi_bin(), dir.path(), &[]);
    let a = open(&rt, "run-a", "t1", true, true).await;
    let b = open(&rt, "run-b", "t1", true, true).await;
    let other_tenant = open(&rt, "run-c", "t2", true, true).await;
    let (ta, tb, tc) = (token(&a), token(&b), token(&other_tenant));
    // Headers that name another run or call change nothing: the token
    // alone says where a file goes.
    let stored = rt
        .send(
            Request::post("/v1/tool-files")
                .header("authorization", &format!("Bearer {ta}"))
                .header("content-type", "text/plain")
                .header("kindgi-run-id", "run-b")
                .header("kindgi-tenant-id", "t2")
                .header("x-call-id", b["callId"].as_str().unwrap_or_default())
                .body(b"file of run a".to_vec()),
        )
        .await;
    assert_eq!(stored.status, 200, "{}", stored.text());
    let fa = stored.json_or_null()["file"]["artifactId"]
        .as_str()
        .expect("artifactId")
        .to_owned();
    let fb = rt
        .store(&tb, b"file of run b", "text/plain", None)
        .await
        .json_or_null()["file"]["artifactId"]
        .as_str()
        .expect("artifactId")
        .to_owned();
    // Own files read; others' are `rule`, same tenant or not.
    assert_eq!(rt.read(&ta, &fa).await.body, b"file of run a");
    for (tok, file) in [(&tb, &fa), (&ta, &fb), (&tc, &fa), (&tc, &fb)] {
        let read = rt.read(tok, file).await;
        assert_eq!(read.status, 200);
        assert_eq!(
            read.json_or_null(),
            json!({"notRead": "rule"}),
            "{}",
            read.text()
        );
    }
    // The record is run a's, whatever the headers said.
    rt.kill();
    let db = rusqlite::Connection::open(dir.path().join("kindgi.db")).expect("db");
    let (run, tenant): (String, String) = db
        .query_row(
            "SELECT run_id, tenant_id FROM files WHERE artifact_id = ?1",
            [&fa],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("record");
    assert_eq!((run.as_str(), tenant.as_str()), ("run-a", "t1"));
    drop(db);
    let rt = RuntimeProcess::start(&kindgi_bin(), dir.path(), &[]);
    // A token is its id and its secret: mixing two tokens' halves, or
    // changing one character, matches nothing.
    let (a_id, a_secret) = ta.rsplit_once('_').expect("id_secret");
    let (b_id, b_secret) = tb.rsplit_once('_').expect("id_secret");
    let mut flipped = ta.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'a' { b'b' } else { b'a' };
    let flipped = String::from_utf8(flipped).expect("ascii");
    for forged in [
        format!("{a_id}_{b_secret}"),
        format!("{b_id}_{a_secret}"),
        flipped,
        a_id.to_owned(),
        String::new(),
        "kgi_tf_".to_owned(),
        format!("{ta} {ta}"),
    ] {
        let store = rt.store(&forged, b"forged", "text/plain", None).await;
        assert_eq!(store.status, 401, "store with {forged:?}: {}", store.text());
        let read = rt.read(&forged, &fa).await;
        assert_eq!(read.status, 401, "read with {forged:?}: {}", read.text());
    }
    // A read-only token can't store; a store-only one can't read.
    let read_only = token(&open(&rt, "run-a", "t1", false, true).await);
    let store_only = token(&open(&rt, "run-a", "t1", true, false).await);
    assert_eq!(
        rt.store(&read_only, b"x", "text/plain", None).await.status,
        401
    );
    assert_eq!(rt.read(&store_only, &fa).await.status, 401);
    // Ids that look like paths find nothing.
    for id in [
        "..%2F..%2Fkindgi.db",
        "%2E%2E",
        "..",
        "blobs",
        "%00",
        "art_%2F..%2F",
    ] {
        let read = rt.read(&ta, id).await;
        assert!(
            read.status == 404 || read.json_or_null() == json!({"notRead": "rule"}),
            "read {id}: {} {}",
            read.status,
            read.text()
        );
    }
    // When run a ends, its tokens close.
    let ended = rt
        .send(
            Request::post("/v1/dev/runs/run-a/end")
                .header(
                    "authorization",
                    &format!("Bearer {}", kindgi_reliability::runtime::ADMIN_TOKEN),
                )
                .body(Vec::new()),
        )
        .await;
    assert_eq!(ended.status, 200, "{}", ended.text());
    let closed = rt.read(&ta, &fa).await;
    assert_eq!(closed.status, 403, "{}", closed.text());
    assert_eq!(
        closed.json_or_null()["error"]["code"],
        "tool-file-token-closed"
    );
}

#[tokio::test]
async fn hostile_names_are_stored_as_labels_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = RuntimeProcess::start(&kindgi_bin(), dir.path(), &[]);
    let before = tree(dir.path());
    let tok = token(&open(&rt, "run-names", "t1", true, true).await);
    let long = "n".repeat(10 * 1024);
    let names: Vec<(String, String)> = vec![
        (
            "../../../../etc/passwd".into(),
            kindgi::protocol::percent::encode_component("../../../../etc/passwd"),
        ),
        (
            "..\\..\\boot.ini".into(),
            kindgi::protocol::percent::encode_component("..\\..\\boot.ini"),
        ),
        (
            "/absolute/path".into(),
            kindgi::protocol::percent::encode_component("/absolute/path"),
        ),
        ("nul\0inside.txt".into(), "nul%00inside.txt".into()),
        ("\0".into(), "%00".into()),
        (
            "line\r\nX-Injected: yes".into(),
            kindgi::protocol::percent::encode_component("line\r\nX-Injected: yes"),
        ),
        (long.clone(), long.clone()),
        (
            "é".repeat(3000),
            kindgi::protocol::percent::encode_component(&"é".repeat(3000)),
        ),
        ("%2e%2e%2f".into(), "%252e%252e%252f".into()),
        (
            "raw ../ sent unencoded".into(),
            "raw ../ sent unencoded".into(),
        ),
    ];
    for (i, (name, header)) in names.iter().enumerate() {
        let bytes = format!("file {i}\n");
        let answer = rt
            .store(&tok, bytes.as_bytes(), "text/plain", Some(header))
            .await;
        assert_eq!(answer.status, 200, "{name:?}: {}", answer.text());
        let file = &answer.json_or_null()["file"];
        assert_eq!(file["name"], json!(name), "the name comes back exactly");
        let id = file["artifactId"].as_str().expect("artifactId");
        assert_eq!(rt.read(&tok, id).await.body, bytes.as_bytes());
    }
    // Not UTF-8 once decoded: 400, nothing stored.
    for bad in ["%FF", "%C3", "a%ED%A0%80b"] {
        let answer = rt.store(&tok, b"bad name", "text/plain", Some(bad)).await;
        assert_eq!(answer.status, 400, "{bad}: {}", answer.text());
        assert_eq!(answer.json_or_null()["error"]["code"], "bad-input");
    }
    rt.kill();
    // Nothing was written outside the store's own layout.
    let after = tree(dir.path());
    let unexpected: Vec<&String> = after
        .iter()
        .filter(|p| !before.contains(p))
        .filter(|p| {
            !(p.starts_with("blobs/") || p.starts_with("kindgi.db") || p.starts_with("tmp"))
        })
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
    for path in after.iter().filter(|p| p.starts_with("blobs/")) {
        let parts: Vec<&str> = path.split('/').collect();
        assert!(parts.len() <= 3, "{path}");
        if let Some(name) = parts.get(2) {
            assert!(
                name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()),
                "{path}"
            );
        }
    }
    assert!(check_store(dir.path()).expect("store").is_consistent());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_uploads_leaves_a_consistent_store_that_restarts() {
    let _heavy = heavy().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let report = files_crash::run(&kindgi_bin(), dir.path(), &CrashPlan::default()).await;
    println!("{report:#?}");
    assert!(report.is_clean(), "{report:#?}");
    let stored: usize = report.cycles.iter().map(|c| c.stored).sum();
    let cut: usize = report.cycles.iter().map(|c| c.cut).sum();
    assert!(stored > 20, "uploads were stored: {report:#?}");
    assert!(cut > 0, "the kill cut uploads in flight: {report:#?}");
}

/// A flood without a credential — no token, a malformed one, a garbage
/// wait link — from the same local address as every client: it uses up
/// its own budget only, and a valid token's store and a valid wait link's
/// answer still go through. A token past its own budget is refused.
#[tokio::test]
async fn a_flood_without_a_credential_locks_no_valid_token_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = RuntimeProcess::start(&kindgi_bin(), dir.path(), &["--rate-limit", "50"]);
    let call = open(&rt, "run-flood", "t1", true, false).await;
    let valid = token(&call);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..60 {
        let status = match i % 3 {
            0 => {
                rt.send(Request::post("/v1/tool-files").body(b"x".to_vec()))
                    .await
                    .status
            }
            1 => {
                rt.store("kgi_tf_not-a-token", b"x", "text/plain", None)
                    .await
                    .status
            }
            _ => {
                rt.send(Request::post("/v1/waits/garbage").json(&json!({})))
                    .await
                    .status
            }
        };
        *statuses.entry(status).or_default() += 1;
    }
    // The first 50 refused for what they are, the rest for the flood.
    assert_eq!(statuses.get(&429), Some(&10), "{statuses:?}");
    let flooded = rt.store("", b"x", "text/plain", None).await;
    assert_eq!(flooded.status, 429, "{}", flooded.text());
    assert_eq!(
        flooded.json_or_null()["error"]["message"],
        "Too many requests with this credential, or from this client without one; nothing was stored"
    );
    // The valid token: its own budget.
    let stored = rt
        .store(&valid, b"after the flood", "text/plain", None)
        .await;
    assert_eq!(stored.status, 200, "{}", stored.text());
    for _ in 0..49 {
        let _ = rt.store(&valid, b"again", "text/plain", None).await;
    }
    let past = rt.store(&valid, b"one too many", "text/plain", None).await;
    assert_eq!(past.status, 429, "{}", past.text());
    assert!(past.header("retry-after").is_some());
}
