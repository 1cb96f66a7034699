//! `POST /v1/tool-files` and `GET /v1/tool-files/{artifactId}`.
//!
//! Checks run in this order, each answering before anything is stored or
//! read: rate limit (before the token is looked up) → token (401) → token
//! closed (403) → tenant and project state (503/403) → file name (400) →
//! declared size (413) → memory budget (503) → body and bytes (200 with
//! `notStored`/`notRead`).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use kindgi_protocol::{NotRead, NotStored, ReadAnswer, StoreAnswer};
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::OwnedSemaphorePermit;

use super::ApiError;
use crate::runtime::now_ms;
use crate::sniff::{self, FileKind, Sniffed};
use crate::store::NewFile;
use crate::store::records::{Closed, FileRecord, Inserted, TokenView};
use crate::tokens;
use crate::{DevRuntime, TypeLimits};

/// What a request wants to do with its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Store,
    Read,
}

fn not_found_token() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "tool-file-token-not-found",
        "No tool call's files match the bearer token",
    )
}

/// Finds and checks the request's call token (the rate limit has counted
/// the request already: [`super::rate_limit`]).
async fn authorize(
    rt: &DevRuntime,
    headers: &HeaderMap,
    need: Need,
) -> Result<TokenView, ApiError> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_owned())
        })
        .ok_or_else(not_found_token)?;
    let (id, secret) =
        tokens::split(tokens::TOOL_FILES_PREFIX, &bearer).ok_or_else(not_found_token)?;
    let (id, secret) = (id.to_owned(), secret.to_owned());
    let view = rt
        .inner
        .store
        .db(move |db| db.token(&id, now_ms()))
        .await?
        .filter(|v| tokens::secret_matches(&secret, &v.secret_hash))
        .filter(|v| match need {
            Need::Store => v.can_store,
            Need::Read => v.can_read,
        })
        .ok_or_else(not_found_token)?;
    if let Some(closed) = view.closed {
        let why = match closed {
            Closed::Answered => "answered",
            Closed::Deadline => "deadline",
            Closed::RunEnded => "run-ended",
        };
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "tool-file-token-closed",
            "The call has answered, its time has passed, or its run has ended",
        )
        .details(json!({ "reason": why })));
    }
    match view.tenant_state.as_str() {
        "active" => {}
        "unavailable" => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "tenant-state-unavailable",
                "The run's workspace state couldn't be read; nothing was stored",
            )
            .retry_after(std::time::Duration::from_secs(1)));
        }
        "closing" => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "tenant-closing",
                "The workspace is closing; nothing runs there",
            ));
        }
        state => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "tenant-suspended",
                "The workspace is suspended; nothing runs there",
            )
            .details(json!({ "state": state })));
        }
    }
    if view.project_suspended {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "project-suspended",
            "The project is suspended; nothing runs there",
        ));
    }
    Ok(view)
}

fn busy() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "tool-files-busy",
        "The runtime had no room for the file's bytes; nothing was stored or read",
    )
    .retry_after(std::time::Duration::from_secs(1))
}

/// The file's name from `Kindgi-File-Name`: percent-encoded UTF-8.
fn file_name(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let bad = || {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-input",
            "Kindgi-File-Name must be percent-encoded UTF-8",
        )
    };
    let Some(raw) = headers.get(kindgi_protocol::headers::FILE_NAME) else {
        return Ok(None);
    };
    let raw = raw.to_str().map_err(|_| bad())?;
    kindgi_protocol::file_name::decode_file_name(raw).map_err(|_| bad())
}

fn limit_for(limits: &TypeLimits, kind: FileKind) -> u64 {
    match kind {
        FileKind::Pdf => limits.pdf,
        FileKind::Text => limits.text,
        _ if kind.is_image() => limits.image,
        _ => limits.image,
    }
}

fn limit_for_type(limits: &TypeLimits, content_type: &str) -> u64 {
    let essence = sniff::essence(content_type);
    if essence == "application/pdf" {
        limits.pdf
    } else if essence.starts_with("image/") {
        limits.image
    } else {
        limits.text
    }
}

fn not_stored(why: NotStored) -> Response {
    axum::Json(StoreAnswer::NotStored { not_stored: why }).into_response()
}

fn stored(file: &FileRecord) -> Response {
    axum::Json(StoreAnswer::Stored {
        file: file.to_value(),
    })
    .into_response()
}

