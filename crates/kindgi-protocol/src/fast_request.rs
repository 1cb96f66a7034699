//! The fast path of [`parse_request`](crate::parse_request): a well-formed
//! request read straight into its types in one pass, without building a
//! [`Value`] tree first.
//!
//! It accepts exactly what the checked path accepts and gives the same
//! [`Request`]: every field has its wire type and no `null` stands in for
//! an absent field. Anything else — a wrong type, a `null`, a duplicate key,
//! a missing field, another `v` or `kind` — makes it give up, and the
//! checked path then finds the contract's error. The two paths agreeing is
//! tested below and by the `parse_request` fuzz target.

use std::ops::Range;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::envelope::{self, Message};
use crate::{
    CallContext, CheckInvoke, CheckRef, LazyInvoke, LazyRequest, Request, ToolInvoke, ToolRef,
};

/// `body` as text, checked once here: read from a `&str`, serde_json
/// checks no string's UTF-8 again. `None` (the checked path) for a body
/// that isn't UTF-8.
fn text_of(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body).ok()
}

/// Reads `body` when it is a well-formed request; `None` when the checked
/// path must look at it.
pub(crate) fn parse(body: &[u8]) -> Option<Request> {
    let message: Message<Value> = envelope::read(text_of(body)?, None)?;
    if message.kind == "check-invoke" {
        return check_invoke(message).map(Request::CheckInvoke);
    }
    let (tool, input, ctx) = invoke_parts(message)?;
    Some(Request::Invoke(ToolInvoke {
        tool,
        input: input.unwrap_or(Value::Null),
        ctx,
    }))
}

/// The check invoke read as `message`, when it is a well-formed one.
fn check_invoke<I>(message: Message<'_, I>) -> Option<CheckInvoke> {
    if message.v != 2.0 || message.kind != "check-invoke" {
        return None;
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

/// Reads `body` when it is a well-formed request: an invoke as
/// [`parse_lazily`] does, a check invoke as [`parse`] does; see
/// [`crate::parse_request_lazily`].
pub(crate) fn parse_request_lazily(body: &[u8]) -> Option<LazyRequest<'_>> {
    let message: Message<&RawValue> = envelope::read(text_of(body)?, None)?;
    if message.kind == "check-invoke" {
        // A check invoke's `input` means nothing, but the checked path
        // parses it: one it refuses (`1e400`, a lone surrogate) makes the
        // body malformed there.
        if message
            .input
            .is_some_and(|input| serde_json::from_str::<Value>(input.get()).is_err())
        {
            return None;
        }
        return check_invoke(message).map(LazyRequest::CheckInvoke);
    }
    lazy_invoke(message).map(LazyRequest::Invoke)
}

/// Reads `body` when it is a well-formed invoke, leaving its input as the
/// JSON text it is in `body`; see [`crate::parse_invoke_lazily`].
pub(crate) fn parse_lazily(body: &[u8]) -> Option<LazyInvoke<'_>> {
    lazy_invoke(envelope::read(text_of(body)?, Some("invoke"))?)
}

/// The invoke read as `message`, its input the text it has in the body,
/// when it is a well-formed one.
fn lazy_invoke<'a>(message: Message<'a, &'a RawValue>) -> Option<LazyInvoke<'a>> {
    let (tool, input, ctx) = invoke_parts(message)?;
    Some(LazyInvoke {
        tool,
        input: input.map(RawValue::get),
        ctx,
    })
}

