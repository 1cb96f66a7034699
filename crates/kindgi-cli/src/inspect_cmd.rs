//! `kindgi inspect`: the pack inspector for a running pack service, with a
//! dev runtime of its own for the calls' files grants and wait links.
//!
//! ```text
//! kindgi inspect --service URL --token T --index P [--port 0] [--data-dir .kindgi/runtime]
//! ```
//!
//! It listens on 127.0.0.1 only and prints the page's URL, the inspector's
//! own token in its fragment (`#token=…`, which no request carries).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use kindgi_protocol::{PackIndex, Secret};
use kindgi_runtime::RuntimeConfig;
use tokio::net::TcpListener;

use crate::data_dir::{DataDirArg, open_store};
use crate::inspector::{self, Inspector, Target};
use crate::out::say;

/// Options of `kindgi inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The pack service's base URL.
    #[arg(long, env = "KINDGI_SERVICE_URL")]
    service: String,
    /// The pack service's token (`kindgi-pack-token`).
    #[arg(long, env = "KINDGI_SERVICE_TOKEN", hide_env_values = true)]
    token: String,
    /// The pack index the service serves.
    #[arg(long, env = "KINDGI_PACK_INDEX")]
    index: PathBuf,
    /// The inspector's port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    #[command(flatten)]
    data_dir: DataDirArg,
}

/// Runs `kindgi inspect` until Ctrl-C (or SIGTERM).
pub(crate) async fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.index)
        .with_context(|| format!("Cannot read the pack index {}", args.index.display()))?;
    let index: PackIndex = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a pack index", args.index.display()))?;
    let runtime = open_store(RuntimeConfig::new(&args.data_dir.path))?;
    let runtime_listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("Cannot listen for the embedded runtime")?;
    tokio::spawn(
        runtime
            .clone()
            .serve(runtime_listener, std::future::pending()),
    );
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("Cannot listen on 127.0.0.1:{}", args.port))?;
    let port = listener.local_addr()?.port();
    let page_token = crate::dev::random_token();
    let token = kindgi::Token::new(page_token.clone()).context("The inspector's token")?;
    let target = Target {
        url: args.service.trim_end_matches('/').to_owned(),
        token: Secret::new(args.token),
    };
    let inspector = Arc::new(Inspector::new("inspect", token, port, target, runtime));
    let path = std::fs::canonicalize(&args.index).unwrap_or(args.index);
    inspector.update(|state| {
        state.index = Some(Arc::new(index));
        state.index_path = Some(path);
        state.defaults = serde_json::json!({"env": {}, "secrets": [], "connections": []});
    });
    say(&format!(
        "kindgi inspect: the inspector for {} is at {}\n  Ctrl-C stops.",
        args.service,
        inspector.page_url(&page_token)
    ));
    inspector::serve(inspector, listener, kindgi::shutdown_signal()).await;
    Ok(ExitCode::SUCCESS)
}
