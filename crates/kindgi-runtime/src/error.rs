//! The error of opening or running a dev runtime.

use std::path::PathBuf;

/// Why the dev runtime could not open its store or do its work.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The data directory (or a file in it) could not be created or used.
    #[error("cannot use the data directory {path}: {source}")]
    DataDir {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The SQLite database failed.
    #[error("the store's database failed: {0}")]
    Database(#[from] rusqlite::Error),
    /// Reading or writing a blob failed.
    #[error("the blob store failed: {0}")]
    Blob(#[from] std::io::Error),
    /// A blocking task was cancelled or panicked.
    #[error("a store task did not finish: {0}")]
    Task(String),
    /// The HTTP server failed.
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}
