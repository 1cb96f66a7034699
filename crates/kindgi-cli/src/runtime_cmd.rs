//! `kindgi runtime`: the dev runtime as a process.

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use kindgi_runtime::RuntimeConfig;
use serde_json::json;

use crate::data_dir::{DataDirArg, open_store};

/// Options of `kindgi runtime`.
#[derive(Debug, Args)]
pub(crate) struct RuntimeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on (0 picks a free one).
    #[arg(long, env = "KINDGI_RUNTIME_PORT", default_value_t = 8787)]
    port: u16,
    #[command(flatten)]
    data_dir: DataDirArg,
    /// The base URL handed out in tool-files grants and wait links
    /// (default: the listening address).
    #[arg(long)]
    public_url: Option<String>,
    /// The dev admin API's token (default: a random one, printed at start).
    #[arg(long, env = "KINDGI_RUNTIME_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Tool-files and wait-link requests per window with one token or wait
    /// link (and from one client without either).
    #[arg(long, default_value_t = 600)]
    rate_limit: u32,
    /// The rate-limit window, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    rate_window_ms: u64,
    /// Bytes of files held in memory at once.
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    memory_budget_bytes: u64,
    /// How long a request waits for memory before `tool-files-busy`, in ms.
    #[arg(long, default_value_t = 2_000)]
    memory_wait_ms: u64,
    /// The size limit of an image (PNG, JPEG, GIF, WebP), in bytes.
    #[arg(long)]
    image_limit_bytes: Option<u64>,
    /// The size limit of a PDF, in bytes.
    #[arg(long)]
    pdf_limit_bytes: Option<u64>,
    /// The size limit of a text file, in bytes.
    #[arg(long)]
    text_limit_bytes: Option<u64>,
    /// A tenant's storage quota unless set for it, in bytes.
    #[arg(long)]
    default_quota_bytes: Option<u64>,
}

impl RuntimeArgs {
    fn config(&self) -> (RuntimeConfig, bool) {
        let mut config = RuntimeConfig::new(&self.data_dir.path);
        let generated = self.admin_token.is_none();
        if let Some(token) = &self.admin_token {
            config.admin_token.clone_from(token);
        }
        config.public_url.clone_from(&self.public_url);
        config.rate_limit = self.rate_limit;
        config.rate_window = Duration::from_millis(self.rate_window_ms);
        config.memory_budget_bytes = self.memory_budget_bytes;
        config.memory_wait = Duration::from_millis(self.memory_wait_ms);
        if let Some(n) = self.image_limit_bytes {
            config.type_limits.image = n;
        }
        if let Some(n) = self.pdf_limit_bytes {
            config.type_limits.pdf = n;
        }
        if let Some(n) = self.text_limit_bytes {
            config.type_limits.text = n;
        }
        if let Some(n) = self.default_quota_bytes {
            config.default_quota_bytes = n;
        }
        (config, generated)
    }
}

/// Runs the dev runtime until Ctrl-C or SIGTERM.
pub(crate) async fn run(args: RuntimeArgs) -> anyhow::Result<()> {
    let (config, generated) = args.config();
    let admin_token = config.admin_token.clone();
    let data_dir = config.data_dir.clone();
    let runtime = open_store(config)?;
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("Cannot listen on {}:{}", args.host, args.port))?;
    let addr = listener.local_addr()?;
    let serving = runtime.clone();
    let task = tokio::spawn(serving.serve(listener, kindgi::shutdown_signal()));
    // The first line on stdout: what tests and scripts parse.
    let mut line = json!({
        "kind": "listening",
        "port": addr.port(),
        "url": runtime.public_url(),
        "dataDir": data_dir,
    });
    if generated {
        line["adminToken"] = json!(admin_token);
    }
    crate::out::say(&line.to_string());
    tracing::info!(port = addr.port(), "dev runtime listening");
    task.await??;
    Ok(())
}