/// `POST /v1/tool-files`: stores one file for the token's call.
pub(super) async fn store(
    State(rt): State<DevRuntime>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let token = authorize(&rt, &headers, Need::Store).await?;
    let name = file_name(&headers)?;
    let config = &rt.inner.config;
    let declared_len = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared_len.is_some_and(|n| n > config.max_body_bytes) {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request-too-large",
            format!("The body is over {} bytes", config.max_body_bytes),
        )
        .details(json!({ "maxBytes": config.max_body_bytes })));
    }
    let room = rt
        .inner
        .budget
        .reserve(declared_len.unwrap_or(config.max_body_bytes))
        .await
        .ok_or_else(busy)?;
    let room = Arc::new(room);
    let Some(bytes) = read_body(body, config.max_body_bytes).await? else {
        return Ok(not_stored(NotStored::Size));
    };
    let bytes = Arc::new(bytes);
    let declared_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let sha256 = hex::encode(Sha256::digest(bytes.as_slice()));

    // The same bytes again in this call answer the first file, whatever else.
    let (call, sha) = (token.call_id.clone(), sha256.clone());
    if let Some(existing) = rt
        .inner
        .store
        .db(move |db| db.file_in_call(&call, &sha))
        .await?
    {
        return Ok(stored(&existing));
    }
    let Some(sniffed) = sniff_in_time(&bytes, declared_type, &room).await else {
        return Ok(not_stored(NotStored::Type));
    };
    let size = bytes.len() as u64;
    if size > limit_for(&config.type_limits, sniffed.kind) {
        return Ok(not_stored(NotStored::Size));
    }
    let file = NewFile {
        name,
        content_type: sniffed.kind.content_type().to_owned(),
        size,
        sha256: sha256.clone(),
        pages: sniffed.pages,
    };
    let (max_files, quota) = (config.max_files_per_call, config.default_quota_bytes);
    // Check for room first, so a refused file leaves no blob behind.
    let (t, f) = (token.clone(), file.clone());
    let room = rt
        .inner
        .store
        .db(move |db| db.insert_file(&t, &f, max_files, quota, now_ms(), true))
        .await?;
    match room {
        Inserted::Limit => return Ok(not_stored(NotStored::Limit)),
        Inserted::Storage => return Ok(not_stored(NotStored::Storage)),
        Inserted::Existing(existing) => return Ok(stored(&existing)),
        Inserted::Stored(_) => {}
    }
    // Blob first (temp, fsync, rename), record second.
    rt.inner
        .store
        .blobs(move |blobs| blobs.write(&sha256, &bytes))
        .await?;
    let inserted = rt
        .inner
        .store
        .db(move |db| db.insert_file(&token, &file, max_files, quota, now_ms(), false))
        .await?;
    Ok(match inserted {
        Inserted::Stored(record) | Inserted::Existing(record) => stored(&record),
        Inserted::Limit => not_stored(NotStored::Limit),
        Inserted::Storage => not_stored(NotStored::Storage),
    })
}

/// How long finding what a file's bytes are may take before the file is
/// refused (`type`).
const READ_TIME: Duration = Duration::from_secs(5);

/// What the bytes are, found off the async workers within [`READ_TIME`];
/// `None` when they are no kind a model is shown, or past that time. A read
/// still going then keeps its share of the memory budget until it ends.
async fn sniff_in_time(
    bytes: &Arc<Vec<u8>>,
    declared: Option<&str>,
    room: &Arc<OwnedSemaphorePermit>,
) -> Option<Sniffed> {
    let (bytes, room) = (Arc::clone(bytes), Arc::clone(room));
    let declared = declared.map(str::to_owned);
    let read = tokio::task::spawn_blocking(move || {
        let _room = room;
        sniff::sniff(&bytes, declared.as_deref())
    });
    tokio::time::timeout(READ_TIME, read).await.ok()?.ok()?.ok()
}

/// Reads the body up to `max` bytes: `None` when it goes past.
async fn read_body(mut body: Body, max: u64) -> Result<Option<Vec<u8>>, ApiError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad-input",
                "The body could not be read to its end",
            )
        })?;
        if let Ok(data) = frame.into_data() {
            if (bytes.len() + data.len()) as u64 > max {
                return Ok(None);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(Some(bytes))
}

fn not_read(why: NotRead) -> Response {
    axum::Json(ReadAnswer { not_read: why }).into_response()
}

/// `GET /v1/tool-files/{artifactId}`: a file the token's run may be shown.
pub(super) async fn read(
    State(rt): State<DevRuntime>,
    Path(artifact_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let token = authorize(&rt, &headers, Need::Read).await?;
    let file = rt.inner.store.db(move |db| db.file(&artifact_id)).await?;
    let Some(file) = file.filter(|f| f.run_id == token.run_id && f.tenant_id == token.tenant_id)
    else {
        return Ok(not_read(NotRead::Rule));
    };
    if file.deleted {
        return Ok(not_read(NotRead::Gone));
    }
    if file.size > limit_for_type(&rt.inner.config.type_limits, &file.content_type) {
        return Ok(not_read(NotRead::Size));
    }
    let _room = rt.inner.budget.reserve(file.size).await.ok_or_else(busy)?;
    let sha = file.sha256.clone();
    let Some(bytes) = rt.inner.store.blobs(move |blobs| blobs.read(&sha)).await? else {
        return Ok(not_read(NotRead::Gone));
    };
    if hex::encode(Sha256::digest(&bytes)) != file.sha256 {
        return Ok(not_read(NotRead::Changed));
    }
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}
