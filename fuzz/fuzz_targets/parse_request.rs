//! `kindgi_protocol::parse_request` on any bytes: never a panic; an error
//! is one of the three parse codes with the contract's message, and never
//! echoes a context value (a secret may be there); and it reads any JSON
//! as `parse_request_value` reads its tree.

#![no_main]

use kindgi_protocol::{ErrorCode, Request, parse_request, parse_request_value};
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
    // Any JSON reads as its tree does.
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        assert_eq!(parse_request(data), parse_request_value(value));
    }
    // The same bytes always parse the same way.
    assert_eq!(parse_request(data).is_ok(), parse_request(data).is_ok());
});
