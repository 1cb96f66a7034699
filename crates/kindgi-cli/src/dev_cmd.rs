//! `kindgi dev`: the options, and the session until Ctrl-C.
//!
//! ```text
//! kindgi dev [--pack-dir .] [--port 8080] [--host 127.0.0.1] [--token T]
//!            [--bin NAME] [--release] [--state-dir <pack-dir>/.kindgi/dev]
//! ```
//!
//! In a pack's folder it builds the crate, indexes it, starts its pack
//! service and the dev runtime, and puts a stable front before them: one
//! URL, one token, printed once with a `kindgi call` line to paste. A save
//! of any file the last build used (cargo's dep-info: the pack's sources,
//! its path dependencies', files they include) or of a path package's
//! `Cargo.toml` rebuilds, re-indexes and swaps the service; a failed build
//! keeps the old one serving. The pack folder's
//! `.env`, `.kindgi/secrets.env` and `.kindgi/connections.env` give the
//! process its variables and the calls their secrets and connections. See
//! [`crate::dev`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::dev;

/// What `kindgi dev --help` says of the pack folder's local files.
const LOCAL_FILES: &str = "\
Local files of the pack folder, in dotenv syntax (NAME=VALUE a line, # comments, quotes, export):
  .env                     variables of the pack process. It starts with what a deployed pack
                           sees (the env filter's list, the pack's declared env), then .env's
                           names not already set.
  .kindgi/secrets.env      NAME=VALUE: secrets. Each call through the front of a tool that
                           declares them (needsSpec.secrets) gets those it doesn't carry.
  .kindgi/connections.env  NAME=APP:TOKEN: connections, by the tool's name for each
                           (needsSpec.connections), added the same way for the app declared.
A save of any of them rebuilds; a malformed line fails that build, naming the file and line.
Keep .kindgi/ out of version control (dev writes a .gitignore there).";

/// Options of `kindgi dev`.
#[derive(Debug, Args)]
#[command(after_help = LOCAL_FILES)]
pub(crate) struct DevArgs {
    /// The pack's folder: the crate whose `main` hands over to `kindgi::Pack::run`.
    #[arg(long, default_value = ".")]
    pack_dir: PathBuf,
    /// The front's port: the one URL callers use (0 picks a free one).
    #[arg(long, env = "KINDGI_DEV_PORT", default_value_t = 8080)]
    port: u16,
    /// The front's address.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The front's token, `kindgi-pack-token` (default: a random one).
    #[arg(long, env = "KINDGI_DEV_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The binary to serve, when the crate has several.
    #[arg(long)]
    bin: Option<String>,
    /// Build with `--release`.
    #[arg(long)]
    release: bool,
    /// Where dev keeps each build's binary and index, and the dev
    /// runtime's store (default: `<pack-dir>/.kindgi/dev`).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// How often the pack's files are checked for changes, in milliseconds.
    #[arg(long, default_value_t = 300, hide = true)]
    poll_ms: u64,
}

/// Runs `kindgi dev` until Ctrl-C (or SIGTERM).
pub(crate) async fn run(args: DevArgs) -> anyhow::Result<ExitCode> {
    let token = match args.token.map(|t| t.trim().to_owned()) {
        Some(token) if !kindgi_protocol::headers::is_header_token(&token) => {
            eprintln!(
                "error: --token may hold only printable ASCII without spaces (it travels in an HTTP header)"
            );
            return Ok(ExitCode::from(2));
        }
        Some(token) => token,
        None => dev::random_token(),
    };
    let options = dev::Options {
        pack_dir: args.pack_dir,
        host: args.host,
        port: args.port,
        token,
        bin: args.bin,
        release: args.release,
        poll: Duration::from_millis(args.poll_ms.max(50)),
        state_dir: args.state_dir,
    };
    dev::run(options, kindgi::shutdown_signal()).await?;
    Ok(ExitCode::SUCCESS)
}
