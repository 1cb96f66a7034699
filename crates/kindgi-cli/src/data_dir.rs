//! The dev runtime's data directory, as every command that opens a dev
//! runtime takes it, and opening the runtime's store there.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use kindgi_runtime::{DevRuntime, RuntimeConfig};

/// `--data-dir`.
#[derive(Debug, Args)]
pub(crate) struct DataDirArg {
    /// Where the dev runtime's store lives (created on first start).
    #[arg(
        long = "data-dir",
        value_name = "DATA_DIR",
        env = "KINDGI_RUNTIME_DATA_DIR",
        default_value = ".kindgi/runtime"
    )]
    pub(crate) path: PathBuf,
}

/// Opens the dev runtime's store that `config` names.
///
/// # Errors
///
/// When the store can't be opened, naming its directory.
pub(crate) fn open_store(config: RuntimeConfig) -> anyhow::Result<DevRuntime> {
    let data_dir = config.data_dir.clone();
    DevRuntime::open(config)
        .with_context(|| format!("Cannot open the runtime's store in {}", data_dir.display()))
}
