//! The SQLite half of the store: calls, tokens, files, usage, waits.
//! Every function here is blocking; [`super::Store`] runs them off the
//! async threads.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::records::{
    Closed, Completion, FileRecord, Inserted, OpenCall, OpenRefusal, OpenedCall, TenantSettings,
    TokenView, WaitRecord, WaitState,
};
use crate::tokens::{self, Minted};

/// The store's database connection.
#[derive(Debug)]
pub(crate) struct Db {
    pub(super) conn: Connection,
}

/// `Ok(None)` for a missing row, like SQL's lookups.
type Found<T> = rusqlite::Result<Option<T>>;

/// A new file's fields, ready to commit.
#[derive(Debug, Clone)]
pub(crate) struct NewFile {
    pub(crate) name: Option<String>,
    pub(crate) content_type: String,
    pub(crate) size: u64,
    pub(crate) sha256: String,
    pub(crate) pages: Option<u32>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn file_from_row(row: &Row<'_>) -> rusqlite::Result<FileRecord> {
    Ok(FileRecord {
        artifact_id: row.get(0)?,
        call_id: row.get(1)?,
        run_id: row.get(2)?,
        tenant_id: row.get(3)?,
        name: row.get(4)?,
        content_type: row.get(5)?,
        size: to_u64(row.get(6)?),
        sha256: row.get(7)?,
        pages: row
            .get::<_, Option<i64>>(8)?
            .and_then(|p| u32::try_from(p).ok()),
        deleted: row.get::<_, Option<i64>>(9)?.is_some(),
    })
}

const FILE_COLUMNS: &str =
    "artifact_id, call_id, run_id, tenant_id, name, content_type, size, sha256, pages, deleted_ms";

impl Db {
    /// Opens (creating) the database at `path` and brings its schema up.
    pub(crate) fn open(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(include_str!("schema.sql"))?;
        Ok(Self { conn })
    }

    /// Opens a call, or re-runs the one its run has under the same
    /// idempotency key: a new token, and a new link to the same wait.
    pub(crate) fn open_call(
        &mut self,
        req: &OpenCall,
        deadline_at_ms: u64,
        now_ms: u64,
    ) -> rusqlite::Result<Result<OpenedCall, OpenRefusal>> {
        let tx = self.conn.transaction()?;
        let run: Option<(String, Option<String>, Option<i64>)> = tx
            .query_row(
                "SELECT tenant_id, project_id, ended_ms FROM runs WHERE id = ?1",
                [&req.run_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match run {
            Some((_, _, Some(_))) => return Ok(Err(OpenRefusal::RunEnded)),
            Some((tenant, project, None)) => {
                if tenant != req.tenant_id
                    || (req.project_id.is_some() && project != req.project_id)
                {
                    return Ok(Err(OpenRefusal::RunMismatch));
                }
            }
            None => {
                tx.execute(
                    "INSERT INTO runs (id, tenant_id, project_id) VALUES (?1, ?2, ?3)",
                    params![req.run_id, req.tenant_id, req.project_id],
                )?;
            }
        }
        let existing: Option<String> = match &req.idempotency_key {
            Some(key) => tx
                .query_row(
                    "SELECT id FROM calls WHERE run_id = ?1 AND idempotency_key = ?2",
                    params![req.run_id, key],
                    |r| r.get(0),
                )
                .optional()?,
            None => None,
        };
        let schema = req.output_schema.as_ref().map(ToString::to_string);
        let (call_id, rerun) = match existing {
            Some(id) => {
                tx.execute(
                    "UPDATE calls SET answered_ms = NULL, can_store = ?2, can_read = ?3,
                     output_schema = COALESCE(?4, output_schema) WHERE id = ?1",
                    params![id, req.store, req.read, schema],
                )?;
                (id, true)
            }
            None => {
                let id = format!("call_{}", tokens::random_hex(12));
                tx.execute(
                    "INSERT INTO calls (id, run_id, tool_id, idempotency_key, can_store, can_read,
                     output_schema, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        id,
                        req.run_id,
                        req.tool_id,
                        req.idempotency_key,
                        req.store,
                        req.read,
                        schema,
                        to_i64(now_ms)
                    ],
                )?;
                (id, false)
            }
        };
        let token = if req.store || req.read {
            let minted = tokens::mint(tokens::TOOL_FILES_PREFIX);
            tx.execute(
                "INSERT INTO tokens (id, call_id, secret_hash, deadline_ms, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    minted.id,
                    call_id,
                    minted.secret_hash,
                    to_i64(deadline_at_ms),
                    to_i64(now_ms)
                ],
            )?;
            Some(minted.public)
        } else {
            None
        };
        let wait = if req.pauses {
            let wait_id: Option<String> = tx
                .query_row("SELECT id FROM waits WHERE call_id = ?1", [&call_id], |r| {
                    r.get(0)
                })
                .optional()?;
            let wait_id = match wait_id {
                Some(id) => id,
                None => {
                    let id = format!("wait_{}", tokens::random_hex(12));
                    tx.execute(
                        "INSERT INTO waits (id, call_id, state, created_ms) VALUES (?1, ?2, 'open', ?3)",
                        params![id, call_id, to_i64(now_ms)],
                    )?;
                    id
                }
            };
            let link: Minted = tokens::mint(tokens::WAIT_LINK_PREFIX);
            tx.execute(
                "INSERT INTO wait_links (id, wait_id, secret_hash, created_ms) VALUES (?1, ?2, ?3, ?4)",
                params![link.id, wait_id, link.secret_hash, to_i64(now_ms)],
            )?;
            Some((wait_id, link.public))
        } else {
            None
        };
        tx.commit()?;
        Ok(Ok(OpenedCall {
            call_id,
            rerun,
            token,
            wait,
        }))
    }

