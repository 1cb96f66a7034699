//! Request messages and their parsing, with the exact error of each way a
//! body can be malformed.

use serde_json::{Map, Value};

use crate::{CallContext, ErrorCode, ErrorResponse};

/// A request message: run a tool, or run a guardrail check. A kind this
/// crate doesn't know is a [`ParseError`] (`unexpected-message-kind`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// `kind: "invoke"`.
    Invoke(ToolInvoke),
    /// `kind: "check-invoke"`.
    CheckInvoke(CheckInvoke),
}

/// Run a tool handler.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInvoke {
    /// Which tool.
    pub tool: ToolRef,
    /// The tool's input (any JSON; `null` when absent).
    pub input: Value,
    /// The call's context, on the heap: some 400 bytes, which every step
    /// from the body's read to a handler would otherwise copy.
    pub ctx: Box<CallContext>,
}

/// The tool an invoke names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    /// Tool id.
    pub id: String,
    /// When set, a different indexed version is refused.
    pub version: Option<String>,
}

/// Run a guardrail check: `evaluate(config, trace)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckInvoke {
    /// Which check.
    pub check: CheckRef,
    /// The guardrail's config.
    pub config: Map<String, Value>,
    /// The run trace the check evaluates (`null` when absent).
    pub trace: Value,
}

/// The check a check-invoke names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRef {
    /// Check id (the indexed guardrail's `checkId`, else its `id`).
    pub id: String,
}

/// Why a body is not a well-formed v2 request: the error code and the
/// contract's exact message. Answer it as an [`ErrorResponse`] (200).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// `malformed-message`, `unknown-protocol-version` or
    /// `unexpected-message-kind`.
    pub code: ErrorCode,
    /// The contract's message.
    pub message: String,
}

impl ParseError {
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ParseError {}

impl From<ParseError> for ErrorResponse {
    fn from(error: ParseError) -> Self {
        ErrorResponse::new(error.code, error.message)
    }
}

impl From<ParseError> for crate::Response {
    fn from(error: ParseError) -> Self {
        crate::Response::Error(error.into())
    }
}

fn malformed(message: impl Into<String>) -> ParseError {
    ParseError::new(ErrorCode::MalformedMessage, message)
}

/// JSON text of a value as JavaScript's `JSON.stringify` names it in an
/// error message: an absent value is `undefined`.
fn json_or_undefined(value: Option<&Value>) -> String {
    value.map_or_else(|| "undefined".to_owned(), Value::to_string)
}

/// Parses a request body, checking in the protocol's order: JSON, object,
/// `v`, `kind`, then the fields of that kind.
///
/// # Errors
///
/// The error response to answer (status 200) when the body is not a
/// well-formed v2 request, with the contract's exact message:
///
/// ```
/// use kindgi_protocol::{parse_request, ErrorCode};
/// let err = parse_request(br#"{"v":3}"#).unwrap_err();
/// assert_eq!(err.code, ErrorCode::UnknownProtocolVersion);
/// assert_eq!(err.message, "Expected protocol v2, got 3");
/// ```
pub fn parse_request(body: &[u8]) -> Result<Request, ParseError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| malformed("Request body is not valid JSON"))?;
    parse_request_value(value)
}

/// What [`parse_request`] answers a body that is no JSON object at all —
/// not JSON, or JSON of another type — found by a pass over its syntax
/// that builds nothing: for a body too large to parse, whose answer must
/// still be the contract's. `None` for a JSON object, whatever
/// [`parse_request`] would then say of its fields.
///
/// ```
/// use kindgi_protocol::{not_an_object, ErrorCode};
/// let err = not_an_object(b"[0,0,0]").expect("not an object");
/// assert_eq!((err.code, err.message.as_str()), (ErrorCode::MalformedMessage, "Message must be a JSON object"));
/// assert_eq!(not_an_object(b"[0,").map(|e| e.message), Some("Request body is not valid JSON".to_owned()));
/// assert_eq!(not_an_object(br#" {"v":3}"#), None);
/// ```
pub fn not_an_object(body: &[u8]) -> Option<ParseError> {
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        return Some(malformed("Request body is not valid JSON"));
    }
    let first = body.iter().find(|b| !b" \t\r\n".contains(b));
    (first != Some(&b'{')).then(|| malformed("Message must be a JSON object"))
}

