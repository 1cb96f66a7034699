//! The protocol crate's `traceparent` rule (what the pack service joins a
//! trace by) against a plain reading of the contract's rule:
//! `^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$` (trimmed),
//! not version `ff`, not an all-zero trace or parent id.

#![no_main]

use libfuzzer_sys::fuzz_target;

use kindgi_protocol::traceparent::trace_id;

fn lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The contract's rule, written the obvious way.
fn accepts(header: &str) -> Option<String> {
    let h = header.trim();
    let head = h.get(..55)?;
    let rest = &h[55..];
    if !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    let parts: Vec<&str> = head.split('-').collect();
    let [version, trace, parent, flags] = parts.as_slice() else {
        return None;
    };
    let shaped = version.len() == 2
        && trace.len() == 32
        && parent.len() == 16
        && flags.len() == 2
        && [version, trace, parent, flags].iter().all(|p| lower_hex(p));
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    (shaped && *version != "ff" && !zero(trace) && !zero(parent)).then(|| (*trace).to_owned())
}

fuzz_target!(|data: &[u8]| {
    let Ok(header) = std::str::from_utf8(data) else {
        return;
    };
    assert_eq!(
        trace_id(header).map(str::to_owned),
        accepts(header),
        "{header:?}"
    );
});