    /// The token of id `token_id` with its call's circumstances at `now_ms`.
    pub(crate) fn token(&self, token_id: &str, now_ms: u64) -> Found<TokenView> {
        self.conn
            .query_row(
                "SELECT t.call_id, c.run_id, r.tenant_id, r.project_id, c.can_store, c.can_read,
                        c.answered_ms, t.deadline_ms, r.ended_ms,
                        COALESCE(tn.state, 'active'), COALESCE(p.suspended, 0), t.secret_hash
                 FROM tokens t JOIN calls c ON c.id = t.call_id JOIN runs r ON r.id = c.run_id
                 LEFT JOIN tenants tn ON tn.id = r.tenant_id
                 LEFT JOIN projects p ON p.id = r.project_id
                 WHERE t.id = ?1",
                [token_id],
                |r| {
                    let answered: Option<i64> = r.get(6)?;
                    let deadline: i64 = r.get(7)?;
                    let ended: Option<i64> = r.get(8)?;
                    let closed = if ended.is_some() {
                        Some(Closed::RunEnded)
                    } else if answered.is_some() {
                        Some(Closed::Answered)
                    } else if to_i64(now_ms) >= deadline {
                        Some(Closed::Deadline)
                    } else {
                        None
                    };
                    Ok(TokenView {
                        call_id: r.get(0)?,
                        run_id: r.get(1)?,
                        tenant_id: r.get(2)?,
                        project_id: r.get(3)?,
                        can_store: r.get(4)?,
                        can_read: r.get(5)?,
                        closed,
                        tenant_state: r.get(9)?,
                        project_suspended: r.get::<_, i64>(10)? != 0,
                        secret_hash: r.get(11)?,
                    })
                },
            )
            .optional()
    }

    /// The file the call stored with these bytes, if any.
    pub(crate) fn file_in_call(&self, call_id: &str, sha256: &str) -> Found<FileRecord> {
        self.conn
            .query_row(
                &format!("SELECT {FILE_COLUMNS} FROM files WHERE call_id = ?1 AND sha256 = ?2"),
                params![call_id, sha256],
                file_from_row,
            )
            .optional()
    }

    /// A file by id.
    pub(crate) fn file(&self, artifact_id: &str) -> Found<FileRecord> {
        self.conn
            .query_row(
                &format!("SELECT {FILE_COLUMNS} FROM files WHERE artifact_id = ?1"),
                [artifact_id],
                file_from_row,
            )
            .optional()
    }

