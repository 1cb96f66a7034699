//! `kindgi_protocol::parse_request` on any bytes: never a panic; an error
//! is one of the three parse codes with the contract's message, and never
//! echoes a context value (a secret may be there); and the one-pass fast
//! path agrees with the checked path over `serde_json::Value`, and so does
//! the lazy read of an invoke, which leaves its input as text, the one-pass
//! read of either kind, and the read around a range said to be the input,
//! which doesn't go through it at all.

#![no_main]

use kindgi_protocol::{
    ErrorCode, LazyRequest, Request, parse_invoke_around, parse_invoke_lazily, parse_request,
    parse_request_lazily, parse_request_value,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_request(data) {
        Ok(Request::Invoke(invoke)) => {
            assert!(!invoke.tool.id.is_empty());
            // What parsed serializes again.
            let _ = serde_json::to_string(&invoke.ctx).expect("ctx serializes");
        }
        Ok(Request::CheckInvoke(check)) => assert!(!check.check.id.is_empty()),
        Ok(other) => panic!("parse_request made a request of no known kind: {other:?}"),
        Err(error) => {
            assert!(matches!(
                error.code,
                ErrorCode::MalformedMessage
                    | ErrorCode::UnknownProtocolVersion
                    | ErrorCode::UnexpectedMessageKind
            ));
            // Messages about ctx fields name the field, never its value.
            if error.message.starts_with("`ctx.") {
                assert!(error.message.len() < 120, "{}", error.message);
            }
        }
    }
    // `parse_request` (its fast path, else the checked one) reads any JSON
    // exactly as the checked path alone does.
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        assert_eq!(parse_request(data), parse_request_value(value));
    }
    // The lazy read of an invoke gives what `parse_request` gives, its
    // input left as text; or the input's text parses not, and neither
    // does the body.
    if let Some(lazy) = parse_invoke_lazily(data) {
        let input = lazy.input.map_or(Ok(serde_json::Value::Null), serde_json::from_str);
        match (parse_request(data), input) {
            (Ok(Request::Invoke(invoke)), Ok(input)) => {
                assert_eq!(invoke.tool, lazy.tool);
                assert_eq!(invoke.ctx, lazy.ctx);
                assert_eq!(invoke.input, input);
            }
            (Err(_), Err(_)) => {}
            (full, input) => panic!("the lazy read disagrees: {full:?} / {input:?}"),
        }
    }
    // The one-pass read of either kind gives the lazy read of an invoke,
    // and a check invoke as `parse_request` gives it.
    match parse_request_lazily(data) {
        Some(LazyRequest::Invoke(invoke)) => {
            assert_eq!(Some(invoke), parse_invoke_lazily(data));
        }
        Some(LazyRequest::CheckInvoke(check)) => {
            assert_eq!(parse_request(data), Ok(Request::CheckInvoke(check)));
        }
        Some(other) => panic!("a lazy request of no known kind: {other:?}"),
        None => assert_eq!(parse_invoke_lazily(data), None),
    }
    // The read of an invoke around a range said to be its input (the range
    // picked by the body's first two bytes, from the rest) is the lazy
    // read of the rest, wherever the text in the range is JSON.
    if let [from, length, body @ ..] = data {
        let start = usize::from(*from) * body.len() / 256;
        let end = start + usize::from(*length) * (body.len() - start) / 255;
        if let Some(around) = parse_invoke_around(body, start..end) {
            let text = around.input.expect("the text in the range");
            if serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok() {
                assert_eq!(parse_invoke_lazily(body), Some(around));
            }
        }
    }
    // The same bytes always parse the same way.
    assert_eq!(parse_request(data).is_ok(), parse_request(data).is_ok());
});
