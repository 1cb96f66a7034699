//! `kindgi_protocol::parse_request` on any bytes: never a panic; an error
//! is one of the three parse codes with the contract's message, and never
//! echoes a context value (a secret may be there); and the one-pass fast
//! path agrees with the checked path over `serde_json::Value`, and so does
//! the lazy read of an invoke, which leaves its input as text, and the
//! unchecked read, which doesn't go through the input at all.

#![no_main]

use kindgi_protocol::{
    ErrorCode, Request, parse_invoke_lazily, parse_invoke_unchecked, parse_request,
    parse_request_value,
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
    // The unchecked read of an invoke, which never goes through its input,
    // is the lazy read wherever the input's text it finds is JSON.
    let unchecked = parse_invoke_unchecked(data);
    let input_is_json = unchecked.as_ref().is_some_and(|u| {
        u.input.is_none_or(|text| {
            serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
        })
    });
    let lazy = parse_invoke_lazily(data);
    if lazy.is_some() || input_is_json {
        assert_eq!(lazy, unchecked);
    }
    // The same bytes always parse the same way.
    assert_eq!(parse_request(data).is_ok(), parse_request(data).is_ok());
});