/// Parses a request already read as JSON. See [`parse_request`].
///
/// # Errors
///
/// As [`parse_request`], except that the body is already JSON.
pub fn parse_request_value(value: Value) -> Result<Request, ParseError> {
    let Value::Object(mut message) = value else {
        return Err(malformed("Message must be a JSON object"));
    };
    // JSON has one number type: `2.0` is the number 2, as JSON.parse reads it.
    if message.get("v").and_then(Value::as_f64) != Some(2.0) {
        return Err(ParseError::new(
            ErrorCode::UnknownProtocolVersion,
            format!(
                "Expected protocol v2, got {}",
                json_or_undefined(message.get("v"))
            ),
        ));
    }
    match message.get("kind").and_then(Value::as_str) {
        Some("invoke") => parse_invoke(&mut message).map(Request::Invoke),
        Some("check-invoke") => parse_check_invoke(&mut message).map(Request::CheckInvoke),
        _ => Err(ParseError::new(
            ErrorCode::UnexpectedMessageKind,
            format!(
                "Unknown request kind {}",
                json_or_undefined(message.get("kind"))
            ),
        )),
    }
}

fn parse_invoke(message: &mut Map<String, Value>) -> Result<ToolInvoke, ParseError> {
    let tool = message.get("tool").and_then(Value::as_object);
    let id = tool
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| malformed("`tool.id` is required"))?
        .to_owned();
    let version = match tool.and_then(|t| t.get("version")) {
        None => None,
        Some(Value::String(v)) => Some(v.clone()),
        Some(_) => return Err(malformed("`tool.version` must be a string")),
    };
    let ctx = parse_context(message.remove("ctx"))?;
    let input = message.remove("input").unwrap_or(Value::Null);
    Ok(ToolInvoke {
        tool: ToolRef { id, version },
        input,
        ctx: Box::new(ctx),
    })
}

