//! Reading an invoke's body. A tool invoke's input is left as its text: in
//! a body of at least [`TEXT_INPUT_BODY_BYTES`] it is found by the body's
//! scan, not read, and the body read around it ([`parse_invoke_around`]);
//! in a smaller one, the body is read with the input only checked to be
//! one JSON value ([`parse_request_lazily`], which reads a check invoke
//! whole in the same pass). The input is then read straight from its text
//! into the handler's own type, every value checked
//! against the tool's input schema as it is read (the handler's
//! [`TextReader`](crate::authoring::input::TextReader)): no tree of the
//! input is built, and the text is parsed once. Should that fail — the
//! input is invalid, has a default to fill, or is one the checks can't
//! follow — an invalid input with one error is answered from its text
//! (its issues found as it is read once more, past what the typed read
//! had checked), and any other has its tree built and the call takes the
//! full path. Every other body is read as [`parse_request`] reads it, and
//! answered the same. (A small input read so skips building its tree,
//! checking it and reading the handler's type from it: ~370 instructions
//! fewer of an echo call's ~24 000.)

use std::any::Any;
use std::ops::Range;
use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use kindgi_protocol::{
    CheckInvoke, Issue, LazyRequest, ParseError, Request, parse_invoke_around, parse_request,
    parse_request_lazily,
};
use serde_json::Value;

use super::invoke::ToolCall;
use super::state::{Invoker, ToolRuntime};
use crate::authoring::input::Refused;

/// Bodies from this size on have their tool input found by the body's
/// scan. Below it, the body is read whole ([`parse_request_lazily`]) for
/// less than the scan costs.
pub(crate) const TEXT_INPUT_BODY_BYTES: usize = 1024;

/// A tool call's input as the body's read left it: what the call does
/// with it before its handler gets a
/// [`ToolInput`](crate::authoring::input::ToolInput).
#[derive(Debug)]
pub(crate) enum ReadInput {
    /// Parsed: its defaults to fill, then to validate.
    Tree(Value),
    /// Parsed after its text didn't pass the handler's reader: most likely
    /// invalid (see [`kindgi_validate::Validator::validate_likely_invalid`]).
    Refused(Value),
    /// Invalid, with one error found from its text: its issues
    /// ([`kindgi_validate::Validator::issues_from_text`]), the very ones
    /// its tree would get. No tree is built.
    Invalid(Vec<Issue>),
    /// Read into the handler's type and checked as it was read
    /// ([`ToolInput::Read`](crate::authoring::input::ToolInput::Read)).
    Typed(Box<dyn Any + Send>),
    /// Its type's `Deserialize` (the pack's own code) panicked as the text
    /// was read: the payload, answered as the handler's panic would be,
    /// without running that code again.
    Panicked(Box<dyn Any + Send>),
}

/// A request, read.
#[derive(Debug)]
pub(crate) enum Read {
    /// A tool invoke.
    Tool(ToolCall),
    /// A check invoke.
    Check(CheckInvoke),
    /// A request of a kind this service doesn't run.
    Other,
}

