//! `Kindgi-File-Name`: decoding any header value never panics, and every
//! name survives the SDK's encoding and the runtime's decoding unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;

// The runtime decodes with kindgi-protocol's `file_name`; the SDK encodes
// with its `percent`.
use kindgi_protocol::file_name::decode_file_name;
use kindgi_protocol::percent::encode_component;

fuzz_target!(|data: &[u8]| {
    // Any header value (visible ASCII reaches the runtime; decode anything).
    if let Ok(raw) = std::str::from_utf8(data) {
        if let Ok(Some(name)) = decode_file_name(raw) {
            assert!(!name.is_empty());
        }
        // Round trip: what the pack's SDK sends for a name is that name.
        let encoded = encode_component(raw);
        assert!(encoded.bytes().all(|b| b.is_ascii_graphic()));
        let decoded = decode_file_name(&encoded).expect("the SDK's encoding decodes");
        assert_eq!(decoded.as_deref(), (!raw.is_empty()).then_some(raw));
    }
});
