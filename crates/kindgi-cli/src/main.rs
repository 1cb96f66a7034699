//! The kindgi command: run the dev runtime, call a pack service, check conformance.
//!
//! - `kindgi runtime`: the dev runtime (tool-files API, wait links, dev admin API).
//! - `kindgi call <tool-id> --input JSON`: one call through the pack client.
//! - `kindgi info`: a pack service's `GET /v1/info`.
//! - `kindgi conformance`: the conformance suite against a pack service implementation.
//! - `kindgi differential`: one corpus sent to two pack services, their answers compared.
//! - `kindgi dev`: a pack built, indexed and served from its folder, swapped on every save.
//! - `kindgi new NAME`: a pack crate in `./NAME`, ready for `cargo test` and `kindgi dev`.
//! - `kindgi inspect`: the pack inspector (a page) for a running pack service.
//!
//! The crate's README:
#![doc = include_str!("../README.md")]

mod call_cmd;
mod call_ctx;
mod conformance_cmd;
mod data_dir;
mod dev;
mod dev_cmd;
mod differential_cmd;
mod http_loop;
mod inspect_cmd;
mod inspector;
mod link;
mod new_cmd;
mod out;
mod runtime_cmd;
mod suggest;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The kindgi command.
#[derive(Debug, Parser)]
#[command(
    name = "kindgi",
    version,
    about = "Run the Kindgi dev runtime and call pack services"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the dev runtime: tool-files API, wait links and dev admin API.
    Runtime(runtime_cmd::RuntimeArgs),
    /// Run one tool call through the pack client and the dev runtime; print its output as JSON.
    Call(Box<call_cmd::CallArgs>),
    /// Print a pack service's `GET /v1/info`.
    Info(call_cmd::InfoArgs),
    /// Run the conformance suite against a pack service implementation.
    Conformance(conformance_cmd::ConformanceArgs),
    /// Send one corpus of requests to two pack services serving the conformance fixture pack; compare their answers and records.
    Differential(differential_cmd::DifferentialArgs),
    /// Build, index and serve the pack in this folder behind one URL; rebuild and swap on every save.
    Dev(dev_cmd::DevArgs),
    /// Create a pack crate in ./NAME: a tool, a check, a test, a Dockerfile and an AGENTS.md.
    New(new_cmd::NewArgs),
    /// Open the pack inspector (a page on 127.0.0.1) on a running pack service.
    Inspect(inspect_cmd::InspectArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kindgi: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        match cli.command {
            Command::Runtime(args) => runtime_cmd::run(args).await.map(|()| ExitCode::SUCCESS),
            Command::Call(args) => call_cmd::call(*args).await,
            Command::Info(args) => call_cmd::info(args).await,
            Command::Conformance(args) => conformance_cmd::run(args).await,
            Command::Differential(args) => differential_cmd::run(args).await,
            Command::Dev(args) => dev_cmd::run(args).await,
            Command::New(args) => new_cmd::run(&args),
            Command::Inspect(args) => inspect_cmd::run(args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kindgi: {e:#}");
            ExitCode::FAILURE
        }
    }
}
