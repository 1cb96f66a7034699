//! Response messages: what running pack code produced.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ProtocolV2;

/// A response message: every outcome of running pack code, answered 200.
///
/// A kind this crate doesn't know doesn't read: a runtime must understand
/// every answer it acts on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum Response {
    /// `kind: "result"`: a tool's output.
    #[serde(rename = "result")]
    Result(ToolResult),
    /// `kind: "pause"`: the call waits for another system (protocol 2.8.0).
    #[serde(rename = "pause")]
    Pause(ToolPause),
    /// `kind: "check-result"`: a guardrail check's result.
    #[serde(rename = "check-result")]
    CheckResult(CheckResultMessage),
    /// `kind: "error"`: why running pack code didn't produce a result.
    #[serde(rename = "error")]
    Error(ErrorResponse),
}

impl Response {
    /// A tool result carrying `output`.
    pub fn result(output: Value) -> Self {
        Self::Result(ToolResult {
            v: ProtocolV2,
            output,
        })
    }

    /// A check result.
    pub fn check_result(result: CheckResult) -> Self {
        Self::CheckResult(CheckResultMessage {
            v: ProtocolV2,
            result,
        })
    }

    /// The error code, when this is an error.
    pub fn error_code(&self) -> Option<&ErrorCode> {
        match self {
            Self::Error(e) => Some(&e.code),
            _ => None,
        }
    }
}

impl From<ErrorResponse> for Response {
    fn from(error: ErrorResponse) -> Self {
        Self::Error(error)
    }
}

/// `{v:2, kind:"result", output}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Protocol version.
    pub v: ProtocolV2,
    /// The handler's return value, valid against the tool's output schema.
    pub output: Value,
}

/// `{v:2, kind:"pause", timeoutMs?, name?}` (protocol 2.8.0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPause {
    /// Protocol version.
    pub v: ProtocolV2,
    /// How long the run waits for the answer, at most 24 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// What the run waits for, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ToolPause {
    /// The longest wait a pause may ask for: 24 days.
    pub const MAX_TIMEOUT_MS: u64 = 24 * 24 * 60 * 60 * 1000;
}

/// `{v:2, kind:"check-result", result}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResultMessage {
    /// Protocol version.
    pub v: ProtocolV2,
    /// The check's result.
    pub result: CheckResult,
}

/// What a guardrail check found — open beyond the listed fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    /// Whether the trace passed the check.
    pub passed: bool,
    /// Why it didn't pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A judge model's answer, for an LLM-judged check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_response: Option<String>,
    /// Anything else the check reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Map<String, Value>>,
    /// Fields beyond the listed ones, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CheckResult {
    /// A passing result.
    pub fn pass() -> Self {
        Self {
            passed: true,
            ..Self::default()
        }
    }

    /// A failing result with its reason.
    pub fn fail(reason: impl Into<String>) -> Self {
        Self {
            passed: false,
            reason: Some(reason.into()),
            ..Self::default()
        }
    }
}

impl From<bool> for CheckResult {
    fn from(passed: bool) -> Self {
        Self {
            passed,
            ..Self::default()
        }
    }
}

open_set! {
    /// Why running pack code didn't produce a result (an error's `code`).
    ///
    /// A code this crate doesn't know, from a newer pack service, reads as
    /// `Other` and is written back as it came:
    ///
    /// ```
    /// use kindgi_protocol::ErrorCode;
    /// let code: ErrorCode = serde_json::from_str("\"quota-exceeded\"").unwrap();
    /// assert_eq!(code, ErrorCode::other("quota-exceeded"));
    /// assert_eq!(code.as_str(), "quota-exceeded");
    /// assert_eq!(ErrorCode::other("handler-throw"), ErrorCode::HandlerThrow);
    /// ```
    ErrorCode {
        /// The input failed the tool's input schema (or a check's config its
        /// config schema).
        InputValidationFailed = "input-validation-failed",
        /// The handler's output failed the tool's output schema.
        OutputValidationFailed = "output-validation-failed",
        /// The handler's module could not be loaded.
        HandlerImportFailed = "handler-import-failed",
        /// The module doesn't export a handler of the right shape.
        HandlerShapeInvalid = "handler-shape-invalid",
        /// The handler threw (returned an error, or panicked).
        HandlerThrow = "handler-throw",
        /// The app refused a connection's token (protocol 2.9.0).
        ConnectionRejected = "connection-rejected",
        /// The check's module doesn't export a check of the right shape.
        CheckShapeInvalid = "check-shape-invalid",
        /// The request wasn't a well-formed message.
        MalformedMessage = "malformed-message",
        /// The request's `v` wasn't 2.
        UnknownProtocolVersion = "unknown-protocol-version",
        /// The request's `kind` wasn't known.
        UnexpectedMessageKind = "unexpected-message-kind",
        /// The pack has no tool of that id.
        ToolNotInPack = "tool-not-in-pack",
        /// The pack has no check of that id.
        CheckNotInPack = "check-not-in-pack",
        /// The caller asked for another version of the tool.
        ToolVersionMismatch = "tool-version-mismatch",
        /// The call passed its deadline.
        DeadlineExceeded = "deadline-exceeded",
        /// The caller closed the connection.
        Cancelled = "cancelled",
        /// A tool tried to pause without a wait token (protocol 2.8.0).
        PauseNotAvailable = "pause-not-available",
    }
}

