//! The stress pack (pack `stress` 1.0.0): tools and checks made for load,
//! fault and hostile-input testing of the pack service.
//!
//! | id | does |
//! |---|---|
//! | `stress.append` | `{path, id, ms = 0}`: waits `ms` (stops early, appending nothing, when cancelled), then appends `id\n` to the file `path` in one write; returns `{id}` |
//! | `stress.count` | `{items: [string]}`: returns `{count}` (a list input, for validation under hostile input) |
//! | `stress.sleep` | `{ms}`: waits `ms` or until cancelled; returns `{slept}` |
//! | `stress.throws` | throws `Error: boom` |
//! | `stress.panics` | an async handler that panics `kaboom` |
//! | `stress.blocking-panics` | a blocking handler that panics `kaboom` |
//! | `stress.block` | `{ms}`: a blocking handler that sleeps `ms` whatever happens to its call (deadline, cancellation); returns `{blocked}` |
//! | `stress.block-async` | `{ms}`: an async handler that blocks its worker thread `ms` (`std::thread::sleep`); returns `{blocked}` |
//! | `stress.log` | `{count, bytes}`: logs `count` `info` events through `tracing`, each with a `filler` field of `bytes` characters; returns `{logged}` |
//! | `stress.log-careless` | `{message, secret, note}`: in a `tracing` span `careless.lookup` with the fields `api_key` (the secret) and `note`, logs an `info` event with that message and the same fields, then a `debug` one; returns `{logged: 2}` |
//! | `stress.environ` | `{needle}`: the variable names of its process, and whether `needle` appears in its environment or in `/proc/self/environ` |
//! | `stress.store` | stores `{text, name}` through the call's files (`storesFiles`, `readsFiles`) and returns the file, or throws what the store answered |
//! | check `stress.checks.ok` | passes |
//! | check `stress.checks.panics` | panics `check kaboom` |
//!
//! The pack declares one optional env name, `STRESS_DECLARED`, so that the
//! env filter keeps it.
//!
//! The binary `stress-pack` runs it; [`pack`] is also what the
//! `kindgi-reliability` tests run, through their own copy of the binary.

mod checks;
mod tools;

/// Every primitive of the stress pack.
pub fn pack() -> kindgi::Pack {
    kindgi::Pack::new()
        .tool(tools::append::tool())
        .tool(tools::count::tool())
        .tool(tools::count::batch_tool())
        .tool(tools::echo_input::tool())
        .tool(tools::sleep::tool())
        .tool(tools::throws::tool())
        .tool(tools::panics::tool())
        .tool(tools::panics::blocking_tool())
        .tool(tools::block::tool())
        .tool(tools::block::async_tool())
        .tool(tools::log::tool())
        .tool(tools::log::careless_tool())
        .tool(tools::log::context_tool())
        .tool(tools::environ::tool())
        .tool(tools::store::tool())
        .guardrail(checks::ok_guardrail())
        .guardrail(checks::panics_guardrail())
}
