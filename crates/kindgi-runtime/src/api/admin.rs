//! The dev admin API's credential: every `/v1/dev/...` route wants
//! `Authorization: Bearer <admin token>`, checked by one route layer
//! before the route's own extractors run (so that a request without the
//! token learns nothing of the route, not even that its query is wrong).

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::ApiError;
use crate::DevRuntime;

/// Route layer: lets the request through when it carries the admin token,
/// else answers 401 `admin-token-invalid`. An empty admin token (none
/// configured) lets nothing through.
pub(super) async fn require_admin(
    State(rt): State<DevRuntime>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let expected = rt.config().admin_token.as_bytes();
    if !expected.is_empty() && bool::from(presented.as_bytes().ct_eq(expected)) {
        next.run(request).await
    } else {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "admin-token-invalid",
            "The dev admin API wants Authorization: Bearer <admin token>",
        )
        .into_response()
    }
}
