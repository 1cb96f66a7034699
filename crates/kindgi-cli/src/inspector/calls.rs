//! Calling a tool and running a check for the page ([`super::pauses`]
//! answers a paused call, [`super::files`] reads a stored file). Each call
//! goes to the pack service as a runtime sends it, its grants opened on
//! the dev runtime, and comes back with the exact request and response.
//!
//! The request shown leaves out the credentials the inspector added (the
//! files token, the wait link) and the service token: the page only ever
//! sees what it was given.

use std::time::{Duration, Instant};

use http::{Response, StatusCode};
use kindgi_protocol::headers;
use kindgi_protocol::idempotency::idempotency_key;
use kindgi_runtime::OpenCall;
use serde_json::{Map, Value, json};

use super::in_flight::{Entered, is_ticket};
use super::routes::{InspectorBody, error, json_answer};
use super::{Inspector, Paused};

/// What stands in for a credential in a shown request.
const HIDDEN: &str = "(kept by the inspector)";

/// The deadline of a call unless the page names one.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// A fresh random id with `prefix`.
fn fresh_id(prefix: &str) -> String {
    format!("{prefix}_{}", crate::dev::random_token())
}

/// What a service answered: its status, the time it took, its body.
struct Answer {
    status: u16,
    duration_ms: u64,
    body: Value,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The key of a call of `toolId` at `step` in `runId`, as a runtime
/// derives it.
fn key_of(body: &Value, tool_id: &str) -> Option<String> {
    let run = text(&body["ctx"], "runId").or_else(|| text(body, "runId"))?;
    let step = text(body, "step").unwrap_or_else(|| "inspector".to_owned());
    let model = text(body, "modelCallId");
    Some(idempotency_key(&run, &step, tool_id, model.as_deref()).to_string())
}

impl Inspector {
    /// `POST /inspector/api/key`: `{runId, step, toolId, modelCallId}` →
    /// `{idempotencyKey}`.
    pub(super) fn key(&self, body: &Value) -> Response<InspectorBody> {
        let Some(tool) = text(body, "toolId") else {
            return error(StatusCode::BAD_REQUEST, "toolId is required");
        };
        match key_of(body, &tool) {
            Some(key) => json_answer(StatusCode::OK, &json!({ "idempotencyKey": key })),
            None => error(StatusCode::BAD_REQUEST, "runId is required"),
        }
    }