/// Reads `body`, as [`parse_request`] would, but for where a tool's input
/// is kept as text. `input` is where the body's scan found its input
/// ([`super::scan`], which looks only in bodies of at least
/// [`TEXT_INPUT_BODY_BYTES`]): in a smaller body, the input's text is found
/// as the body is read.
///
/// # Errors
///
/// [`parse_request`]'s, for every body it refuses.
pub(crate) fn read(
    invoker: &Invoker,
    body: &Bytes,
    input: Option<Range<usize>>,
) -> Result<Read, ParseError> {
    let lazy = match input {
        Some(input) => parse_invoke_around(body, input),
        None if body.len() < TEXT_INPUT_BODY_BYTES => match parse_request_lazily(body) {
            Some(LazyRequest::Invoke(invoke)) => Some(invoke),
            // Read whole in the same pass: not read again.
            Some(LazyRequest::CheckInvoke(check)) => return Ok(Read::Check(check)),
            _ => None,
        },
        None => None,
    };
    let Some(lazy) = lazy else {
        return parse_request(body).map(from_request);
    };
    let input = match lazy.input {
        None => ReadInput::Tree(Value::Null),
        Some(text) => {
            let read = match invoker.tools.get(&lazy.tool.id) {
                Some(tool) => match read_checked(tool, text) {
                    Ok(read) => Some(read),
                    // Its issues found from the text, past what the read
                    // checked.
                    Err(Refused::Other(refused)) => tool
                        .input
                        .issues_from_refused_text(text.as_bytes(), &refused)
                        .map(ReadInput::Invalid),
                    // Missing no more than a default: no error to find.
                    Err(Refused::ToFill) => None,
                },
                None => None,
            };
            match read {
                Some(read) => read,
                None => match serde_json::from_str(text) {
                    Ok(value) => ReadInput::Refused(value),
                    // Not JSON (the text was found by its brackets alone),
                    // or not readable as a tree (a number too large, a
                    // lone surrogate): the checked path's own answer.
                    Err(_) => return parse_request(body).map(from_request),
                },
            }
        }
    };
    Ok(Read::Tool(ToolCall {
        tool: lazy.tool,
        input,
        ctx: lazy.ctx,
    }))
}

/// `text` read into `tool`'s input type by its handler's reader, checked
/// as it is read; why not when it doesn't pass. The type's `Deserialize`
/// is the pack's own code: should it panic, the call answers the panic as
/// a handler's ([`ReadInput::Panicked`]), and that code doesn't run again.
fn read_checked(tool: &ToolRuntime, text: &str) -> Result<ReadInput, Refused> {
    let read = tool.handler.read_text;
    match std::panic::catch_unwind(AssertUnwindSafe(|| read(text, &tool.input))) {
        Ok(read) => read.map(ReadInput::Typed),
        Err(payload) => Ok(ReadInput::Panicked(payload)),
    }
}

fn from_request(request: Request) -> Read {
    match request {
        Request::Invoke(invoke) => Read::Tool(invoke.into()),
        Request::CheckInvoke(check) => Read::Check(check),
        _ => Read::Other,
    }
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
    fn read_input(invoker: &Invoker, input: Value) -> ReadInput {
        let body = json!({
            "v": 2,
            "kind": "invoke",
            "tool": {"id": "acme.echo"},
            "input": input,
            "ctx": {"tenantId": "t", "runId": "r"}
        });
        let body = Bytes::from(serde_json::to_vec(&body).expect("JSON"));
        let input = super::super::scan::scan(&body).input;
        assert!(input.is_some(), "a body read around its input");
        match read(invoker, &body, input) {
            Ok(Read::Tool(call)) => call.input,
            _ => panic!("not a tool call"),
        }
    }

    #[test]
    fn an_input_with_one_error_is_answered_from_its_text() {
        let invoker = invoker();
        let words: Vec<String> = (0..200).map(|i| format!("word {i}")).collect();
        let read = read_input(&invoker, json!({"words": words, "times": 10}));
        let ReadInput::Invalid(issues) = read else {
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
        let ReadInput::Invalid(issues) = read else {
            panic!("not answered from its text: {read:?}");
        };
        assert_eq!(issues[0].instance_path, "/words/199");
        assert_eq!(issues[0].keyword.as_deref(), Some("type"));
        // Two errors: its tree, for the full path.
        let read = read_input(&invoker, json!({"words": words, "times": 10, "x": 1}));
        assert!(matches!(read, ReadInput::Refused(_)), "{read:?}");
        // Valid: read into the handler's type.
        let read = read_input(&invoker, json!({"words": words, "times": 9}));
        assert!(matches!(read, ReadInput::Typed(_)), "{read:?}");
    }
}