    /// Commits a file record for a call whose blob is in place: in one
    /// transaction, answers the call's earlier file of the same bytes, or
    /// refuses past the call's file limit or the tenant's quota, or records
    /// the file and counts its bytes against the tenant. A `dry_run` only
    /// answers whether there is room.
    pub(crate) fn insert_file(
        &mut self,
        token: &TokenView,
        file: &NewFile,
        max_files: u32,
        default_quota: u64,
        now_ms: u64,
        dry_run: bool,
    ) -> rusqlite::Result<Inserted> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing = tx
            .query_row(
                &format!("SELECT {FILE_COLUMNS} FROM files WHERE call_id = ?1 AND sha256 = ?2"),
                params![token.call_id, file.sha256],
                file_from_row,
            )
            .optional()?;
        if let Some(existing) = existing {
            return Ok(Inserted::Existing(existing));
        }
        let count: i64 = tx.query_row(
            "SELECT COUNT(*) FROM files WHERE call_id = ?1",
            [&token.call_id],
            |r| r.get(0),
        )?;
        if to_u64(count) >= u64::from(max_files) {
            return Ok(Inserted::Limit);
        }
        let used: i64 = tx
            .query_row(
                "SELECT bytes FROM usage WHERE tenant_id = ?1",
                [&token.tenant_id],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        let quota: Option<i64> = tx
            .query_row(
                "SELECT quota_bytes FROM tenants WHERE id = ?1",
                [&token.tenant_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let quota = quota.map_or(default_quota, to_u64);
        if to_u64(used).saturating_add(file.size) > quota {
            return Ok(Inserted::Storage);
        }
        let record = FileRecord {
            artifact_id: format!("art_{}", uuid::Uuid::new_v4().simple()),
            call_id: token.call_id.clone(),
            run_id: token.run_id.clone(),
            tenant_id: token.tenant_id.clone(),
            name: file.name.clone(),
            content_type: file.content_type.clone(),
            size: file.size,
            sha256: file.sha256.clone(),
            pages: file.pages,
            deleted: false,
        };
        if dry_run {
            // Dropping the transaction rolls it back: nothing changed.
            return Ok(Inserted::Stored(record));
        }
        tx.execute(
            &format!(
                "INSERT INTO files ({FILE_COLUMNS}, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, ?10)"
            ),
            params![
                record.artifact_id,
                record.call_id,
                record.run_id,
                record.tenant_id,
                record.name,
                record.content_type,
                to_i64(record.size),
                record.sha256,
                record.pages,
                to_i64(now_ms)
            ],
        )?;
        tx.execute(
            "INSERT INTO usage (tenant_id, bytes) VALUES (?1, ?2)
             ON CONFLICT (tenant_id) DO UPDATE SET bytes = bytes + excluded.bytes",
            params![token.tenant_id, to_i64(file.size)],
        )?;
        tx.commit()?;
        Ok(Inserted::Stored(record))
    }

    /// The sha256 of every file not deleted: the blobs still needed.
    pub(crate) fn live_blobs(&self) -> rusqlite::Result<std::collections::HashSet<String>> {
        let mut statement = self
            .conn
            .prepare("SELECT DISTINCT sha256 FROM files WHERE deleted_ms IS NULL")?;
        let rows = statement.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    }

    /// Marks a file deleted and gives its bytes back to its tenant.
    pub(crate) fn delete_file(&mut self, artifact_id: &str, now_ms: u64) -> rusqlite::Result<bool> {
        let tx = self.conn.transaction()?;
        let file = tx
            .query_row(
                "SELECT tenant_id, size FROM files WHERE artifact_id = ?1 AND deleted_ms IS NULL",
                [artifact_id],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
            )
            .optional()?;
        let Some((tenant, size)) = file else {
            return Ok(false);
        };
        tx.execute(
            "UPDATE files SET deleted_ms = ?2 WHERE artifact_id = ?1",
            params![artifact_id, to_i64(now_ms)],
        )?;
        tx.execute(
            "UPDATE usage SET bytes = MAX(0, bytes - ?2) WHERE tenant_id = ?1",
            params![tenant, size],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Marks a call answered: its tokens close. False for an unknown call.
    pub(crate) fn answer_call(&mut self, call_id: &str, now_ms: u64) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "UPDATE calls SET answered_ms = COALESCE(answered_ms, ?2) WHERE id = ?1",
            params![call_id, to_i64(now_ms)],
        )?;
        Ok(n > 0)
    }

    /// Ends a run: every token of its calls closes. False for an unknown run.
    pub(crate) fn end_run(&mut self, run_id: &str, now_ms: u64) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "UPDATE runs SET ended_ms = COALESCE(ended_ms, ?2) WHERE id = ?1",
            params![run_id, to_i64(now_ms)],
        )?;
        Ok(n > 0)
    }

