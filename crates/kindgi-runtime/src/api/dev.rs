//! The dev admin API (`/v1/dev/...`): open calls, answer them, end runs,
//! pause and watch waits, set tenant and project state. Every route wants
//! `Authorization: Bearer <admin token>`, which [`super::admin`] checks
//! before a handler here runs.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::ApiError;
use crate::DevRuntime;
use crate::store::records::{OpenCall, OpenRefusal, TenantSettings};

/// The longest a wait long-poll holds: 60 s.
const MAX_POLL_MS: u64 = 60_000;

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let body = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-input",
            format!("Invalid body: {e}"),
        )
    })
}

fn not_found(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        format!("No such {what}"),
    )
}

/// `POST /v1/dev/calls`: opens a call (see [`OpenCall`]).
pub(super) async fn open_call(
    State(rt): State<DevRuntime>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let req: OpenCall = parse(&body)?;
    if req.run_id.is_empty() || req.tenant_id.is_empty() || req.tool_id.is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-input",
            "runId, tenantId and toolId are required",
        ));
    }
    match rt.open_call(req).await? {
        Ok(grant) => Ok((StatusCode::CREATED, axum::Json(grant)).into_response()),
        Err(OpenRefusal::RunEnded) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "run-ended",
            "The run has ended",
        )),
        Err(OpenRefusal::RunMismatch) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "run-mismatch",
            "The run belongs to another tenant or project",
        )),
    }
}

/// `POST /v1/dev/calls/{callId}/answer`: the call answered; its token closes.
pub(super) async fn answer_call(
    State(rt): State<DevRuntime>,
    Path(call_id): Path<String>,
) -> Result<Response, ApiError> {
    if !rt.answer_call(&call_id).await? {
        return Err(not_found("call"));
    }
    Ok(axum::Json(json!({"callId": call_id, "answered": true})).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PauseBody {
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    name: Option<String>,
}

/// `POST /v1/dev/calls/{callId}/pause`: the tool answered `pause`.
pub(super) async fn pause(
    State(rt): State<DevRuntime>,
    Path(call_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: PauseBody = parse(&body)?;
    let wait = rt
        .pause(&call_id, body.timeout_ms, body.name)
        .await?
        .ok_or_else(|| not_found("wait for that call"))?;
    Ok(axum::Json(wait).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PollQuery {
    #[serde(default)]
    wait_ms: Option<u64>,
}

/// `GET /v1/dev/waits/{waitId}?waitMs=N`: the wait, after up to N ms
/// (at most 60 s) for it to complete or time out.
pub(super) async fn wait(
    State(rt): State<DevRuntime>,
    Path(wait_id): Path<String>,
    Query(q): Query<PollQuery>,
) -> Result<Response, ApiError> {
    let poll = Duration::from_millis(q.wait_ms.unwrap_or(0).min(MAX_POLL_MS));
    let wait = rt
        .wait(&wait_id, poll)
        .await?
        .ok_or_else(|| not_found("wait"))?;
    Ok(axum::Json(wait).into_response())
}

/// `POST /v1/dev/runs/{runId}/end`: the run ended; its calls' tokens close.
pub(super) async fn end_run(
    State(rt): State<DevRuntime>,
    Path(run_id): Path<String>,
) -> Result<Response, ApiError> {
    if !rt.end_run(&run_id).await? {
        return Err(not_found("run"));
    }
    Ok(axum::Json(json!({"runId": run_id, "ended": true})).into_response())
}

/// `PUT /v1/dev/tenants/{tenantId}`: `{state?, quotaBytes?}`.
pub(super) async fn set_tenant(
    State(rt): State<DevRuntime>,
    Path(tenant_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let settings: TenantSettings = parse(&body)?;
    if let Some(state) = &settings.state
        && !matches!(
            state.as_str(),
            "active" | "closing" | "suspended" | "unavailable"
        )
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-input",
            "state must be active, closing, suspended or unavailable",
        ));
    }
    let used = rt.set_tenant(&tenant_id, settings).await?;
    Ok(axum::Json(json!({"tenantId": tenant_id, "usedBytes": used})).into_response())
}

#[derive(Debug, Deserialize)]
struct ProjectBody {
    suspended: bool,
}

/// `PUT /v1/dev/projects/{projectId}`: `{suspended}`.
pub(super) async fn set_project(
    State(rt): State<DevRuntime>,
    Path(project_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: ProjectBody = parse(&body)?;
    rt.set_project(&project_id, body.suspended).await?;
    Ok(axum::Json(json!({"projectId": project_id, "suspended": body.suspended})).into_response())
}

/// `DELETE /v1/dev/files/{artifactId}`: deletes a file; reads answer `gone`.
pub(super) async fn delete_file(
    State(rt): State<DevRuntime>,
    Path(artifact_id): Path<String>,
) -> Result<Response, ApiError> {
    if !rt.delete_file(&artifact_id).await? {
        return Err(not_found("file"));
    }
    Ok(axum::Json(json!({"artifactId": artifact_id, "deleted": true})).into_response())
}
