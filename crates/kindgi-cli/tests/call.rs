//! `kindgi call` and `kindgi info` against a fake pack service in the test.

use std::process::Stdio;
use std::time::Duration;

use kindgi_test_kit::{Reply, ScriptedServer, SeenRequest};
use serde_json::{Value, json};

/// A fake pack service's invokes.
struct Invokes(ScriptedServer);

impl Invokes {
    /// The body of each invoke so far.
    fn bodies(&self) -> Vec<Value> {
        self.0
            .seen()
            .iter()
            .filter(|request| request.line().starts_with("POST /v1/invoke"))
            .map(SeenRequest::json)
            .collect()
    }
}

/// A pack service that answers `GET /v1/info` with its info and every other
/// request with `reply(request line)`: a status and a JSON body (a 503
/// with `Retry-After: 0`). It keeps each invoke's body.
async fn scripted_pack(
    reply: impl Fn(&str) -> (u16, Value) + Send + Sync + 'static,
) -> (String, Invokes) {
    let server = ScriptedServer::start(move |request| {
        let line = request.line();
        let (status, body) = if line.starts_with("GET /v1/info") {
            (
                200,
                json!({"protocol": 2, "packId": "demo", "packVersion": "1.0.0", "artifactVersion": "1",
                   "tools": [{"id": "demo.pickup", "version": "1.0.0"}], "checks": [], "missingEnv": []}),
            )
        } else {
            reply(line)
        };
        let answer = Reply::json(status, &body);
        if status == 503 {
            answer.header("retry-after", "0")
        } else {
            answer
        }
    })
    .await;
    (server.url(), Invokes(server))
}

/// A pack service whose invokes all answer `answer`; it keeps each invoke's body.
async fn fake_pack(answer: Value) -> (String, Invokes) {
    scripted_pack(move |_| (200, answer.clone())).await
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
    let mut child = kindgi()
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
    // Its stderr, line by line as it comes, and whole once it ends.
    let stderr = child.stderr.take().expect("stderr");
    let (said, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let stderr = tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt as _;
        let mut all = String::new();
        let mut reader = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            all.push_str(&line);
            all.push('\n');
            let _ = said.send(line);
        }
        all
    });
    // The invoke carries a wait token and a files grant; answer through the link.
    let body = loop {
        if let Some(body) = seen.bodies().first().cloned() {
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
    // Once it says it waits, the pause is recorded.
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.recv())
            .await
            .expect("a line within 20 s")
            .expect("kindgi call says it waits before it ends");
        if line.starts_with("kindgi: waiting for the pickup") {
            break;
        }
    }
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
    let stderr = stderr.await.expect("stderr");
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("waiting for the pickup"), "{stderr}");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("stdout JSON");
    assert_eq!(printed, json!({"picked": true}));
}

