//! `POST /v1/waits/{link}`: another system answers a paused call. No
//! Authorization: the link is the credential. The per-client rate limit of
//! the tool-files API counts these too, before the link is looked up (see
//! [`super::rate_limit`]).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::ApiError;
use crate::DevRuntime;
use crate::runtime::now_ms;
use crate::store::records::{Completion, WaitState};
use crate::tokens;

fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "wait-not-found",
        "No wait has this link",
    )
}

fn answer(id: &str, already: bool) -> Response {
    axum::Json(json!({"waitId": id, "state": "completed", "alreadyComplete": already}))
        .into_response()
}

fn timed_out() -> ApiError {
    ApiError::new(
        StatusCode::GONE,
        "wait-timed-out",
        "The wait's time passed; the answer was not taken",
    )
}

/// Completes the wait the link names with the body, once.
pub(super) async fn complete(
    State(rt): State<DevRuntime>,
    Path(link): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (id, secret) = tokens::split(tokens::WAIT_LINK_PREFIX, &link).ok_or_else(not_found)?;
    let (id, secret) = (id.to_owned(), secret.to_owned());
    let (wait, _) = rt
        .inner
        .store
        .db(move |db| db.wait_by_link(&id, now_ms()))
        .await?
        .filter(|(_, hash)| tokens::secret_matches(&secret, hash))
        .ok_or_else(not_found)?;
    match wait.state {
        WaitState::Completed => return Ok(answer(&wait.id, true)),
        WaitState::TimedOut => return Err(timed_out()),
        WaitState::Open | WaitState::Waiting => {}
    }
    let max = rt.inner.config.max_body_bytes;
    if body.len() as u64 > max {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request-too-large",
            format!("The body is over {max} bytes"),
        )
        .details(json!({ "maxBytes": max })));
    }
    let output: Value = serde_json::from_slice(&body).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-input",
            "The body must be JSON: the call's output",
        )
    })?;
    if let Some(schema) = &wait.output_schema
        && let Err(issues) = crate::validate::validate(schema, &output)
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "output-invalid",
            "The body is not valid against the tool's output schema",
        )
        .details(json!({ "issues": issues })));
    }
    let wait_id = wait.id.clone();
    let done = rt
        .inner
        .store
        .db(move |db| db.complete_wait(&wait_id, &output, now_ms()))
        .await?
        .ok_or_else(not_found)?;
    rt.changed();
    match done {
        Completion::Completed(w) => Ok(answer(&w.id, false)),
        Completion::AlreadyComplete(w) => Ok(answer(&w.id, true)),
        Completion::TimedOut(_) => Err(timed_out()),
    }
}
