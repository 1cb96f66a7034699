//! The `history` table: records the inspector keeps, by id, in the order
//! they came.

use rusqlite::{OptionalExtension, params};

use super::Db;

impl Db {
    /// Keeps `record` as `id` (replacing the record of that id, which
    /// keeps its place), then drops all but the newest `keep`.
    pub(crate) fn keep_history(
        &mut self,
        id: &str,
        record: &str,
        keep: usize,
        now_ms: u64,
    ) -> rusqlite::Result<()> {
        let updated = self.conn.execute(
            "UPDATE history SET record = ?2 WHERE id = ?1",
            params![id, record],
        )?;
        if updated == 0 {
            self.conn.execute(
                "INSERT INTO history (id, record, created_ms) VALUES (?1, ?2, ?3)",
                params![id, record, i64::try_from(now_ms).unwrap_or(i64::MAX)],
            )?;
        }
        self.conn.execute(
            "DELETE FROM history WHERE seq <= (SELECT seq FROM history ORDER BY seq DESC LIMIT 1 OFFSET ?1)",
            params![i64::try_from(keep).unwrap_or(i64::MAX)],
        )?;
        Ok(())
    }

    /// The record kept as `id`.
    pub(crate) fn history_record(&self, id: &str) -> rusqlite::Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT record FROM history WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()
    }

    /// Every kept record, newest first.
    pub(crate) fn history(&self) -> rusqlite::Result<Vec<String>> {
        let mut statement = self
            .conn
            .prepare("SELECT record FROM history ORDER BY seq DESC")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect()
    }
}
