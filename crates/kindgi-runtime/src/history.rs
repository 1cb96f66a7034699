//! The inspector's history in the runtime's store: each call a developer
//! made from the page, as a JSON record, kept across restarts of
//! `kindgi dev`; the newest [`HISTORY_KEEP`].

use serde_json::Value;

use crate::runtime::now_ms;
use crate::{DevRuntime, RuntimeError};

/// How many records the history keeps.
pub const HISTORY_KEEP: usize = 200;

impl DevRuntime {
    /// Keeps `record` as `id`; a record of the same id is replaced.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn keep_history(&self, id: &str, record: &Value) -> Result<(), RuntimeError> {
        let id = id.to_owned();
        let text = record.to_string();
        self.inner
            .store
            .db(move |db| db.keep_history(&id, &text, HISTORY_KEEP, now_ms()))
            .await
    }

    /// The record kept as `id`.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn history_record(&self, id: &str) -> Result<Option<Value>, RuntimeError> {
        let id = id.to_owned();
        let text = self
            .inner
            .store
            .db(move |db| db.history_record(&id))
            .await?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Every kept record, newest first.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn history(&self) -> Result<Vec<Value>, RuntimeError> {
        let texts = self.inner.store.db(|db| db.history()).await?;
        Ok(texts
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuntimeConfig;
    use serde_json::json;

    #[tokio::test]
    async fn keeps_the_newest_records_across_a_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let runtime = DevRuntime::open(RuntimeConfig::new(dir.path())).expect("runtime");
        for n in 0..(HISTORY_KEEP + 3) {
            runtime
                .keep_history(&format!("c{n}"), &json!({"n": n}))
                .await
                .expect("kept");
        }
        runtime
            .keep_history("c10", &json!({"n": 10, "answered": true}))
            .await
            .expect("replaced");
        drop(runtime);
        let runtime = DevRuntime::open(RuntimeConfig::new(dir.path())).expect("reopened");
        let all = runtime.history().await.expect("history");
        assert_eq!(all.len(), HISTORY_KEEP);
        assert_eq!(all[0], json!({"n": HISTORY_KEEP + 2}));
        assert_eq!(all[HISTORY_KEEP - 1], json!({"n": 3}));
        assert_eq!(
            runtime.history_record("c10").await.expect("read"),
            Some(json!({"n": 10, "answered": true}))
        );
        assert_eq!(runtime.history_record("c0").await.expect("read"), None);
    }
}
