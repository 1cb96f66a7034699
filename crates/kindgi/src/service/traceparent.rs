//! W3C `traceparent`: the caller's trace id (the protocol crate's rule),
//! a fresh span id for this service's part of the trace, and the caller's
//! span, its parent — with `kindgi-request-id`, the ids the transport gives
//! a call ([`transport_ids`]).

use crate::log::TransportIds;

/// The ids of a call sent with `traceparent` and `request_id`, with the
/// call's own span when `spans` (telemetry is on).
pub(crate) fn transport_ids(
    traceparent: Option<&str>,
    request_id: Option<&str>,
    spans: bool,
) -> TransportIds {
    let trace = traceparent.and_then(trace_ids);
    let caller = trace.as_ref().and(traceparent).and_then(caller_span);
    let call_span = spans.then(|| crate::telemetry::call_span(trace.as_ref(), caller));
    TransportIds {
        trace,
        caller,
        call_span,
        request_id: request_id.map(str::to_owned),
    }
}

/// The trace id of a valid `traceparent`, and a new random span id.
fn trace_ids(header: &str) -> Option<(String, String)> {
    let trace_id = kindgi_protocol::traceparent::trace_id(header)?;
    let span: [u8; 8] = rand::random();
    Some((trace_id.to_owned(), hex::encode(span)))
}

/// The caller's span of a valid `traceparent`: its parent id and its
/// flags.
fn caller_span(header: &str) -> Option<(u64, u8)> {
    let mut parts = header.trim().split('-').skip(2);
    let span = u64::from_str_radix(parts.next()?, 16).ok()?;
    let flags = u8::from_str_radix(parts.next()?, 16).ok()?;
    Some((span, flags))
}

#[cfg(test)]
mod tests {
    use super::{caller_span, trace_ids};

    #[test]
    fn a_fresh_span_under_the_callers_trace() {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let (trace, span) = trace_ids(header).expect("valid");
        assert_eq!(trace, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.len(), 16);
        assert_ne!(span, "00f067aa0ba902b7");
        assert_eq!(trace_ids("00-bad"), None);
        assert_eq!(caller_span(header), Some((0x00f0_67aa_0ba9_02b7, 1)));
    }
}
