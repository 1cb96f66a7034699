//! Answering a paused call from the page: the output goes to the call's
//! wait link on the dev runtime, as the system a tool hands the link to
//! would post it; the link itself never reaches the page.

use std::time::Duration;

use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::Inspector;
use super::routes::{InspectorBody, error, json_answer};

impl Inspector {
    /// `POST /inspector/api/calls/{callId}/answer`: posts the body, the
    /// call's output, to its wait link; answers what the link answered and
    /// the wait as it then is.
    pub(super) async fn answer_pause(
        &self,
        call_id: &str,
        output: &Value,
    ) -> Response<InspectorBody> {
        let paused = self
            .paused
            .lock()
            .ok()
            .and_then(|p| p.get(call_id).cloned());
        let Some(paused) = paused else {
            return error(StatusCode::NOT_FOUND, &format!("No paused call {call_id}"));
        };
        let posted = self
            .http
            .post(paused.link.expose())
            .json(output)
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        let (status, body) = match posted {
            Ok(response) => {
                let status = response.status().as_u16();
                (
                    status,
                    response.json::<Value>().await.unwrap_or(Value::Null),
                )
            }
            Err(e) => (
                0,
                json!({"error": format!("Could not reach the wait link: {e}")}),
            ),
        };
        let wait = match self.runtime.wait(&paused.wait_id, Duration::ZERO).await {
            Ok(Some(record)) => json!({
                "state": record.state,
                "output": record.output,
            }),
            _ => Value::Null,
        };
        if wait["state"] == "completed"
            && let Ok(mut all) = self.paused.lock()
        {
            all.remove(call_id);
        }
        self.history.answered(&paused.request_id, &wait).await;
        json_answer(
            StatusCode::OK,
            &json!({"response": {"status": status, "body": body}, "wait": wait}),
        )
    }
}
