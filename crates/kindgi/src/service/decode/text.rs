//! The fast reader of a request (feature `fast-input`): its envelope read
//! by hand ([`super::envelope`]), a tool invoke's input read from its text
//! straight into the handler's type where the input starts, every value
//! checked against the tool's input schema as it is read (the handler's
//! [`TextReader`](crate::authoring::text_input::TextReader)), and the
//! envelope read on from where that read ended. No tree of a valid input
//! is built, and its text is gone through once.
//!
//! An input that reader refuses with one error is answered with its
//! issues ([`kindgi_validate::Validator::read_checked_value`] finds them
//! from its text); any other it can't settle — a default to fill, several
//! errors — is parsed into a tree for the plain path. An input that comes
//! before its message's `kind` or `tool` is kept as its text (a
//! `&RawValue` borrow) and read so once the envelope is read. Whatever is
//! not a well-formed request gives `None`: [`parse_request`] then reads it
//! and finds the contract's answer.
//!
//! [`parse_request`]: kindgi_protocol::parse_request

use std::panic::AssertUnwindSafe;

use kindgi_protocol::{CallContext, CheckInvoke, CheckRef, ToolRef};
use kindgi_validate::{TextRefusal, ValueRead};
use serde_json::Value;
use serde_json::value::RawValue;

use super::envelope::{self, Message, Named};
use super::{Decoded, Input, ToolCall};
use crate::service::invoker::{Invoker, ToolRuntime};

/// A message's input as the envelope's read left it.
enum Read<'a> {
    /// Read by its tool's reader where it started.
    Tool(Input),
    /// Its text, for what follows the envelope's read to settle.
    Text(&'a str),
}

/// `body` as a well-formed request, a tool invoke's input read by its
/// tool's reader; `None` for the plain path.
pub(super) fn decode(invoker: &Invoker, body: &[u8]) -> Option<Decoded> {
    let text = std::str::from_utf8(body).ok()?;
    let message = envelope::read(text, |kind, tool, rest| {
        read_input(invoker, kind, tool, rest)
    })?;
    if message.kind == "check-invoke" {
        return check_invoke(message).map(Decoded::Check);
    }
    let (tool, input, ctx) = invoke_parts(message)?;
    let input = match input {
        None => Input::Unchecked(Value::Null),
        Some(Read::Tool(input)) => input,
        Some(Read::Text(text)) => match invoker.tools.get(&tool.id) {
            Some(runtime) => read(runtime, text)?.0,
            None => tree(text)?,
        },
    };
    Some(Decoded::Tool(ToolCall { tool, input, ctx }))
}

/// The input that starts `text`, and the bytes it takes: read by its
/// tool's reader when the message is an invoke of a tool this pack has,
/// as far as the envelope read before it says; its text otherwise.
fn read_input<'a>(
    invoker: &Invoker,
    kind: Option<&str>,
    tool: Option<&Named>,
    text: &'a str,
) -> Option<(Read<'a>, usize)> {
    let runtime = tool.and_then(|tool| invoker.tools.get(&tool.id));
    match runtime {
        Some(runtime) if kind == Some("invoke") => {
            read(runtime, text).map(|(input, len)| (Read::Tool(input), len))
        }
        _ => {
            let (raw, len) = envelope::value::<&RawValue>(kind, tool, text)?;
            Some((Read::Text(raw.get()), len))
        }
    }
}

/// The check invoke read as `message`, when it is a well-formed one.
fn check_invoke(message: Message<'_, Read<'_>>) -> Option<CheckInvoke> {
    if message.v != 2.0 {
        return None;
    }
    // A check invoke's `input` means nothing, but the plain path parses
    // it: one it refuses (`1e400`, a lone surrogate) makes the body
    // malformed there. (Its kind came before it, so it is kept as text.)
    match message.input {
        None => {}
        Some(Read::Text(input)) if serde_json::from_str::<Value>(input).is_ok() => {}
        Some(_) => return None,
    }
    let check = message.check?;
    if check.id.is_empty() {
        return None;
    }
    Some(CheckInvoke {
        check: CheckRef { id: check.id },
        config: message.config?,
        trace: message.trace.unwrap_or(Value::Null),
    })
}

/// The tool, input and context of an invoke read as `message`, when it is
/// a well-formed one.
fn invoke_parts<I>(message: Message<'_, I>) -> Option<(ToolRef, Option<I>, Box<CallContext>)> {
    if message.v != 2.0 || message.kind != "invoke" {
        return None;
    }
    let tool = message.tool?;
    let ctx = message.ctx?;
    if tool.id.is_empty() {
        return None;
    }
    let tool = ToolRef {
        id: tool.id,
        version: tool.version,
    };
    Some((tool, message.input, ctx))
}

