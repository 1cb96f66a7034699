//! The embedded default store: a SQLite database (`kindgi.db`: calls,
//! tokens, files, usage, waits, the inspector's history) and a content-addressed blob directory,
//! both under the runtime's data directory.
//!
//! Database work runs on tokio's blocking threads, one statement set at a
//! time behind a mutex: SQLite serializes writers anyway, and this keeps a
//! check-then-insert (a call's file limit, a tenant's quota) atomic.

mod blobs;
mod db;
mod history;
pub mod records;

use std::path::Path;
use std::sync::{Arc, Mutex};

pub(crate) use blobs::Blobs;
pub(crate) use db::{Db, NewFile};

use crate::RuntimeError;

/// The store: database and blobs.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    db: Arc<Mutex<Db>>,
    blobs: Blobs,
}

impl Store {
    /// Opens (creating) the store under `data_dir`, and sweeps the blobs no
    /// file needs any more (see [`Blobs::sweep`]).
    pub(crate) fn open(data_dir: &Path) -> Result<Self, RuntimeError> {
        std::fs::create_dir_all(data_dir).map_err(|source| RuntimeError::DataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let blobs = Blobs::open(data_dir).map_err(|source| RuntimeError::DataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let db = Db::open(&data_dir.join("kindgi.db"))?;
        // Best effort: a blob that can't be swept only takes disk.
        match blobs.sweep(&db.live_blobs()?) {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "swept blobs no file needs"),
            Err(error) => tracing::warn!(%error, "could not sweep the blob directory"),
        }
        Ok(Self {
            db: Arc::new(Mutex::new(db)),
            blobs,
        })
    }

    /// Runs `f` on the database on a blocking thread.
    pub(crate) async fn db<T, F>(&self, f: F) -> Result<T, RuntimeError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> rusqlite::Result<T> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        tokio::task::spawn_blocking(move || {
            let mut guard = db
                .lock()
                .map_err(|_| RuntimeError::Task("the database lock was poisoned".into()))?;
            f(&mut guard).map_err(RuntimeError::from)
        })
        .await
        .map_err(|e| RuntimeError::Task(e.to_string()))?
    }

    /// Runs `f` on the blob directory on a blocking thread.
    pub(crate) async fn blobs<T, F>(&self, f: F) -> Result<T, RuntimeError>
    where
        T: Send + 'static,
        F: FnOnce(&Blobs) -> std::io::Result<T> + Send + 'static,
    {
        let blobs = self.blobs.clone();
        tokio::task::spawn_blocking(move || f(&blobs).map_err(RuntimeError::from))
            .await
            .map_err(|e| RuntimeError::Task(e.to_string()))?
    }
}
