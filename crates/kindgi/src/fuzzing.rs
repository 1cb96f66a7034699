//! The differential check of the decode seam (feature `fuzzing`), for the
//! `decode` fuzz target: a body decoded by the input's fast reader and by
//! the plain path must come to the same call. Not a stable API.

use std::sync::OnceLock;

use kindgi_protocol::{CallContext, CheckInvoke, Issue, ParseError, ToolRef, parse_request};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::authoring::input::ToolInput;
use crate::service::decode::{Decoded, Input, decode};
use crate::service::invoker::{Invoker, ToolRuntime};
use crate::{Pack, Tool, ToolContext, ToolError};

/// An order: the shapes tool inputs take — bounded numbers and strings, an
/// optional field, a list of enum values, a defaulted field.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    #[schemars(range(max = 1000))]
    id: u32,
    #[schemars(length(min = 1, max = 20))]
    name: String,
    note: Option<String>,
    #[serde(default)]
    tags: Vec<Tag>,
    #[schemars(range(min = 0.0, max = 100.0))]
    price: f64,
    #[serde(default = "one")]
    quantity: u8,
}

fn one() -> u8 {
    1
}

/// A colour tag.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tag {
    Red,
    Green,
}

async fn take_order(order: Order, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(serde_json::to_value(order)?)
}

async fn take_any(input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(input)
}

/// The fuzzed pack: `fuzz.order` (an [`Order`]) and `fuzz.any` (any
/// object).
fn invoker() -> &'static Invoker {
    static INVOKER: OnceLock<Invoker> = OnceLock::new();
    INVOKER.get_or_init(|| {
        let pack = Pack::new()
            .tool(
                Tool::new("fuzz.order")
                    .description("Takes an order.")
                    .handler(take_order),
            )
            .tool(
                Tool::new("fuzz.any")
                    .description("Takes any object.")
                    .input_schema(serde_json::json!({"type": "object"}))
                    .handler(take_any),
            );
        match crate::testing::invoker_of(&pack) {
            Ok(invoker) => invoker,
            Err(problems) => panic!("the fuzzed pack: {problems}"),
        }
    })
}

/// A decoded call, settled: a tool call's input read into its tool's type
/// (as JSON again), or its issues.
#[derive(Debug, PartialEq)]
enum Settled {
    Tool {
        tool: ToolRef,
        ctx: Box<CallContext>,
        input: Result<Result<Value, String>, Vec<Issue>>,
    },
    Check(CheckInvoke),
    Other,
}

/// Decodes `body` for the fuzzed pack by the fast reader and by the plain
/// path alone, settles both, and panics where they differ.
///
/// # Panics
///
/// Where the two differ: that is what the fuzz target looks for.
pub fn decode_both_ways(body: &[u8]) {
    let invoker = invoker();
    let fast = settle(invoker, decode(invoker, body));
    let plain = settle(invoker, parse_request(body).map(Decoded::from));
    assert_eq!(
        fast,
        plain,
        "the fast reader and the plain path differ on {}",
        String::from_utf8_lossy(body)
    );
}

fn settle(invoker: &Invoker, decoded: Result<Decoded, ParseError>) -> Result<Settled, ParseError> {
    Ok(match decoded? {
        Decoded::Tool(call) => Settled::Tool {
            input: match invoker.tools.get(&call.tool.id) {
                Some(tool) => checked(tool, call.input).map(|input| read(&call.tool.id, input)),
                None => match call.input {
                    Input::Unchecked(value) => Ok(Ok(value)),
                    other => panic!("an input read for no tool: {other:?}"),
                },
            },
            tool: call.tool,
            ctx: call.ctx,
        },
        Decoded::Check(check) => Settled::Check(check),
        Decoded::Other => Settled::Other,
    })
}

/// The input as the handler would get it, or its issues.
fn checked(tool: &ToolRuntime, input: Input) -> Result<ToolInput, Vec<Issue>> {
    match input {
        Input::Unchecked(mut value) => {
            tool.input.fill_defaults(&mut value);
            tool.input.validate(&value).map(|()| ToolInput::Tree(value))
        }
        Input::Checked(value) => Ok(ToolInput::Read(value)),
        Input::Invalid(issues) => Err(issues),
        Input::Panicked(_) => panic!("no input type of the fuzzed pack panics"),
    }
}

/// `input` read into tool `id`'s type, as JSON again; the read's error.
fn read(id: &str, input: ToolInput) -> Result<Value, String> {
    let value = match id {
        "fuzz.order" => input.read::<Order>().map(serde_json::to_value),
        _ => input.read::<Value>().map(Ok),
    };
    match value {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(e.to_string()),
        Err(refused) => Err(refused.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_agree_on_what_the_fast_reader_reads_refuses_and_leaves() {
        let call = |tool: &str, input: &str| {
            format!(
                r#"{{"v":2,"kind":"invoke","tool":{{"id":"{tool}"}},"input":{input},"ctx":{{"tenantId":"t","runId":"r"}}}}"#
            )
        };
        for body in [
            call(
                "fuzz.order",
                r#"{"id":1,"name":"a","price":2.5,"tags":["red"]}"#,
            ),
            call(
                "fuzz.order",
                r#"{"id":1,"name":"a","price":2.5,"quantity":3}"#,
            ),
            call("fuzz.order", r#"{"id":1001,"name":"a","price":2.5}"#),
            call("fuzz.order", r#"{"id":1,"name":"","price":200}"#),
            call("fuzz.order", r#"{"id":1,"name":"a","price":1e400}"#),
            call("fuzz.any", r#"{"a":[1,{"b":2.0},"x"]}"#),
            call("fuzz.any", r#"[1]"#),
            call("fuzz.none", r#"{"a":1}"#),
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{}}"#.to_owned(),
            "[1]".to_owned(),
        ] {
            decode_both_ways(body.as_bytes());
        }
    }
}