    /// Posts `message` to the service's `/v1/invoke`.
    async fn invoke(&self, message: &Value, request_id: &str, timeout_ms: u64) -> Answer {
        let started = Instant::now();
        let mut request = self
            .http
            .post(format!("{}/v1/invoke", self.target.url))
            .header(headers::PACK_TOKEN, self.target.token.expose())
            .header(headers::REQUEST_ID, request_id)
            .header(headers::TIMEOUT_MS, timeout_ms.to_string())
            .timeout(Duration::from_millis(timeout_ms.saturating_add(10_000)))
            .json(message);
        if let Some(run) = message["ctx"]["runId"].as_str() {
            request = request.header(headers::RUN_ID, run);
        }
        if let Some(tenant) = message["ctx"]["tenantId"].as_str() {
            request = request.header(headers::TENANT_ID, tenant);
        }
        let (status, body) = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let bytes = response.bytes().await.unwrap_or_default();
                let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                    Value::String(String::from_utf8_lossy(&bytes).into_owned())
                });
                (status, body)
            }
            Err(e) => (
                0,
                json!({"error": format!("Could not reach the pack service at {}: {e}", self.target.url)}),
            ),
        };
        Answer {
            status,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            body,
        }
    }

    /// The request as the page may see it.
    fn shown_request(&self, message: &Value, request_id: &str, timeout_ms: u64) -> Value {
        let mut shown = message.clone();
        if let Some(ctx) = shown["ctx"].as_object_mut() {
            if let Some(files) = ctx.get_mut("toolFiles").and_then(Value::as_object_mut) {
                files.insert("token".into(), HIDDEN.into());
            }
            if let Some(wait) = ctx.get_mut("waitToken").and_then(Value::as_object_mut) {
                wait.insert("url".into(), HIDDEN.into());
            }
        }
        let mut sent_headers = json!({
            "content-type": "application/json",
            (headers::PACK_TOKEN): "$KINDGI_SERVICE_TOKEN",
            (headers::REQUEST_ID): request_id,
            (headers::TIMEOUT_MS): timeout_ms.to_string(),
        });
        for (header, key) in [(headers::RUN_ID, "runId"), (headers::TENANT_ID, "tenantId")] {
            if let Some(value) = message["ctx"][key].as_str() {
                sent_headers[header] = value.into();
            }
        }
        json!({
            "method": "POST",
            "url": format!("{}/v1/invoke", self.target.url),
            "headers": sent_headers,
            "body": shown,
        })
    }

    /// `POST /inspector/api/cancel`: `{ticket}` — cancels the call in
    /// flight the page sent with that ticket. 404 when none is.
    pub(super) fn cancel(&self, body: &Value) -> Response<InspectorBody> {
        let Some(ticket) = body["ticket"].as_str() else {
            return error(StatusCode::BAD_REQUEST, "ticket is required");
        };
        if self.in_flight.cancel(ticket) {
            json_answer(StatusCode::OK, &json!({ "cancelled": true }))
        } else {
            error(
                StatusCode::NOT_FOUND,
                &format!("No call in flight has the ticket {ticket:?}"),
            )
        }
    }

    /// Counts a call in flight under the page's `ticket`, if it gave one;
    /// the status and words that refuse a ticket not well formed, or in
    /// flight already.
    fn enter(&self, ticket: &Value) -> Result<Option<Entered<'_>>, (StatusCode, String)> {
        match ticket {
            Value::Null => Ok(None),
            Value::String(ticket) if is_ticket(ticket) => {
                self.in_flight.enter(ticket).map(Some).ok_or_else(|| {
                    (
                        StatusCode::CONFLICT,
                        format!("A call with the ticket {ticket:?} is in flight already"),
                    )
                })
            }
            _ => Err((
                StatusCode::BAD_REQUEST,
                "ticket must be 1 to 100 ASCII letters, digits, '-' or '_'".to_owned(),
            )),
        }
    }

    /// `POST /inspector/api/call`: `{toolId, input, ctx, step,
    /// modelCallId, idempotencyKey, timeoutMs, ticket}`. With a `ticket`
    /// (the page's name for the call), `POST /inspector/api/cancel` can
    /// cancel it while it runs: its answer then says `"cancelled": true`
    /// and has no response.
    pub(super) async fn call(&self, body: Value) -> Response<InspectorBody> {
        let Some(tool_id) = text(&body, "toolId") else {
            return error(StatusCode::BAD_REQUEST, "toolId is required");
        };
        let mut entered = match self.enter(&body["ticket"]) {
            Ok(entered) => entered,
            Err((status, why)) => return error(status, &why),
        };
        let mut ctx = body["ctx"].as_object().cloned().unwrap_or_default();
        for key in ["tenantId", "runId"] {
            if text(&body["ctx"], key).is_none() {
                return error(StatusCode::BAD_REQUEST, &format!("ctx.{key} is required"));
            }
        }
        // Empty groups are left out, as a runtime leaves them out.
        ctx.retain(|_, v| !(v.is_null() || v.as_object().is_some_and(Map::is_empty) || v == ""));
        let key = text(&body, "idempotencyKey").or_else(|| key_of(&body, &tool_id));
        if let Some(key) = &key {
            ctx.insert("idempotencyKey".into(), key.clone().into());
        }
        let timeout_ms = body["timeoutMs"]
            .as_u64()
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .max(1);
        let entry = self
            .state()
            .index
            .and_then(|index| index.tools.iter().find(|t| t.id == tool_id).cloned());
        let ctx_text = |name: &str| ctx.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut opened = None;
        if let Some(entry) = entry.filter(|e| e.pauses || e.stores_files || e.reads_files) {
            let open = OpenCall {
                run_id: ctx_text("runId").unwrap_or_default(),
                tenant_id: ctx_text("tenantId").unwrap_or_default(),
                project_id: ctx_text("projectId"),
                tool_id: tool_id.clone(),
                idempotency_key: key.clone(),
                store: entry.stores_files && key.is_some(),
                read: entry.reads_files,
                pauses: entry.pauses,
                deadline_ms: Some(timeout_ms),
                output_schema: Some(entry.output.clone()).filter(|s| !s.is_null()),
            };
            match self.runtime.open_call(open).await {
                Ok(Ok(grant)) => {
                    if let Some(files) = &grant.tool_files {
                        ctx.insert(
                            "toolFiles".into(),
                            serde_json::to_value(files).unwrap_or_default(),
                        );
                    }
                    if let Some(wait) = &grant.wait_token {
                        ctx.insert(
                            "waitToken".into(),
                            serde_json::to_value(wait).unwrap_or_default(),
                        );
                    }
                    opened = Some(grant);
                }
                Ok(Err(refusal)) => {
                    return error(
                        StatusCode::CONFLICT,
                        &format!("The dev runtime refused the call: {refusal:?}"),
                    );
                }
                Err(e) => {
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("The dev runtime failed: {e}"),
                    );
                }
            }
        }
        let message = json!({
            "v": 2,
            "kind": "invoke",
            "tool": {"id": tool_id},
            "input": body.get("input").cloned().unwrap_or_else(|| json!({})),
            "ctx": ctx,
        });
        let request_id = fresh_id("insp");
        // What the history keeps of the call, to run it again.
        let summary = json!({
            "toolId": tool_id,
            "input": message["input"],
            "ctx": body["ctx"],
            "step": body["step"],
            "modelCallId": body["modelCallId"],
            "timeoutMs": timeout_ms,
        });
        let started = Instant::now();
        let invoking = self.invoke(&message, &request_id, timeout_ms);
        // Cancelled: the request is dropped and its connection with it.
        let answer = match entered.as_mut() {
            Some(entered) => tokio::select! {
                answer = invoking => Some(answer),
                _ = &mut entered.cancelled => None,
            },
            None => Some(invoking.await),
        };
        drop(entered);
        let call_id = opened
            .as_ref()
            .map_or_else(|| fresh_id("call"), |g| g.call_id.clone());
        let mut pause = Value::Null;
        if let Some(grant) = &opened {
            if let Some(answer) = answer.as_ref().filter(|a| a.body["kind"] == "pause") {
                let name = text(&answer.body, "name");
                let _ = self
                    .runtime
                    .pause(
                        &grant.call_id,
                        answer.body["timeoutMs"].as_u64(),
                        name.clone(),
                    )
                    .await;
                if let (Some(wait), Ok(mut paused)) = (&grant.wait_token, self.paused.lock()) {
                    paused.insert(
                        grant.call_id.clone(),
                        Paused {
                            wait_id: wait.id.clone(),
                            link: wait.url.clone(),
                            request_id: request_id.clone(),
                        },
                    );
                }
                pause = json!({
                    "name": name,
                    "timeoutMs": answer.body["timeoutMs"],
                    "outputSchema": entry_output(self, &tool_id),
                });
            }
            let _ = self.runtime.answer_call(&grant.call_id).await;
        }
        let (duration_ms, response) = match &answer {
            Some(answer) => (
                answer.duration_ms,
                json!({"status": answer.status, "body": answer.body}),
            ),
            None => (
                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                Value::Null,
            ),
        };
        let mut outcome = json!({
            "callId": call_id,
            "toolId": tool_id,
            "requestId": request_id,
            "idempotencyKey": key,
            "durationMs": duration_ms,
            "request": self.shown_request(&message, &request_id, timeout_ms),
            "response": response,
            "pause": pause,
            "call": summary,
        });
        if answer.is_none() {
            outcome["cancelled"] = Value::Bool(true);
        }
        self.history.add(&outcome).await;
        json_answer(StatusCode::OK, &outcome)
    }

    /// `POST /inspector/api/check`: `{checkId, config, trace}`.
    pub(super) async fn check(&self, body: &Value) -> Response<InspectorBody> {
        let Some(check_id) = text(body, "checkId") else {
            return error(StatusCode::BAD_REQUEST, "checkId is required");
        };
        let message = json!({
            "v": 2,
            "kind": "check-invoke",
            "check": {"id": check_id},
            "config": body.get("config").cloned().unwrap_or_else(|| json!({})),
            "trace": body.get("trace").cloned().unwrap_or_else(|| json!({})),
        });
        let request_id = fresh_id("insp");
        let answer = self.invoke(&message, &request_id, DEFAULT_TIMEOUT_MS).await;
        json_answer(
            StatusCode::OK,
            &json!({
                "checkId": check_id,
                "requestId": request_id,
                "durationMs": answer.duration_ms,
                "request": self.shown_request(&message, &request_id, DEFAULT_TIMEOUT_MS),
                "response": {"status": answer.status, "body": answer.body},
            }),
        )
    }
}

