//! W3C Trace Context's `traceparent` header (protocol 2.4.1): which values
//! carry a trace a pack service joins.

/// The trace id of a valid `traceparent` value, `None` for any other.
///
/// Valid is `^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$`
/// once trimmed, with a version other than `ff` and neither the trace id
/// nor the parent id all zeros: what a later version adds after the four
/// fields is ignored, as the W3C spec asks.
///
/// ```
/// use kindgi_protocol::traceparent::trace_id;
/// let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/// assert_eq!(trace_id(header), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
/// assert_eq!(trace_id(&format!(" {header}-later-fields ")), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
/// assert_eq!(trace_id("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), None);
/// assert_eq!(trace_id("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), None);
/// ```
pub fn trace_id(header: &str) -> Option<&str> {
    let header = header.trim();
    let bytes = header.as_bytes();
    if bytes.len() < 55 || (bytes.len() > 55 && bytes[55] != b'-') {
        return None;
    }
    let lower_hex = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    let dashes = bytes[2] == b'-' && bytes[35] == b'-' && bytes[52] == b'-';
    if !dashes || !lower_hex(0..2) || !lower_hex(3..35) || !lower_hex(36..52) || !lower_hex(53..55)
    {
        return None;
    }
    // Every byte up to 55 is ASCII (checked above): these slices are on
    // character boundaries.
    let version = &header[0..2];
    let trace_id = &header[3..35];
    let parent_id = &header[36..52];
    let all_zeros = |id: &str| id.bytes().all(|b| b == b'0');
    if version == "ff" || all_zeros(trace_id) || all_zeros(parent_id) {
        return None;
    }
    Some(trace_id)
}

#[cfg(test)]
mod tests {
    use super::trace_id;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn accepts_valid_and_future_versions() {
        assert_eq!(trace_id(VALID), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
        assert!(trace_id(&format!(" {VALID}-extra ")).is_some());
        assert!(trace_id(&VALID.replacen("00", "cc", 1)).is_some());
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
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
        ] {
            assert_eq!(trace_id(bad), None, "{bad}");
        }
    }
}
