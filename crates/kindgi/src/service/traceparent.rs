//! W3C `traceparent`: the caller's trace id (the protocol crate's rule),
//! and a fresh span id for this service's part of the trace.

/// The trace id of a valid `traceparent`, and a new random span id.
pub(crate) fn trace_ids(header: &str) -> Option<(String, String)> {
    let trace_id = kindgi_protocol::traceparent::trace_id(header)?;
    let span: [u8; 8] = rand::random();
    Some((trace_id.to_owned(), hex::encode(span)))
}

#[cfg(test)]
mod tests {
    use super::trace_ids;

    #[test]
    fn a_fresh_span_under_the_callers_trace() {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let (trace, span) = trace_ids(header).expect("valid");
        assert_eq!(trace, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.len(), 16);
        assert_ne!(span, "00f067aa0ba902b7");
        assert_eq!(trace_ids("00-bad"), None);
    }
}
