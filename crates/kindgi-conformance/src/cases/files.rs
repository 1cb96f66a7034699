//! Protocol 2.10: a tool that declares `storesFiles` / `readsFiles` stores
//! and reads files through the runtime's tool-files API. The grants come
//! from a dev runtime served in process: the real endpoint.

use kindgi_runtime::OpenCall;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::index::entry;
use super::tool;
use crate::case::{Case, Checked, Feature, ensure, eq, error_code, str_at};
use crate::session::{Profile, Session};

/// A 1×1 PNG.
const PNG: &str = "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082";
/// Another 1×1 PNG, other bytes.
const OTHER_PNG: &str = "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c636060f8ff1f00030201ffe6770bae0000000049454e44ae426082";

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Files;
    vec![
        Case::new(
            "files.index-entry",
            Files,
            "The index marks conformance.files `storesFiles: true` and `readsFiles: true`.",
            index_entry,
        ),
        Case::new(
            "files.store",
            Files,
            "Storing a small PNG answers a file value: type kindgi.file, an artifactId, contentType image/png, size and sha256 of the bytes.",
            store,
        ),
        Case::new(
            "files.store-again",
            Files,
            "Storing the same bytes again in the same call answers the same artifactId.",
            store_again,
        ),
        Case::new(
            "files.not-stored.type",
            Files,
            "A PNG declared application/pdf is not stored: notStored type.",
            not_stored_type,
        ),
        Case::new(
            "files.read",
            Files,
            "Reading the stored file's artifactId answers its bytes.",
            read,
        ),
        Case::new(
            "files.no-idempotency-key",
            Files,
            "A call without an idempotencyKey can't store: the store fails, so the tool answers handler-throw.",
            no_idempotency_key,
        ),
    ]
}

async fn index_entry(s: Session) -> Checked {
    let index = s.index().await?;
    let files = entry(&index.json, "tools", "conformance.files")?;
    eq("storesFiles", Some(&json!(true)), files.get("storesFiles"))?;
    eq("readsFiles", Some(&json!(true)), files.get("readsFiles"))
}

/// Opens a call at the dev runtime; returns its context, with `toolFiles`.
async fn open(s: &Session, with_key: bool) -> Result<Value, String> {
    let files = s.files_runtime().await?;
    let run = s.unique("files");
    let key = with_key.then(|| {
        let h = hex::encode(&Sha256::digest(run.as_bytes())[..16]);
        format!(
            "{}-{}-5{}-8{}-{}",
            &h[0..8],
            &h[8..12],
            &h[13..16],
            &h[17..20],
            &h[20..32]
        )
    });
    let grant = files
        .runtime
        .open_call(OpenCall {
            run_id: run.clone(),
            tenant_id: "t1".to_owned(),
            tool_id: "conformance.files".to_owned(),
            idempotency_key: key.clone(),
            store: true,
            read: true,
            ..OpenCall::default()
        })
        .await
        .map_err(|e| format!("the dev runtime can't open a call: {e}"))?
        .map_err(|refusal| format!("the dev runtime refused the call: {refusal:?}"))?;
    let grant_files = grant
        .tool_files
        .ok_or("the dev runtime granted no tool files")?;
    s.add_sentinel(grant_files.token.expose());
    let mut context = json!({
        "tenantId": "t1",
        "runId": run,
        "toolFiles": {"url": grant_files.url, "token": grant_files.token.expose()}
    });
    if let Some(key) = key {
        context["idempotencyKey"] = json!(key);
    }
    Ok(context)
}

async fn call(s: &Session, input: Value, context: &Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &tool("conformance.files", input, context.clone()))
        .await
}

fn store_png(hex_bytes: &str, content_type: &str) -> Value {
    json!({"storeHex": hex_bytes, "name": "dot.png", "contentType": content_type})
}

/// The one file value of a store's answer.
fn stored_file(answer: &Value) -> Result<Value, String> {
    let files = answer
        .pointer("/output/files")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("expected a result with output.files, got {answer}"))?;
    match files.as_slice() {
        [file] => Ok(file.clone()),
        _ => Err(format!("expected one stored file, got {answer}")),
    }
}

async fn store(s: Session) -> Checked {
    let context = open(&s, true).await?;
    let answer = call(&s, store_png(PNG, "image/png"), &context).await?;
    let file = stored_file(&answer)?;
    let bytes = hex::decode(PNG).map_err(|e| e.to_string())?;
    eq(
        "type",
        Some("kindgi.file"),
        file.get("type").and_then(Value::as_str),
    )?;
    eq(
        "contentType",
        Some("image/png"),
        file.get("contentType").and_then(Value::as_str),
    )?;
    eq(
        "size",
        Some(bytes.len() as u64),
        file.get("size").and_then(Value::as_u64),
    )?;
    eq(
        "sha256",
        Some(hex::encode(Sha256::digest(&bytes))),
        file.get("sha256")
            .and_then(Value::as_str)
            .map(str::to_owned),
    )?;
    ensure(str_at(&file, "/artifactId")?.is_empty().eq(&false), || {
        "expected a non-empty artifactId".to_owned()
    })
}

async fn store_again(s: Session) -> Checked {
    let context = open(&s, true).await?;
    let first = stored_file(&call(&s, store_png(PNG, "image/png"), &context).await?)?;
    let second = stored_file(&call(&s, store_png(PNG, "image/png"), &context).await?)?;
    eq(
        "artifactId",
        str_at(&first, "/artifactId")?,
        str_at(&second, "/artifactId")?,
    )
}

async fn not_stored_type(s: Session) -> Checked {
    let context = open(&s, true).await?;
    let answer = call(&s, store_png(OTHER_PNG, "application/pdf"), &context).await?;
    eq(
        "output.notStored",
        Some("type"),
        answer.pointer("/output/notStored").and_then(Value::as_str),
    )?;
    eq(
        "output.files",
        Some(&json!([])),
        answer.pointer("/output/files"),
    )
}

async fn read(s: Session) -> Checked {
    let context = open(&s, true).await?;
    let file = stored_file(&call(&s, store_png(PNG, "image/png"), &context).await?)?;
    let id = str_at(&file, "/artifactId")?;
    let answer = call(&s, json!({"read": id}), &context).await?;
    eq(
        "output.readHex",
        Some(PNG),
        answer.pointer("/output/readHex").and_then(Value::as_str),
    )
}

async fn no_idempotency_key(s: Session) -> Checked {
    let context = open(&s, false).await?;
    let answer = call(&s, store_png(PNG, "image/png"), &context).await?;
    error_code(&answer, "handler-throw")
        .map_err(|e| format!("a store without an idempotencyKey: {e}"))
}