/// Reads `body` as [`parse_lazily`] does, but without going through its
/// input, said to be the text at `input`: the body is read with that text
/// swapped for `0`, and must be a well-formed invoke whose input is that
/// `0`. Then, whenever the text at `input` is one JSON value, `body` is a
/// well-formed invoke whose input is that text (one value stands for
/// another), which the caller checks by parsing it. See
/// [`crate::parse_invoke_around`].
pub(crate) fn parse_around(body: &[u8], input: Range<usize>) -> Option<LazyInvoke<'_>> {
    let text = text_of(body)?;
    let input_text = text.get(input.clone())?;
    let around = [text.get(..input.start)?, "0", text.get(input.end..)?].concat();
    let message: Message<&RawValue> = envelope::read(&around, Some("invoke"))?;
    let (tool, placeholder, ctx) = invoke_parts(message)?;
    (placeholder.map(RawValue::get) == Some("0")).then_some(LazyInvoke {
        tool,
        input: Some(input_text),
        ctx,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_request_value;

    /// The fast path reads `body` exactly as the checked path does, or
    /// leaves it to the checked path.
    fn agrees(body: &str) -> Option<Request> {
        let fast = parse(body.as_bytes());
        if let Some(fast) = &fast {
            let value: Value = serde_json::from_str(body).expect("JSON");
            assert_eq!(Ok(fast), parse_request_value(value).as_ref(), "{body}");
        }
        let lazy = parse_lazily(body.as_bytes());
        match (&fast, &lazy) {
            (Some(Request::Invoke(fast)), Some(lazy)) => {
                assert_eq!(fast.tool, lazy.tool, "{body}");
                assert_eq!(fast.ctx, lazy.ctx, "{body}");
                let input = lazy.input.map_or(Value::Null, |text| {
                    serde_json::from_str(text).expect("the input's text")
                });
                assert_eq!(fast.input, input, "{body}");
            }
            (Some(Request::Invoke(_)), None) | (_, Some(_)) => {
                panic!("the lazy path disagrees on {body}")
            }
            _ => {}
        }
        // Both kinds in one pass: each as its own read gives it.
        match (&fast, parse_request_lazily(body.as_bytes())) {
            (Some(Request::CheckInvoke(fast)), Some(LazyRequest::CheckInvoke(check))) => {
                assert_eq!(fast, &check, "{body}");
            }
            (_, Some(LazyRequest::Invoke(invoke))) => assert_eq!(lazy, Some(invoke), "{body}"),
            (Some(Request::CheckInvoke(_)), None) | (_, Some(_)) => {
                panic!("the one-pass read disagrees on {body}")
            }
            (_, None) => assert_eq!(lazy, None, "{body}"),
        }
        if body.len() < 200 {
            around_agrees(body);
        }
        fast
    }

    /// The read of `body` around the text at each range that holds one
    /// JSON value is the lazy read, or nothing.
    fn around_agrees(body: &str) {
        let lazy = parse_lazily(body.as_bytes());
        for start in 0..=body.len() {
            for end in start..=body.len() {
                let Some(around) = parse_around(body.as_bytes(), start..end) else {
                    continue;
                };
                if around
                    .input
                    .is_some_and(|text| serde_json::from_str::<&RawValue>(text).is_ok())
                {
                    assert_eq!(lazy.as_ref(), Some(&around), "{body} at {start}..{end}");
                }
            }
        }
    }

    #[test]
    fn a_lazy_input_is_the_text_of_the_body() {
        let body = r#"{"v":2,"kind":"invoke","input": [1, {"a" : "\u00e9"}] ,"tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#;
        let lazy = parse_lazily(body.as_bytes()).expect("an invoke");
        assert_eq!(lazy.input, Some(r#"[1, {"a" : "\u00e9"}]"#));
        let absent =
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#;
        assert_eq!(
            parse_lazily(absent.as_bytes()).expect("an invoke").input,
            None
        );
        // The input's text is checked to be JSON, not read: a number past
        // f64 passes here, and the checked path refuses the body.
        let huge = r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"input":1e400,"ctx":{"tenantId":"t","runId":"r"}}"#;
        assert_eq!(
            parse_lazily(huge.as_bytes()).expect("an invoke").input,
            Some("1e400")
        );
        assert!(crate::parse_request(huge.as_bytes()).is_err());
    }

    #[test]
    fn an_input_read_around_is_the_text_there() {
        let ctx = r#""ctx":{"tenantId":"t","runId":"r"}"#;
        let with = |input: &str| {
            format!(r#"{{"v":2,"kind":"invoke","tool":{{"id":"x"}},"input":{input},{ctx}}}"#)
        };
        fn read<'a>(body: &'a str, input: &str) -> Option<Option<&'a str>> {
            let start = body.find(input).expect("the input");
            parse_around(body.as_bytes(), start..start + input.len()).map(|lazy| lazy.input)
        }
        let body = with(r#"{"a": "]}"}"#);
        assert_eq!(read(&body, r#"{"a": "]}"}"#), Some(Some(r#"{"a": "]}"}"#)));
        around_agrees(&with("[1,{}]"));
        // Not JSON, and not checked here: the caller's parse refuses it.
        let bad = with("[1,,2]");
        assert_eq!(read(&bad, "[1,,2]"), Some(Some("[1,,2]")));
        assert_eq!(parse_lazily(bad.as_bytes()), None);
        // The text around it is checked: a stray bracket after the range.
        assert_eq!(read(&with("[1]]"), "[1]"), None);
        // A range that isn't the input's place.
        assert_eq!(read(&body, r#""]}""#), None);
        assert_eq!(read(&body, "\"x\""), None);
        assert_eq!(parse_around(body.as_bytes(), 5..500), None);
        // Two inputs: refused, as by the lazy read.
        assert_eq!(read(&with(r#"1,"input":2"#), "1"), None);
    }

    #[test]
    fn well_formed_requests_take_the_fast_path() {
        let bodies = [
            r#"{"v":2,"kind":"invoke","tool":{"id":"a.b"},"input":{"x":1},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2.0,"kind":"invoke","tool":{"id":"a.b","version":"1.0.0","extra":1},"ctx":{"tenantId":"t","runId":"r","projectId":"p","orgId":"o","requestId":"q","idempotencyKey":"k","env":{"A":"1"},"secrets":{"s":{"deep":true}},"config":{"c":1},"settings":{"x":{}},"waitToken":{"id":"w","url":"http://w"},"toolFiles":{"url":"http://f","token":"ft"},"unknown":[1]},"other":null}"#,
            r#"{"kind":"invoke","v":2,"ctx":{"tenantId":"t","runId":"r"},"input":null,"tool":{"id":"x"}}"#,
            r#"{"kind":"invok\u0065","v":2,"ctx":{"tenantId":"t","runId":"r"},"tool":{"id":"x"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r","connections":{"g":{"connectionId":"c","app":"google","appName":"Google","accessToken":"tok","account":{"id":"1","label":"a"}}}}}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{"minLength":3},"trace":{"output":"hi"}}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{}}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{},"input":[1]}"#,
        ];
        for body in bodies {
            assert!(agrees(body).is_some(), "{body}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_checked_path() {
        let bodies = [
            "",
            "null",
            "[]",
            r#"{"v":3,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":"2","kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"result","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":""},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x","version":null},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r","projectId":null}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r","secrets":null}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r","settings":{"a":1}}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r","env":{"A":1}}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":null}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"}}"#,
            r#"{"v":2,"kind":"invoke","kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":{"tenantId":"t","tenantId":"u","runId":"r"}}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":null}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"}}"#,
            r#"{"v":2,"kind":"check-invoke","check":null,"config":{}}"#,
            // Its input means nothing, but a body with one that is not
            // JSON serde_json reads is malformed.
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{},"input":1e400}"#,
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":{},"input":"\ud800"}"#,
            // A struct of serde's reads from an array too; the protocol's
            // objects are objects.
            r#"{"v":2,"kind":"invoke","tool":["x"],"ctx":{"tenantId":"t","runId":"r"}}"#,
            r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"ctx":["t","r"]}"#,
            r#"[2,"invoke",{"id":"x"},{"id":"c"},1,2,{},{"tenantId":"t","runId":"r"}]"#,
        ];
        for body in bodies {
            assert!(agrees(body).is_none(), "{body}");
        }
    }

    #[test]
    fn duplicate_keys_inside_values_are_read_alike() {
        // Inside `input`, `config` and maps the last value wins on both paths.
        let body = r#"{"v":2,"kind":"invoke","tool":{"id":"x"},"input":{"a":1,"a":2},"ctx":{"tenantId":"t","runId":"r","env":{"A":"1","A":"2"}}}"#;
        let Some(Request::Invoke(invoke)) = agrees(body) else {
            panic!("fast path expected");
        };
        assert_eq!(invoke.input, serde_json::json!({"a": 2}));
    }
}
