//! The pack service and the dev runtime under load, faults and hostile
//! input. One test binary (one link), one module per subject; tests that
//! load the machine take [`heavy`] so that they run one at a time.

mod blocking;
mod common;
mod drain;
mod early_answers;
mod h2c;
mod hostile_http;
mod hostile_json;
mod logs;
mod memory;
mod overload;
mod panics;
mod schemas;
mod secrets;
mod telemetry;
mod text_inputs;
mod tool_files;