/// The value that starts `text` read by `tool`'s reader, and the bytes it
/// took; `None` when it is not one JSON value a tree can hold (a number
/// too large, a lone surrogate).
fn read(tool: &ToolRuntime, text: &str) -> Option<(Input, usize)> {
    let reader = tool.handler.read_text;
    let read = std::panic::catch_unwind(AssertUnwindSafe(|| reader(text, &tool.input)));
    let ValueRead { read, len } = match read {
        Ok(read) => read?,
        Err(payload) => {
            let (_, len) = envelope::value::<&RawValue>(None, None, text)?;
            return Some((Input::Panicked(payload), len));
        }
    };
    let input = match read {
        Ok(value) => Input::Checked(value),
        Err(TextRefusal::Invalid(issues)) => Input::Invalid(issues),
        // A default to fill, or not settled from the text: the plain path.
        Err(_) => tree(text.get(..len)?)?,
    };
    Some((input, len))
}

/// `text` parsed for the plain path.
fn tree(text: &str) -> Option<Input> {
    serde_json::from_str(text).ok().map(Input::Unchecked)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Pack, Tool, ToolContext, ToolError};

    async fn echo(input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        Ok(input)
    }

    fn invoker() -> Invoker {
        let pack = Pack::new().tool(
            Tool::new("acme.echo")
                .description("Echoes its words.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "words": {"type": "array", "items": {"type": "string"}},
                        "times": {"type": "integer", "minimum": 1, "maximum": 9}
                    },
                    "required": ["words"],
                    "additionalProperties": false
                }))
                .handler(echo),
        );
        crate::testing::invoker_of(&pack).expect("loads")
    }

    /// The input of a call of `acme.echo` with `input`, as read.
    fn read_input(invoker: &Invoker, input: Value) -> Input {
        let body = json!({
            "v": 2,
            "kind": "invoke",
            "tool": {"id": "acme.echo"},
            "input": input,
            "ctx": {"tenantId": "t", "runId": "r"}
        });
        let body = serde_json::to_vec(&body).expect("JSON");
        match decode(invoker, &body) {
            Some(Decoded::Tool(call)) => call.input,
            other => panic!("not a tool call: {other:?}"),
        }
    }

    #[test]
    fn an_input_is_read_checked_answered_from_its_text_or_left_to_its_tree() {
        let invoker = invoker();
        let words: Vec<String> = (0..200).map(|i| format!("word {i}")).collect();
        let read = read_input(&invoker, json!({"words": words, "times": 10}));
        let Input::Invalid(issues) = read else {
            panic!("not answered from its text: {read:?}");
        };
        assert_eq!(
            serde_json::to_value(issues).expect("JSON"),
            json!([{
                "instancePath": "/times",
                "schemaPath": "#/properties/times/maximum",
                "keyword": "maximum",
                "params": {"comparison": "<=", "limit": 9},
                "message": "must be <= 9"
            }])
        );
        // Its one error in the last item: found past what the typed read
        // passed, with the same issue.
        let mut wrong = json!(words);
        wrong[199] = json!(7);
        let read = read_input(&invoker, json!({"words": wrong, "times": 3}));
        let Input::Invalid(issues) = read else {
            panic!("not answered from its text: {read:?}");
        };
        assert_eq!(issues[0].instance_path, "/words/199");
        assert_eq!(issues[0].keyword.as_deref(), Some("type"));
        // Two errors: its tree, for the plain path.
        let read = read_input(&invoker, json!({"words": words, "times": 10, "x": 1}));
        assert!(matches!(read, Input::Unchecked(_)), "{read:?}");
        // Valid: read into the handler's type.
        let read = read_input(&invoker, json!({"words": words, "times": 9}));
        assert!(matches!(read, Input::Checked(_)), "{read:?}");
    }

    #[test]
    fn what_is_not_a_well_formed_request_goes_to_the_plain_path() {
        let invoker = invoker();
        for body in [
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":[]}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{},"input":1e400}"#,
            r#"{"v":3,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t"}}"#,
            r#"{"v":2,"kind":"invoke","tool":["acme.echo"],"input":{},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{"words":[1e400]},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"nope"},"input":[1e400],"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r"}} x"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r","projectId":null}}"#,
        ] {
            assert!(decode(&invoker, body.as_bytes()).is_none(), "{body}");
        }
    }

    #[test]
    fn a_key_twice_goes_to_the_plain_path() {
        let invoker = invoker();
        let body = r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{"words":[1]},"input":{"words":["a"]},"ctx":{"tenantId":"t","runId":"r"}}"#;
        assert!(decode(&invoker, body.as_bytes()).is_none());
    }

    #[test]
    fn a_check_invoke_is_read_in_the_same_pass() {
        let invoker = invoker();
        let body = r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{"n":1},"trace":{"output":"x"}}"#;
        let Some(Decoded::Check(check)) = decode(&invoker, body.as_bytes()) else {
            panic!("a check invoke");
        };
        assert_eq!(check.check.id, "c");
        assert_eq!(check.trace["output"], "x");
    }
}