    /// Sets a tenant's state and/or quota.
    pub(crate) fn set_tenant(&mut self, id: &str, s: &TenantSettings) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO tenants (id, state, quota_bytes) VALUES (?1, COALESCE(?2, 'active'), ?3)
             ON CONFLICT (id) DO UPDATE SET state = COALESCE(?2, state),
                                            quota_bytes = COALESCE(?3, quota_bytes)",
            params![id, s.state, s.quota_bytes.map(to_i64)],
        )?;
        Ok(())
    }

    /// A tenant's bytes in use.
    pub(crate) fn usage(&self, tenant_id: &str) -> rusqlite::Result<u64> {
        Ok(self
            .conn
            .query_row(
                "SELECT bytes FROM usage WHERE tenant_id = ?1",
                [tenant_id],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .map_or(0, to_u64))
    }

    /// Suspends or resumes a project.
    pub(crate) fn set_project(&mut self, id: &str, suspended: bool) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO projects (id, suspended) VALUES (?1, ?2)
             ON CONFLICT (id) DO UPDATE SET suspended = excluded.suspended",
            params![id, suspended],
        )?;
        Ok(())
    }

    /// The wait a link names, with the link's secret hash to compare.
    pub(crate) fn wait_by_link(
        &mut self,
        link_id: &str,
        now_ms: u64,
    ) -> Found<(WaitRecord, Vec<u8>)> {
        let found: Option<(String, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT wait_id, secret_hash FROM wait_links WHERE id = ?1",
                [link_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((wait_id, hash)) = found else {
            return Ok(None);
        };
        Ok(self.wait(&wait_id, now_ms)?.map(|w| (w, hash)))
    }

    /// A wait by id, timed out first if its time has passed.
    pub(crate) fn wait(&mut self, wait_id: &str, now_ms: u64) -> Found<WaitRecord> {
        self.conn.execute(
            "UPDATE waits SET state = 'timed-out' WHERE id = ?1 AND state = 'waiting'
             AND timeout_at_ms IS NOT NULL AND timeout_at_ms <= ?2",
            params![wait_id, to_i64(now_ms)],
        )?;
        self.conn
            .query_row(
                "SELECT w.id, w.call_id, w.state, w.name, w.timeout_at_ms, w.output, c.output_schema
                 FROM waits w JOIN calls c ON c.id = w.call_id WHERE w.id = ?1",
                [wait_id],
                |r| {
                    let output: Option<String> = r.get(5)?;
                    let schema: Option<String> = r.get(6)?;
                    Ok(WaitRecord {
                        id: r.get(0)?,
                        call_id: r.get(1)?,
                        state: WaitState::parse(&r.get::<_, String>(2)?),
                        name: r.get(3)?,
                        timeout_at_ms: r.get::<_, Option<i64>>(4)?.map(to_u64),
                        output: output.and_then(|o| serde_json::from_str(&o).ok()),
                        output_schema: schema.and_then(|s| serde_json::from_str(&s).ok()),
                    })
                },
            )
            .optional()
    }

    /// The wait of a call.
    pub(crate) fn wait_of_call(&mut self, call_id: &str, now_ms: u64) -> Found<WaitRecord> {
        let id: Option<String> = self
            .conn
            .query_row("SELECT id FROM waits WHERE call_id = ?1", [call_id], |r| {
                r.get(0)
            })
            .optional()?;
        match id {
            Some(id) => self.wait(&id, now_ms),
            None => Ok(None),
        }
    }

    /// Records that the call paused: the wait's clock starts.
    pub(crate) fn pause(
        &mut self,
        wait_id: &str,
        timeout_at_ms: u64,
        name: Option<&str>,
        now_ms: u64,
    ) -> Found<WaitRecord> {
        self.conn.execute(
            "UPDATE waits SET state = 'waiting', timeout_at_ms = ?2, name = ?3
             WHERE id = ?1 AND state = 'open'",
            params![wait_id, to_i64(timeout_at_ms), name],
        )?;
        self.wait(wait_id, now_ms)
    }

    /// Completes a wait with `output`, once.
    pub(crate) fn complete_wait(
        &mut self,
        wait_id: &str,
        output: &serde_json::Value,
        now_ms: u64,
    ) -> Found<Completion> {
        let Some(wait) = self.wait(wait_id, now_ms)? else {
            return Ok(None);
        };
        Ok(Some(match wait.state {
            WaitState::Completed => Completion::AlreadyComplete(wait),
            WaitState::TimedOut => Completion::TimedOut(wait),
            WaitState::Open | WaitState::Waiting => {
                self.conn.execute(
                    "UPDATE waits SET state = 'completed', output = ?2, completed_ms = ?3
                     WHERE id = ?1 AND state IN ('open', 'waiting')",
                    params![wait_id, output.to_string(), to_i64(now_ms)],
                )?;
                let done = self.wait(wait_id, now_ms)?;
                match done {
                    Some(w) => Completion::Completed(w),
                    None => return Ok(None),
                }
            }
        }))
    }
}
