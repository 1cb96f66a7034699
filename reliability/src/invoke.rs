//! Invoke messages and requests for the stress pack.

use serde_json::{Value, json};

use crate::http::Request;

/// An `invoke` message for `tool` with `input`, in run `run-1` of tenant
/// `t1`.
pub fn tool_message(tool: &str, input: Value) -> Value {
    json!({
        "v": 2,
        "kind": "invoke",
        "tool": {"id": tool},
        "input": input,
        "ctx": {"tenantId": "t1", "runId": "run-1"}
    })
}

/// A `check-invoke` message for `check`.
pub fn check_message(check: &str) -> Value {
    json!({
        "v": 2,
        "kind": "check-invoke",
        "check": {"id": check},
        "config": {},
        "trace": {"output": "hello"}
    })
}

/// `POST /v1/invoke` with `message` and the token.
pub fn invoke(token: &str, message: &Value) -> Request {
    Request::post("/v1/invoke").token(token).json(message)
}

/// `POST /v1/invoke` of `tool` with `input`.
pub fn call(token: &str, tool: &str, input: Value) -> Request {
    invoke(token, &tool_message(tool, input))
}

/// The error code of an answer body, if it is an error message.
pub fn error_code(body: &Value) -> Option<&str> {
    (body["kind"] == "error")
        .then(|| body["code"].as_str())
        .flatten()
}
