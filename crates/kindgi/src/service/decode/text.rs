//! The fast reader of a tool invoke (feature `fast-input`): the body's
//! members are split with the input kept as its text (a `&RawValue`
//! borrow), the rest read as [`parse_request_value`] reads a message, and
//! the input read from its text straight into the handler's type, every
//! value checked against the tool's input schema as it is read (the
//! handler's [`TextReader`](crate::authoring::text_input::TextReader)). No tree
//! of a valid input is built, and its text is parsed once.
//!
//! An input that reader refuses with one error is answered with its
//! issues ([`kindgi_validate::Validator::read_checked`] finds them from its
//! text); any other it can't settle — a default to fill, several errors —
//! is parsed into a tree for the plain path. Whatever is not a
//! well-formed tool invoke gives `None`: [`parse_request`] then reads it
//! and finds the contract's answer.
//!
//! [`parse_request`]: kindgi_protocol::parse_request

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use kindgi_protocol::{Request, parse_request_value};
use kindgi_validate::TextRefusal;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Input, ToolCall};
use crate::service::state::{Invoker, ToolRuntime};

/// `body` as a tool invoke with its input read by the tool's reader, or
/// `None` for the plain path.
pub(super) fn tool_call(invoker: &Invoker, body: &[u8]) -> Option<ToolCall> {
    let text = std::str::from_utf8(body).ok()?;
    // A key written with escapes can't be borrowed: the plain path.
    let members: BTreeMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    if members.get("kind").map(|kind| kind.get()) != Some(r#""invoke""#) {
        return None;
    }
    let mut message = Map::new();
    let mut input = None;
    for (key, value) in members {
        if key == "input" {
            input = Some(value.get());
        } else {
            message.insert(key.to_owned(), serde_json::from_str(value.get()).ok()?);
        }
    }
    let Ok(Request::Invoke(invoke)) = parse_request_value(Value::Object(message)) else {
        return None;
    };
    let input = match input {
        None => Input::Unchecked(Value::Null),
        Some(text) => match invoker.tools.get(&invoke.tool.id) {
            Some(tool) => read(tool, text)?,
            None => tree(text)?,
        },
    };
    Some(ToolCall {
        tool: invoke.tool,
        input,
        ctx: invoke.ctx,
    })
}

/// `text` read by `tool`'s reader; `None` when it is not one JSON value
/// a tree can hold (a number too large, a lone surrogate).
fn read(tool: &ToolRuntime, text: &str) -> Option<Input> {
    let reader = tool.handler.read_text;
    let read = std::panic::catch_unwind(AssertUnwindSafe(|| reader(text, &tool.input)));
    match read {
        Ok(Ok(value)) => Some(Input::Checked(value)),
        Ok(Err(TextRefusal::Invalid(issues))) => Some(Input::Invalid(issues)),
        Err(payload) => Some(Input::Panicked(payload)),
        // A default to fill, or not settled from the text: the plain path.
        Ok(Err(_)) => tree(text),
    }
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
        tool_call(invoker, &body).expect("a tool call").input
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
    fn what_is_not_a_well_formed_invoke_goes_to_the_plain_path() {
        let invoker = invoker();
        for body in [
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{}}"#,
            r#"{"v":3,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t"}}"#,
            r#"{"v":2,"kind":"invoke","tool":["acme.echo"],"input":{},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{"words":[1e400]},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"nope"},"input":[1e400],"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r"}} x"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{},"ctx":{"tenantId":"t","runId":"r","projectId":null}}"#,
        ] {
            assert!(tool_call(&invoker, body.as_bytes()).is_none(), "{body}");
        }
    }

    #[test]
    fn the_last_of_two_same_keys_counts_as_in_a_tree() {
        let invoker = invoker();
        let body = r#"{"v":2,"kind":"invoke","tool":{"id":"acme.echo"},"input":{"words":[1]},"input":{"words":["a"]},"ctx":{"tenantId":"t","runId":"r"}}"#;
        let call = tool_call(&invoker, body.as_bytes()).expect("a tool call");
        assert!(matches!(call.input, Input::Checked(_)), "{:?}", call.input);
    }
}