fn parse_check_invoke(message: &mut Map<String, Value>) -> Result<CheckInvoke, ParseError> {
    let id = message
        .get("check")
        .and_then(Value::as_object)
        .and_then(|c| c.get("id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| malformed("`check.id` is required"))?
        .to_owned();
    let Some(Value::Object(config)) = message.remove("config") else {
        return Err(malformed("`config` must be an object"));
    };
    let trace = message.remove("trace").unwrap_or(Value::Null);
    Ok(CheckInvoke {
        check: CheckRef { id },
        config,
        trace,
    })
}

/// Reads `ctx`: `tenantId` and `runId` must be strings; every other known
/// field must have its wire type; unknown fields are accepted and dropped.
fn parse_context(ctx: Option<Value>) -> Result<CallContext, ParseError> {
    let needs_ids = || malformed("`ctx` needs string `tenantId` and `runId`");
    let Some(Value::Object(mut ctx)) = ctx else {
        return Err(needs_ids());
    };
    let (Some(Value::String(tenant_id)), Some(Value::String(run_id))) =
        (ctx.remove("tenantId"), ctx.remove("runId"))
    else {
        return Err(needs_ids());
    };
    let mut parsed = CallContext {
        tenant_id,
        run_id,
        ..CallContext::default()
    };
    parsed.project_id = take_string(&mut ctx, "projectId")?;
    parsed.org_id = take_string(&mut ctx, "orgId")?;
    parsed.request_id = take_string(&mut ctx, "requestId")?;
    parsed.idempotency_key = take_string(&mut ctx, "idempotencyKey")?;
    parsed.env = take_typed(&mut ctx, "env", "an object of strings")?;
    parsed.secrets = take_object(&mut ctx, "secrets")?;
    parsed.connections = take_typed(&mut ctx, "connections", "an object of connections")?;
    parsed.config = take_object(&mut ctx, "config")?;
    parsed.settings = take_typed(&mut ctx, "settings", "an object of objects")?;
    if parsed
        .settings
        .as_ref()
        .is_some_and(|s| s.values().any(|v| !v.is_object()))
    {
        return Err(malformed("`ctx.settings` must be an object of objects"));
    }
    parsed.wait_token = take_typed(
        &mut ctx,
        "waitToken",
        "an object with string `id` and `url`",
    )?;
    parsed.tool_files = take_typed(
        &mut ctx,
        "toolFiles",
        "an object with string `url` and `token`",
    )?;
    Ok(parsed)
}

fn take_string(ctx: &mut Map<String, Value>, key: &str) -> Result<Option<String>, ParseError> {
    match ctx.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(malformed(format!("`ctx.{key}` must be a string"))),
    }
}

fn take_object(
    ctx: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<Map<String, Value>>, ParseError> {
    match ctx.remove(key) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => Err(malformed(format!("`ctx.{key}` must be an object"))),
    }
}

/// Deserializes a context field, never echoing its value (it may hold a
/// credential) in the error.
fn take_typed<T: serde::de::DeserializeOwned>(
    ctx: &mut Map<String, Value>,
    key: &str,
    expected: &str,
) -> Result<Option<T>, ParseError> {
    match ctx.remove(key) {
        None => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|_| malformed(format!("`ctx.{key}` must be {expected}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message_of(body: &str) -> (ErrorCode, String) {
        let e = parse_request(body.as_bytes()).expect_err("should fail");
        (e.code, e.message)
    }

    #[test]
    fn parse_errors_in_order() {
        use ErrorCode::*;
        let cases = [
            ("{", MalformedMessage, "Request body is not valid JSON"),
            ("[1]", MalformedMessage, "Message must be a JSON object"),
            (
                "{}",
                UnknownProtocolVersion,
                "Expected protocol v2, got undefined",
            ),
            (
                r#"{"v":"2"}"#,
                UnknownProtocolVersion,
                r#"Expected protocol v2, got "2""#,
            ),
            (
                r#"{"v":2.5}"#,
                UnknownProtocolVersion,
                "Expected protocol v2, got 2.5",
            ),
            (
                r#"{"v":2.0}"#,
                UnexpectedMessageKind,
                "Unknown request kind undefined",
            ),
            (
                r#"{"v":2}"#,
                UnexpectedMessageKind,
                "Unknown request kind undefined",
            ),
            (
                r#"{"v":2,"kind":"x"}"#,
                UnexpectedMessageKind,
                r#"Unknown request kind "x""#,
            ),
            (
                r#"{"v":2,"kind":"invoke"}"#,
                MalformedMessage,
                "`tool.id` is required",
            ),
            (
                r#"{"v":2,"kind":"invoke","tool":{"id":"a","version":1}}"#,
                MalformedMessage,
                "`tool.version` must be a string",
            ),
            (
                r#"{"v":2,"kind":"invoke","tool":{"id":"a"},"ctx":{"tenantId":"t"}}"#,
                MalformedMessage,
                "`ctx` needs string `tenantId` and `runId`",
            ),
            (
                r#"{"v":2,"kind":"check-invoke"}"#,
                MalformedMessage,
                "`check.id` is required",
            ),
            (
                r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":[]}"#,
                MalformedMessage,
                "`config` must be an object",
            ),
        ];
        for (body, code, message) in cases {
            assert_eq!(message_of(body), (code, message.to_owned()), "body {body}");
        }
    }

    #[test]
    fn unknown_ctx_fields_are_accepted() {
        let body = r#"{"v":2,"kind":"invoke","tool":{"id":"a"},"input":{},
            "ctx":{"tenantId":"t","runId":"r","fromTheFuture":true,"requestId":"q"}}"#;
        let Ok(Request::Invoke(invoke)) = parse_request(body.as_bytes()) else {
            panic!("should parse");
        };
        assert_eq!(invoke.ctx.request_id.as_deref(), Some("q"));
    }

    #[test]
    fn bad_secret_type_is_not_echoed() {
        let body = r#"{"v":2,"kind":"invoke","tool":{"id":"a"},"input":{},
            "ctx":{"tenantId":"t","runId":"r","connections":"sentinel-value"}}"#;
        let (_, message) = message_of(body);
        assert!(!message.contains("sentinel-value"));
    }
}
