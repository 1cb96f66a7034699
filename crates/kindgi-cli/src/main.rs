//! The kindgi command: run the dev runtime, call a pack service, check conformance.

fn main() {}
