//! The API's error answers: `{error:{code, message, details?, requestId}}`
//! with `X-Request-Id`, and `Retry-After` where the client should try again.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::RequestId;

/// An error answer, completed with the request's id by the request-id layer.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
    pub(crate) retry_after: Option<Duration>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub(crate) fn details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub(crate) fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = Some(after);
        self
    }

    pub(crate) fn internal(err: &crate::RuntimeError) -> Self {
        tracing::error!(error = %err, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "The runtime failed; see its log",
        )
    }

    /// The full answer for request `id`.
    pub(crate) fn render(&self, id: &RequestId) -> Response {
        let mut error = json!({"code": self.code, "message": self.message, "requestId": id.0});
        if let (Some(details), Some(obj)) = (&self.details, error.as_object_mut()) {
            obj.insert("details".into(), details.clone());
        }
        let mut response = (self.status, axum::Json(json!({ "error": error }))).into_response();
        if let Some(after) = self.retry_after {
            // Whole seconds, rounded up, at least 1.
            let secs = after.as_millis().div_ceil(1000).max(1);
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        response
    }
}

impl IntoResponse for ApiError {
    /// Without the request's id at hand, the answer carries the error as an
    /// extension; the request-id layer renders it.
    fn into_response(self) -> Response {
        let mut response = self.status.into_response();
        response.extensions_mut().insert(self);
        response
    }
}

impl From<crate::RuntimeError> for ApiError {
    fn from(err: crate::RuntimeError) -> Self {
        Self::internal(&err)
    }
}
