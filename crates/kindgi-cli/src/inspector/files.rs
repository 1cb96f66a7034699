//! A stored file's bytes for the page's preview and download, read from
//! the dev runtime as a call of the file's run reads them: a read-only
//! call opened for the read and answered after it.

use std::time::Duration;

use http::{Response, StatusCode};
use kindgi_runtime::OpenCall;
use serde_json::{Value, json};

use super::Inspector;
use super::routes::{InspectorBody, bytes_body, error, json_answer};

impl Inspector {
    /// `GET /inspector/api/files/{artifactId}?runId=R&tenantId=T`: the
    /// file's bytes, read as a call of run `R` would read them.
    pub(super) async fn file(&self, artifact_id: &str, query: &str) -> Response<InspectorBody> {
        let param = |name: &str| {
            query.split('&').find_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                if key == name {
                    kindgi_protocol::percent::decode_component(value)
                } else {
                    None
                }
            })
        };
        let (Some(run_id), Some(tenant_id)) = (param("runId"), param("tenantId")) else {
            return error(StatusCode::BAD_REQUEST, "runId and tenantId are required");
        };
        let open = OpenCall {
            run_id,
            tenant_id,
            project_id: None,
            tool_id: "kindgi.inspector".to_owned(),
            idempotency_key: None,
            store: false,
            read: true,
            pauses: false,
            deadline_ms: Some(30_000),
            output_schema: None,
        };
        let grant = match self.runtime.open_call(open).await {
            Ok(Ok(grant)) => grant,
            Ok(Err(refusal)) => {
                return error(
                    StatusCode::CONFLICT,
                    &format!("The run refused the read: {refusal:?}"),
                );
            }
            Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}")),
        };
        let Some(files) = &grant.tool_files else {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The dev runtime gave no files grant",
            );
        };
        let read = self
            .http
            .get(format!(
                "{}/{}",
                files.url,
                kindgi_protocol::percent::encode_component(artifact_id)
            ))
            .bearer_auth(files.token.expose())
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        let _ = self.runtime.answer_call(&grant.call_id).await;
        let response = match read {
            Ok(response) => response,
            Err(e) => return error(StatusCode::BAD_GATEWAY, &format!("{e}")),
        };
        let status = response.status();
        let is_bytes = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes() == b"application/octet-stream");
        let bytes = response.bytes().await.unwrap_or_default();
        if status.is_success() && is_bytes {
            let mut answer = Response::new(bytes_body(bytes));
            answer.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/octet-stream"),
            );
            answer
        } else {
            let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            json_answer(
                StatusCode::NOT_FOUND,
                &json!({"error": "The file could not be read", "answer": body}),
            )
        }
    }
}
