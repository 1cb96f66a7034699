//! Parse errors (CONTRACT §4): every one, in order, with its exact text.

use serde_json::{Value, json};

use super::ctx;
use crate::case::{Case, Checked, Feature, error_message, status};
use crate::http::{HttpRequest, RequestBody};
use crate::session::{Profile, Session};

/// A parse-error case: its id, what it sends, and the error it expects.
struct ParseError {
    id: &'static str,
    what: &'static str,
    body: fn() -> Vec<u8>,
    code: &'static str,
    message: &'static str,
}

fn bytes(value: Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

/// An invoke of `conformance.echo` of about 4 KiB whose input is `input`
/// with `PAD` made 4 000 `x`s, and `after` right after it: large enough
/// that a service may read the input apart from the rest of the body.
fn large_invoke(input: &str, after: &str) -> Vec<u8> {
    let input = input.replace("PAD", &"x".repeat(4000));
    format!(
        r#"{{"v":2,"kind":"invoke","tool":{{"id":"conformance.echo"}},"input":{input}{after},"ctx":{{"tenantId":"t1","runId":"r1"}}}}"#
    )
    .into_bytes()
}

const PARSE_ERRORS: [ParseError; 13] = [
    ParseError {
        id: "message.not-json",
        what: "A body that isn't JSON: malformed-message `Request body is not valid JSON`.",
        body: || b"{\"v\":2,".to_vec(),
        code: "malformed-message",
        message: "Request body is not valid JSON",
    },
    ParseError {
        id: "message.not-json.large-input",
        what: "A 4 KiB invoke of conformance.echo whose input isn't JSON (a comma before its closing brace): malformed-message `Request body is not valid JSON`.",
        body: || large_invoke(r#"{"message": "PAD",}"#, ""),
        code: "malformed-message",
        message: "Request body is not valid JSON",
    },
    ParseError {
        id: "message.not-json.after-input",
        what: "A 4 KiB invoke of conformance.echo whose input is JSON but a stray bracket follows it: malformed-message `Request body is not valid JSON`.",
        body: || large_invoke(r#"{"message": "PAD"}"#, "]"),
        code: "malformed-message",
        message: "Request body is not valid JSON",
    },
    ParseError {
        id: "message.not-object",
        what: "A JSON array: malformed-message `Message must be a JSON object`.",
        body: || b"[1,2]".to_vec(),
        code: "malformed-message",
        message: "Message must be a JSON object",
    },
    ParseError {
        id: "message.protocol-version",
        what: "v 3: unknown-protocol-version `Expected protocol v2, got 3`.",
        body: || {
            bytes(
                json!({"v": 3, "kind": "invoke", "tool": {"id": "conformance.echo"}, "input": {}, "ctx": ctx("r")}),
            )
        },
        code: "unknown-protocol-version",
        message: "Expected protocol v2, got 3",
    },
    ParseError {
        id: "message.protocol-version-string",
        what: "v \"2\": unknown-protocol-version `Expected protocol v2, got \"2\"`.",
        body: || {
            bytes(
                json!({"v": "2", "kind": "invoke", "tool": {"id": "conformance.echo"}, "input": {}, "ctx": ctx("r")}),
            )
        },
        code: "unknown-protocol-version",
        message: "Expected protocol v2, got \"2\"",
    },
    ParseError {
        id: "message.kind",
        what: "kind \"run\": unexpected-message-kind `Unknown request kind \"run\"`.",
        body: || bytes(json!({"v": 2, "kind": "run"})),
        code: "unexpected-message-kind",
        message: "Unknown request kind \"run\"",
    },
    ParseError {
        id: "message.tool-id",
        what: "An invoke without tool.id: malformed-message `` `tool.id` is required ``.",
        body: || bytes(json!({"v": 2, "kind": "invoke", "tool": {}, "input": {}, "ctx": ctx("r")})),
        code: "malformed-message",
        message: "`tool.id` is required",
    },
    ParseError {
        id: "message.tool-version",
        what: "tool.version 1 (a number): malformed-message `` `tool.version` must be a string ``.",
        body: || {
            bytes(
                json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo", "version": 1}, "input": {}, "ctx": ctx("r")}),
            )
        },
        code: "malformed-message",
        message: "`tool.version` must be a string",
    },
    ParseError {
        id: "message.ctx",
        what: "A ctx without runId: malformed-message `` `ctx` needs string `tenantId` and `runId` ``.",
        body: || {
            bytes(
                json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo"}, "input": {}, "ctx": {"tenantId": "t1"}}),
            )
        },
        code: "malformed-message",
        message: "`ctx` needs string `tenantId` and `runId`",
    },
    ParseError {
        id: "message.ctx-missing",
        what: "An invoke without ctx: malformed-message `` `ctx` needs string `tenantId` and `runId` ``.",
        body: || {
            bytes(
                json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo"}, "input": {}}),
            )
        },
        code: "malformed-message",
        message: "`ctx` needs string `tenantId` and `runId`",
    },
    ParseError {
        id: "message.check-id",
        what: "A check-invoke without check.id: malformed-message `` `check.id` is required ``.",
        body: || {
            bytes(json!({"v": 2, "kind": "check-invoke", "check": {}, "config": {}, "trace": {}}))
        },
        code: "malformed-message",
        message: "`check.id` is required",
    },
    ParseError {
        id: "message.check-config",
        what: "A check-invoke whose config is an array: malformed-message `` `config` must be an object ``.",
        body: || {
            bytes(
                json!({"v": 2, "kind": "check-invoke", "check": {"id": "conformance.checks.min-length"}, "config": [], "trace": {}}),
            )
        },
        code: "malformed-message",
        message: "`config` must be an object",
    },
];

pub(crate) fn cases() -> Vec<Case> {
    PARSE_ERRORS
        .iter()
        .enumerate()
        .map(|(i, e)| Case::new(e.id, Feature::Core, e.what, move |s| parse_error(s, i)))
        .collect()
}

async fn parse_error(s: Session, i: usize) -> Checked {
    let e = &PARSE_ERRORS[i];
    let service = s.service(Profile::Default).await?;
    let request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .header("content-type", "application/json")
        .body(RequestBody::Full((e.body)()));
    let response = s.send(&service, request).await?;
    status(&response, 200)?;
    error_message(&response.json()?, e.code, e.message)
}