/// The output schema of `tool_id` in the current index.
fn entry_output(inspector: &Inspector, tool_id: &str) -> Value {
    inspector
        .state()
        .index
        .and_then(|index| {
            index
                .tools
                .iter()
                .find(|t| t.id == tool_id)
                .map(|t| t.output.clone())
        })
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspector::Target;
    use kindgi_protocol::Secret;
    use kindgi_runtime::{DevRuntime, RuntimeConfig};

    fn inspector(dir: &std::path::Path) -> Inspector {
        let runtime = DevRuntime::open(RuntimeConfig::new(dir)).expect("runtime");
        let token = kindgi::Token::new("page-token").expect("token");
        let target = Target {
            url: "http://127.0.0.1:9".to_owned(),
            token: Secret::new("service-sentinel"),
        };
        Inspector::new("inspect", token, 4100, target, runtime)
    }

    #[test]
    fn a_shown_request_keeps_the_credentials_the_inspector_added() {
        let dir = tempfile::tempdir().expect("dir");
        let inspector = inspector(dir.path());
        let message = json!({"v": 2, "kind": "invoke", "tool": {"id": "acme.t"}, "input": {},
            "ctx": {"tenantId": "t", "runId": "r", "secrets": {"GIVEN": "typed-in-the-page"},
                "toolFiles": {"url": "http://127.0.0.1:1/v1/tool-files", "token": "files-sentinel"},
                "waitToken": {"id": "w1", "url": "http://127.0.0.1:1/v1/waits/link-sentinel"}}});
        let shown = inspector.shown_request(&message, "insp_1", 500);
        let text = shown.to_string();
        assert!(!text.contains("sentinel"), "{text}");
        assert_eq!(shown["body"]["ctx"]["toolFiles"]["token"], HIDDEN);
        assert_eq!(shown["body"]["ctx"]["waitToken"]["url"], HIDDEN);
        assert_eq!(shown["body"]["ctx"]["waitToken"]["id"], "w1");
        assert_eq!(
            shown["body"]["ctx"]["secrets"]["GIVEN"],
            "typed-in-the-page"
        );
        assert_eq!(
            shown["headers"],
            json!({"content-type": "application/json", "kindgi-pack-token": "$KINDGI_SERVICE_TOKEN",
                "kindgi-request-id": "insp_1", "kindgi-timeout-ms": "500",
                "kindgi-run-id": "r", "kindgi-tenant-id": "t"})
        );
        assert_eq!(shown["url"], "http://127.0.0.1:9/v1/invoke");
    }

    #[test]
    fn the_key_is_the_one_a_runtime_derives() {
        let body = json!({"ctx": {"runId": "run-1"}, "step": "s", "modelCallId": "call-7"});
        assert_eq!(
            key_of(&body, "acme.t"),
            Some(idempotency_key("run-1", "s", "acme.t", Some("call-7")).to_string())
        );
        let defaults = json!({"runId": "run-1"});
        assert_eq!(
            key_of(&defaults, "acme.t"),
            Some(idempotency_key("run-1", "inspector", "acme.t", None).to_string())
        );
        assert_eq!(key_of(&json!({}), "acme.t"), None);
    }
}
