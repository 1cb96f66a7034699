//! W3C `traceparent`: the caller's trace id, and a fresh span id.

/// The trace id of a valid `traceparent`, and a new random span id.
///
/// Accepts `^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$`
/// (trimmed), not version `ff`, not an all-zero trace or parent id.
pub(crate) fn trace_ids(header: &str) -> Option<(String, String)> {
    let header = header.trim();
    let bytes = header.as_bytes();
    if bytes.len() < 55 || (bytes.len() > 55 && bytes[55] != b'-') {
        return None;
    }
    let hex = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    let dashes = bytes[2] == b'-' && bytes[35] == b'-' && bytes[52] == b'-';
    if !dashes || !hex(0..2) || !hex(3..35) || !hex(36..52) || !hex(53..55) {
        return None;
    }
    let version = &header[0..2];
    let trace_id = &header[3..35];
    let parent_id = &header[36..52];
    if version == "ff"
        || trace_id.bytes().all(|b| b == b'0')
        || parent_id.bytes().all(|b| b == b'0')
    {
        return None;
    }
    let span: [u8; 8] = rand::random();
    Some((trace_id.to_owned(), hex::encode(span)))
}

#[cfg(test)]
mod tests {
    use super::trace_ids;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn accepts_valid_and_future_versions() {
        let (trace, span) = trace_ids(VALID).expect("valid");
        assert_eq!(trace, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.len(), 16);
        assert_ne!(span, "00f067aa0ba902b7");
        assert!(trace_ids(&format!(" {VALID}-extra ")).is_some());
    }

    #[test]
    fn refuses_malformed() {
        for bad in [
            "",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(trace_ids(bad).is_none(), "{bad}");
        }
    }
}
