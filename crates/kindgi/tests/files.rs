//! `files.store` / `files.read` (protocol 2.10.0) from a tool's handler:
//! against the real dev runtime for every answer it gives, and against a
//! scripted endpoint for busy and rate-limited answers.

use std::time::Duration;

use kindgi::testing::{TestContext, TestPack};
use kindgi::{Pack, ReadOutcome, StoreOutcome, Tool, ToolContext, ToolError};
use kindgi_runtime::TenantSettings;
use kindgi_test_kit::{Reply, ScriptedServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const PNG: &str = "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082";
const PNG_2: &str = "89504e470d0a1a0a0000000d4948445200000002000000010806000000f4227f8a0000000b49444154789c636080020000090001fb52b8a90000000049454e44ae426082";

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Item {
    hex: String,
    name: String,
    content_type: String,
}

#[derive(Deserialize, JsonSchema)]
struct FilesInput {
    #[serde(default)]
    store: Vec<Item>,
    read: Option<String>,
}

/// Stores each item, then reads one file; answers what each call answered.
async fn files(input: FilesInput, ctx: ToolContext) -> Result<Value, ToolError> {
    let files = ctx.files()?;
    let mut stored = Vec::new();
    for item in input.store {
        let bytes = hex::decode(&item.hex)?;
        stored.push(
            match files.store(bytes, &item.name, &item.content_type).await {
                Ok(StoreOutcome::File(file)) => json!({ "file": file }),
                Ok(StoreOutcome::NotStored(why)) => json!({ "notStored": why }),
                Err(e) => json!({ "error": e.to_string() }),
            },
        );
    }
    let read = match input.read {
        None => Value::Null,
        Some(id) => match files.read(&id).await {
            Ok(ReadOutcome::Bytes(bytes)) => json!({ "hex": hex::encode(bytes) }),
            Ok(ReadOutcome::NotRead(why)) => json!({ "notRead": why }),
            Err(e) => json!({ "error": e.to_string() }),
        },
    };
    Ok(json!({ "stored": stored, "read": read }))
}

fn pack() -> Pack {
    Pack::new().tool(
        Tool::new("t.files")
            .description("Stores and reads files.")
            .stores_files()
            .reads_files()
            .handler(files),
    )
}

fn item(hex: &str, name: &str, content_type: &str) -> Value {
    json!({"hex": hex, "name": name, "contentType": content_type})
}

async fn dev_pack() -> TestPack {
    TestPack::new(pack())
        .expect("valid pack")
        .with_dev_runtime_config(|config| {
            config.max_files_per_call = 3;
            config.type_limits.image = 100;
            config.type_limits.text = 1000;
        })
        .await
        .expect("dev runtime")
}

#[tokio::test]
async fn stores_dedupes_refuses_and_reads() {
    let pack = dev_pack().await;
    let big_png = format!("{PNG}{}", "00".repeat(200));
    let out = pack
        .call(
            "t.files",
            json!({"store": [
                item(PNG, "dot.png", "image/png"),
                item(PNG, "again.png", "image/png"),
                item(PNG_2, "liar.pdf", "application/pdf"),
                item(&big_png, "big.png", "image/png"),
                item(PNG_2, "two.png", "image/png"),
                item(&hex::encode("notes"), "notes.txt", "text/plain"),
                item(&hex::encode("more notes"), "more.txt", "text/plain"),
            ]}),
            TestContext::new().run("run-a").idempotency_key("key-1"),
        )
        .await
        .output()
        .expect("a result");
    let stored = out["stored"].as_array().expect("answers");
    let first = &stored[0]["file"];
    assert_eq!(first["type"], "kindgi.file");
    assert_eq!(first["name"], "dot.png");
    assert_eq!(first["contentType"], "image/png");
    assert_eq!(first["size"], 68);
    assert_eq!(first["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(
        stored[1]["file"], *first,
        "the same bytes answer the first file"
    );
    assert_eq!(stored[2], json!({"notStored": "type"}));
    assert_eq!(stored[3], json!({"notStored": "size"}));
    assert_eq!(stored[4]["file"]["name"], "two.png");
    assert_eq!(stored[5]["file"]["name"], "notes.txt");
    assert_eq!(stored[6], json!({"notStored": "limit"}));

    let artifact = first["artifactId"].as_str().expect("an id").to_owned();
    let read = pack
        .call(
            "t.files",
            json!({"read": artifact}),
            TestContext::new().run("run-a").idempotency_key("key-2"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(read["read"], json!({"hex": PNG}));

    let other_run = pack
        .call(
            "t.files",
            json!({"read": artifact}),
            TestContext::new().run("run-b").idempotency_key("key-3"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(other_run["read"], json!({"notRead": "rule"}));
}

#[tokio::test]
async fn storage_quota_and_missing_idempotency_key() {
    let pack = dev_pack().await;
    let runtime = pack.dev_runtime().expect("a runtime");
    runtime
        .set_tenant(
            "small",
            TenantSettings {
                state: None,
                quota_bytes: Some(10),
            },
        )
        .await
        .expect("tenant set");
    let out = pack
        .call(
            "t.files",
            json!({"store": [item(PNG, "dot.png", "image/png")]}),
            TestContext::new().tenant("small").idempotency_key("k"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(out["stored"][0], json!({"notStored": "storage"}));

    let out = pack
        .call(
            "t.files",
            json!({"store": [item(PNG, "dot.png", "image/png")]}),
            TestContext::new().run("run-without-key"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(
        out["stored"][0],
        json!({"error": "files can be stored only on a call with an idempotency key, so that a re-run of the call stores once: a runtime sets one on every tool step; `kindgi call` sets one, and in a test give TestContext::idempotency_key(…)"})
    );
}

/// Answers why the call has no files, or what storing answered.
async fn why_no_files(_input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(match ctx.files() {
        Err(e) => json!({"files": e.to_string()}),
        Ok(files) => match files.store(b"hi".to_vec(), "a.txt", "text/plain").await {
            Err(e) => json!({"store": e.to_string()}),
            Ok(_) => json!({"store": "stored"}),
        },
    })
}

fn diagnostics_pack() -> Pack {
    let tool = |id: &str| {
        Tool::new(id)
            .description("Says why it has no files.")
            .input_schema(json!({"type": "object"}))
            .handler(why_no_files)
    };
    Pack::new()
        .tool(tool("t.undeclared"))
        .tool(tool("t.reads").reads_files())
        .tool(tool("t.stores").stores_files())
}

#[tokio::test]
async fn each_reason_for_no_files_says_how_to_fix_it() {
    let with_runtime = TestPack::new(diagnostics_pack())
        .expect("valid pack")
        .with_dev_runtime()
        .await
        .expect("dev runtime");
    let ctx = || TestContext::new().run("run-1").idempotency_key("k1");
    let answer = |out: kindgi::testing::TestAnswer| out.output().expect("a result");
    assert_eq!(
        answer(with_runtime.call("t.undeclared", json!({}), ctx()).await),
        json!({"files": "this tool declares neither storesFiles nor readsFiles, so its calls get no files: add .stores_files() or .reads_files() to the tool (`stores_files` / `reads_files` in #[kindgi::tool])"})
    );
    assert_eq!(
        answer(with_runtime.call("t.reads", json!({}), ctx()).await),
        json!({"store": "this tool doesn't declare storesFiles: add .stores_files() to the tool (`stores_files` in #[kindgi::tool])"})
    );
    // Under the dev runtime, a call without an idempotency key gets no
    // files for a tool that only stores: the key is what it lacks.
    assert_eq!(
        answer(
            with_runtime
                .call("t.stores", json!({}), TestContext::new().run("run-1"))
                .await
        ),
        json!({"files": "this call has no idempotency key, and a tool that stores files gets its files only on a call with one, so that a re-run stores once: a runtime sets one on every tool step; by hand, send ctx.idempotencyKey (`kindgi call` sends one), and in a test give TestContext::idempotency_key(…)"})
    );
    let without_runtime = TestPack::new(diagnostics_pack()).expect("valid pack");
    assert_eq!(
        answer(without_runtime.call("t.reads", json!({}), ctx()).await),
        json!({"files": "the runtime sent no files grant with this call: it predates protocol 2.10 or has no file store; under `kindgi dev` the dev runtime sends one, and in a test `TestPack::with_dev_runtime` does"})
    );
}

/// A files endpoint that answers each request with the next scripted
/// status, and keeps the requests.
async fn scripted(answers: Vec<(u16, &'static str, &'static str)>) -> (String, ScriptedServer) {
    let replies = answers
        .into_iter()
        .map(|(status, retry_after, body)| {
            Reply::json_text(status, body).header("retry-after", retry_after)
        })
        .collect();
    let server = ScriptedServer::replying(replies).await;
    (format!("{}/v1/tool-files", server.url()), server)
}

const FILE_ANSWER: &str = r#"{"file":{"type":"kindgi.file","artifactId":"a1","name":"r é.png","contentType":"image/png","size":68,"sha256":"0000000000000000000000000000000000000000000000000000000000000000"}}"#;

#[tokio::test]
async fn busy_is_retried_after_retry_after() {
    let (url, files) = scripted(vec![
        (
            503,
            "0",
            r#"{"error":{"code":"tool-files-busy","message":"busy","requestId":"r"}}"#,
        ),
        (200, "0", FILE_ANSWER),
    ])
    .await;
    let pack = TestPack::new(pack()).expect("valid pack");
    let out = pack
        .call(
            "t.files",
            json!({"store": [item(PNG, "r é.png", "image/png")]}),
            TestContext::new()
                .idempotency_key("k")
                .tool_files(&url, "kgi_tf_secret"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(out["stored"][0]["file"]["artifactId"], "a1");
    assert_eq!(files.count(), 2);
    let heads: Vec<String> = files.seen().into_iter().map(|r| r.head).collect();
    let head = heads[1].to_ascii_lowercase();
    assert!(head.starts_with("post /v1/tool-files http/1.1"), "{head}");
    assert!(
        head.contains("authorization: bearer kgi_tf_secret"),
        "{head}"
    );
    assert!(head.contains("content-type: image/png"), "{head}");
    assert!(head.contains("kindgi-file-name: r%20%c3%a9.png"), "{head}");
}

#[tokio::test]
async fn rate_limits_past_the_deadline_surface_as_errors() {
    let (url, files) = scripted(vec![(
        429,
        "5",
        r#"{"error":{"code":"rate-limit-exceeded","message":"slow down","requestId":"r"}}"#,
    )])
    .await;
    let pack = TestPack::new(pack()).expect("valid pack");
    let out = pack
        .call(
            "t.files",
            json!({"store": [item(PNG, "a.png", "image/png")]}),
            TestContext::new()
                .idempotency_key("k")
                .timeout(Duration::from_secs(2))
                .tool_files(&url, "kgi_tf_secret"),
        )
        .await
        .output()
        .expect("a result");
    assert_eq!(
        out["stored"][0],
        json!({"error": "the runtime's file store kept answering 429 rate-limit-exceeded"})
    );
    assert_eq!(files.count(), 1, "no retry past the deadline");
}
