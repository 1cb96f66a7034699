//! The calls the page made, kept in the dev runtime's store (so they
//! outlive a restart of `kindgi dev`), newest first, each as the call's
//! outcome: its request, its answer, and a paused call's posted output
//! once it came. The page opens one and runs it again.
//!
//! Secrets and connection tokens the page gave are not kept: the record
//! keeps their names, and a run again from it gets what the dev front
//! adds from `.kindgi/`.

use kindgi_runtime::DevRuntime;
use serde_json::{Value, json};

/// What stands in for a value not kept.
const NOT_KEPT: &str = "(not kept)";

/// The history, in the runtime's store.
#[derive(Debug)]
pub(crate) struct History {
    runtime: DevRuntime,
}

/// `ctx` with the values of its secrets and connections replaced.
fn hide(ctx: &mut Value) {
    for group in ["secrets", "connections"] {
        if let Some(values) = ctx.get_mut(group).and_then(Value::as_object_mut) {
            for value in values.values_mut() {
                *value = NOT_KEPT.into();
            }
        }
    }
}

/// The outcome as it is kept: no secret or connection values, and the
/// call to run again without them.
fn kept(outcome: &Value) -> Value {
    let mut record = outcome.clone();
    hide(&mut record["request"]["body"]["ctx"]);
    let ctx = &mut record["call"]["ctx"];
    let mut not_kept = Vec::new();
    if let Some(fields) = ctx.as_object_mut() {
        for group in ["secrets", "connections"] {
            if let Some(Value::Object(values)) = fields.remove(group) {
                not_kept.extend(values.keys().map(|name| json!(format!("{group}.{name}"))));
            }
        }
    }
    record["call"]["notKept"] = Value::Array(not_kept);
    record
}

impl History {
    /// The history in `runtime`'s store.
    pub(crate) fn new(runtime: &DevRuntime) -> Self {
        Self {
            runtime: runtime.clone(),
        }
    }

    /// Keeps a call's outcome, by its request id.
    pub(crate) async fn add(&self, outcome: &Value) {
        if let Some(id) = outcome["requestId"].as_str()
            && let Err(e) = self.runtime.keep_history(id, &kept(outcome)).await
        {
            tracing::warn!(error = %e, "the inspector could not keep a call in its history");
        }
    }

    /// Records the wait of the call of request `request_id` as it now is.
    pub(crate) async fn answered(&self, request_id: &str, wait: &Value) {
        if let Ok(Some(mut record)) = self.runtime.history_record(request_id).await {
            record["wait"] = wait.clone();
            let _ = self.runtime.keep_history(request_id, &record).await;
        }
    }

    /// Every kept call, newest first.
    pub(crate) async fn list(&self) -> Value {
        Value::Array(self.runtime.history().await.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_no_secret_or_connection_value() {
        let outcome = json!({
            "requestId": "r1",
            "request": {"body": {"ctx": {"tenantId": "t", "secrets": {"API_KEY": "sk-sentinel"},
                "connections": {"crm": {"accessToken": "tok-sentinel"}}}}},
            "call": {"ctx": {"tenantId": "t", "secrets": {"API_KEY": "sk-sentinel"},
                "connections": {"crm": {"accessToken": "tok-sentinel"}}}},
        });
        let record = kept(&outcome);
        let text = record.to_string();
        assert!(!text.contains("sentinel"), "{text}");
        assert_eq!(record["call"]["ctx"], json!({"tenantId": "t"}));
        assert_eq!(
            record["call"]["notKept"],
            json!(["secrets.API_KEY", "connections.crm"])
        );
        assert_eq!(
            record["request"]["body"]["ctx"]["secrets"],
            json!({"API_KEY": NOT_KEPT})
        );
    }
}