#[tokio::test]
async fn a_result_is_printed_and_an_error_exits_1() {
    let (url, _) = fake_pack(json!({"v": 2, "kind": "result", "output": {"message": "hi"}})).await;
    let out = call_command(&url, &[]).output().await.expect("run");
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
    let out = call_command(&url, &[]).output().await.expect("run");
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

/// `kindgi call demo.pickup --input {} --service URL --token tok` and
/// `extra`, in the temporary folder.
fn call_command(url: &str, extra: &[&str]) -> tokio::process::Command {
    let mut command = kindgi();
    command
        .args(["call", "demo.pickup", "--input", "{}", "--service", url])
        .args(["--token", "tok"])
        .args(extra)
        .current_dir(std::env::temp_dir());
    command
}

/// [`call_command`]'s output.
async fn call_with(url: &str, extra: &[&str]) -> std::process::Output {
    call_command(url, extra).output().await.expect("run")
}

#[tokio::test]
async fn context_flags_reach_the_call_as_a_runtime_sends_them() {
    let (url, seen) = fake_pack(json!({"v": 2, "kind": "result", "output": {}})).await;
    let out = kindgi()
        .args([
            "call",
            "acme.refunds.issue",
            "--input",
            "{}",
            "--service",
            &url,
            "--token",
            "tok",
        ])
        .args([
            "--run",
            "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13",
            "--step",
            "agent-loop#2/dispatch-tools",
        ])
        .args(["--model-call-id", "call_0"])
        .args([
            "--secret",
            "API_KEY=sk-live-sentinel",
            "--secret",
            "OTHER=a=b",
        ])
        .args([
            "--env",
            "REGION=eu",
            "--connection",
            "crm=acme-crm:tok-sentinel",
        ])
        .args(["--settings", r#"tone={"formal":true}"#])
        .current_dir(std::env::temp_dir())
        .output()
        .await
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("sentinel"), "{stderr}");
    let body = seen.bodies()[0].clone();
    let ctx = &body["ctx"];
    assert_eq!(
        ctx["secrets"],
        json!({"API_KEY": "sk-live-sentinel", "OTHER": "a=b"})
    );
    assert_eq!(ctx["env"], json!({"REGION": "eu"}));
    assert_eq!(
        ctx["connections"],
        json!({"crm": {"connectionId": "dev-crm", "app": "acme-crm", "appName": "acme-crm",
            "accessToken": "tok-sentinel", "account": {"id": "dev", "label": "dev"}}})
    );
    assert_eq!(ctx["settings"], json!({"tone": {"formal": true}}));
    // CONTRACT §7: the key of a call a model asked for includes its call id.
    assert_eq!(
        ctx["idempotencyKey"],
        "bf055463-2cce-5e82-b31a-43d7698db52e"
    );
    assert_eq!(ctx["requestId"], "call_0");
}

#[tokio::test]
async fn bad_context_flags_are_usage_errors_that_never_show_a_secret() {
    let (url, seen) = fake_pack(json!({"v": 2, "kind": "result", "output": {}})).await;
    for (flags, message) in [
        (
            &["--secret", "sk-live-sentinel"][..],
            "--secret needs NAME=VALUE",
        ),
        (
            &["--secret", "=sk-live-sentinel"][..],
            "--secret needs NAME=VALUE",
        ),
        (
            &["--connection", "crm=sk-live-sentinel"][..],
            "--connection needs NAME=APP:TOKEN",
        ),
        (
            &["--env", "REGION"][..],
            r#"--env needs NAME=VALUE, got "REGION""#,
        ),
        (
            &["--settings", "tone=[1]"][..],
            r#"--settings needs ID=JSON with a JSON object, got "tone=[1]""#,
        ),
        (
            &[
                "--secret",
                "A=sk-live-sentinel",
                "--secret",
                "A=sk-live-sentinel2",
            ][..],
            "--secret A is given twice",
        ),
    ] {
        let out = call_with(&url, flags).await;
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {message}\n\nFor more information, try '--help'.\n")
        );
    }
    assert!(seen.bodies().is_empty(), "no call was sent");
}

#[tokio::test]
async fn a_503_says_why_the_service_refused_the_call() {
    for (refusal, readyz, why) in [
        (
            json!({"error": "missing env", "missingEnv": ["DATABASE_URL", "REGION"]}),
            None,
            "the pack's env.required names have no value: DATABASE_URL, REGION",
        ),
        (
            json!({"error": "missing env", "missingEnv": ["DATABASE_URL"]}),
            None,
            "the pack's env.required name has no value: DATABASE_URL",
        ),
        (
            json!({"error": "draining"}),
            None,
            "it is draining (stopping after the calls in flight)",
        ),
        (json!({"error": "not ready"}), None, "it is not ready yet"),
        (
            json!({"error": "overloaded"}),
            Some(json!({"status": "ready"})),
            "every call slot was taken (overloaded)",
        ),
    ] {
        let (url, seen) =
            scripted_pack(
                move |line| match (&readyz, line.starts_with("GET /readyz")) {
                    (Some(ready), true) => (200, ready.clone()),
                    _ => (503, refusal.clone()),
                },
            )
            .await;
        let out = call_with(&url, &[]).await;
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().last(),
            Some(format!(
                "kindgi: The pack service at {url} refused the call (503, 5 attempts): {why}. The call did not run."
            ).as_str())
        );
        assert_eq!(seen.bodies().len(), 5);
    }
}

#[tokio::test]
async fn a_closed_stdout_ends_the_call_quietly() {
    let big = "x".repeat(1 << 20);
    let (url, _) = fake_pack(json!({"v": 2, "kind": "result", "output": {"text": big}})).await;
    let mut child = call_command(&url, &[]).spawn().expect("spawn");
    // The reader goes away before anything is printed, as `| head -c1` does.
    drop(child.stdout.take());
    let out = child.wait_with_output().await.expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
}