/// `{v:2, kind:"error", code, message, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorResponse {
    /// Protocol version.
    pub v: ProtocolV2,
    /// Why.
    pub code: ErrorCode,
    /// A sentence saying what happened.
    pub message: String,
    /// Present when the error is about a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// Present when the error is about a check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_id: Option<String>,
    /// The serialized throw for `handler-throw` (boxed: most errors have
    /// none, and every response is the size of its largest kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Box<ThrownCause>>,
    /// Present for input / output validation failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
    /// Present for `connection-rejected`: the tool's name for the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
}

impl ErrorResponse {
    /// An error with just a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            v: ProtocolV2,
            code,
            message: message.into(),
            tool_id: None,
            check_id: None,
            cause: None,
            issues: None,
            connection: None,
        }
    }

    /// The same error, about a tool.
    #[must_use]
    pub fn for_tool(mut self, tool_id: impl Into<String>) -> Self {
        self.tool_id = Some(tool_id.into());
        self
    }

    /// The same error, about a check.
    #[must_use]
    pub fn for_check(mut self, check_id: impl Into<String>) -> Self {
        self.check_id = Some(check_id.into());
        self
    }

    /// The same error with its validation issues.
    #[must_use]
    pub fn with_issues(mut self, issues: Vec<Issue>) -> Self {
        self.issues = Some(issues);
        self
    }

    /// The same error with the serialized throw.
    #[must_use]
    pub fn with_cause(mut self, cause: ThrownCause) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }
}

/// A serialized throw: `{name, message, stack}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrownCause {
    /// The error's type name (`Error`, `TimeoutError`, `panic`).
    pub name: String,
    /// The error's message.
    pub message: String,
    /// Where it came from: the error's source chain or a backtrace.
    pub stack: String,
}

/// One validation issue, Ajv-shaped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// JSON Pointer to the failing value (`""` for the root).
    pub instance_path: String,
    /// URI fragment of the failing schema keyword (`#/properties/name/type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
    /// The failing keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// Keyword parameters as Ajv reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// Human-readable message in Ajv's words.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_wire_shape() {
        let e = ErrorResponse::new(ErrorCode::ToolNotInPack, "This pack has no tool \"x\"")
            .for_tool("x");
        assert_eq!(
            serde_json::to_string(&Response::from(e)).expect("serializes"),
            r#"{"kind":"error","v":2,"code":"tool-not-in-pack","message":"This pack has no tool \"x\"","toolId":"x"}"#
        );
    }

    #[test]
    fn result_and_pause_wire_shape() {
        assert_eq!(
            serde_json::to_string(&Response::result(serde_json::json!({"a":1}))).expect("ok"),
            r#"{"kind":"result","v":2,"output":{"a":1}}"#
        );
        let pause = Response::Pause(ToolPause {
            v: ProtocolV2,
            timeout_ms: Some(5),
            name: None,
        });
        assert_eq!(
            serde_json::to_string(&pause).expect("ok"),
            r#"{"kind":"pause","v":2,"timeoutMs":5}"#
        );
    }

    #[test]
    fn every_code_round_trips() {
        assert_eq!(ErrorCode::BUILT_IN.len(), 16);
        for code in ErrorCode::BUILT_IN {
            let json = serde_json::to_value(code).expect("ok");
            assert_eq!(json, Value::String(code.as_str().to_owned()));
            assert_eq!(
                &serde_json::from_value::<ErrorCode>(json).expect("reads"),
                code
            );
        }
        assert_eq!(
            ErrorCode::PauseNotAvailable.built_in_str(),
            Some("pause-not-available")
        );
    }

    #[test]
    fn an_unknown_code_reads_and_writes_back_as_sent() {
        let body = r#"{"kind":"error","v":2,"code":"quota-exceeded","message":"m"}"#;
        let response: Response = serde_json::from_str(body).expect("reads");
        let code = response.error_code().expect("an error");
        assert!(matches!(code, ErrorCode::Other(_)));
        assert_eq!(code.as_str(), "quota-exceeded");
        assert_eq!(code.built_in_str(), None);
        assert_eq!(serde_json::to_string(&response).expect("writes"), body);
        let empty = r#"{"kind":"error","v":2,"code":"","message":"m"}"#;
        assert!(serde_json::from_str::<Response>(empty).is_err());
    }
}
