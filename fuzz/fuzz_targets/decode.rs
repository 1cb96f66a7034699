//! The decode seam both ways: any body decoded by the input's fast reader
//! and by the plain path alone (`kindgi_protocol::parse_request`, then the
//! tree filled and validated) comes to the same call — the same error, or
//! the same tool, context and input read into the tool's type, or the same
//! issues. Never a panic otherwise.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kindgi::fuzzing::decode_both_ways(data);
});
