//! The runtime's HTTP API: the tool-files API, wait links and the dev
//! admin API, behind one request-id layer.

mod admin;
mod dev;
mod error;
mod rate_limit;
mod tool_files;
mod waits;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};

pub(crate) use error::ApiError;

use self::rate_limit::Credential;
use crate::DevRuntime;

/// The id of one request: in every error body and in `X-Request-Id`.
#[derive(Debug, Clone)]
pub(crate) struct RequestId(pub(crate) String);

/// The router of every route the runtime serves.
pub(crate) fn router(runtime: DevRuntime) -> Router {
    // The public routes: each counted against the per-client rate limit
    // before it does anything else.
    let public = Router::new()
        .route(
            "/v1/tool-files",
            rate_limit::limited(
                post(tool_files::store),
                &runtime,
                Credential::FilesToken,
                "nothing was stored",
            ),
        )
        .route(
            "/v1/tool-files/{artifact_id}",
            rate_limit::limited(
                get(tool_files::read),
                &runtime,
                Credential::FilesToken,
                "nothing was read",
            ),
        )
        .route(
            "/v1/waits/{link}",
            rate_limit::limited(
                post(waits::complete),
                &runtime,
                Credential::WaitLink,
                "the wait was not answered",
            ),
        );
    // The dev admin API: the admin token before anything else.
    let admin = Router::new()
        .route("/v1/dev/calls", post(dev::open_call))
        .route("/v1/dev/calls/{call_id}/answer", post(dev::answer_call))
        .route("/v1/dev/calls/{call_id}/pause", post(dev::pause))
        .route("/v1/dev/waits/{wait_id}", get(dev::wait))
        .route("/v1/dev/runs/{run_id}/end", post(dev::end_run))
        .route("/v1/dev/tenants/{tenant_id}", put(dev::set_tenant))
        .route("/v1/dev/projects/{project_id}", put(dev::set_project))
        .route("/v1/dev/files/{artifact_id}", delete(dev::delete_file))
        .route_layer(middleware::from_fn_with_state(
            runtime.clone(),
            admin::require_admin,
        ));
    Router::new()
        .merge(public)
        .merge(admin)
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }),
        )
        .fallback(not_found)
        .layer(middleware::from_fn(request_id))
        .with_state(runtime)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not-found", "No such route")
}

/// Gives every request an id, renders error answers with it and echoes it
/// in `X-Request-Id`.
async fn request_id(mut req: Request, next: Next) -> Response {
    let id = RequestId(format!("req_{}", uuid::Uuid::new_v4().simple()));
    req.extensions_mut().insert(id.clone());
    let mut response = next.run(req).await;
    if let Some(error) = response.extensions_mut().remove::<ApiError>() {
        let headers = std::mem::take(response.headers_mut());
        response = error.render(&id);
        for (name, value) in &headers {
            if !response.headers().contains_key(name) {
                response.headers_mut().insert(name.clone(), value.clone());
            }
        }
    } else if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        let allow = response.headers().get(axum::http::header::ALLOW).cloned();
        response = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            "Method not allowed",
        )
        .render(&id);
        if let Some(allow) = allow {
            response
                .headers_mut()
                .insert(axum::http::header::ALLOW, allow);
        }
    }
    if let Ok(v) = HeaderValue::from_str(&id.0) {
        response.headers_mut().insert("x-request-id", v);
    }
    response.into_response()
}
