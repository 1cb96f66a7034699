//! The pack's SQLite database: tickets, keyed by the idempotency key of the
//! call that logged them, and the refund approvals people are asked for.
//!
//! Every call opens its own connection (cheap for SQLite) with WAL and a
//! busy timeout, so concurrent calls of one service wait for each other
//! instead of failing.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, params};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tickets (
    id              INTEGER PRIMARY KEY,
    tenant_id       TEXT NOT NULL,
    idempotency_key TEXT,
    customer_email  TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    priority        TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (tenant_id, idempotency_key)
);
CREATE TABLE IF NOT EXISTS approvals (
    wait_id     TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    ticket_id   TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    answer_url  TEXT NOT NULL,
    requested_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
";

/// Opens the database at `path`, creating its tables on first use.
///
/// # Errors
///
/// SQLite's error when the file can't be opened or written.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let db = Connection::open(path)?;
    db.busy_timeout(Duration::from_secs(5))?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    db.execute_batch(SCHEMA)?;
    Ok(db)
}

/// A ticket to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTicket<'a> {
    /// The tenant it belongs to.
    pub tenant_id: &'a str,
    /// The call's idempotency key; `None` logs a new ticket every time.
    pub idempotency_key: Option<&'a str>,
    /// Who wrote in.
    pub customer_email: &'a str,
    /// The ticket's subject line.
    pub subject: &'a str,
    /// What they wrote.
    pub body: &'a str,
    /// `low`, `normal`, `high` or `urgent`.
    pub priority: &'a str,
}

/// Logs a ticket once per idempotency key: answers its id, and whether
/// this call created it (`false`: an earlier run of the same call did).
///
/// # Errors
///
/// SQLite's error.
pub fn log_ticket(db: &Connection, ticket: &NewTicket<'_>) -> rusqlite::Result<(i64, bool)> {
    let inserted = db.execute(
        "INSERT INTO tickets (tenant_id, idempotency_key, customer_email, subject, body, priority)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (tenant_id, idempotency_key) DO NOTHING",
        params![
            ticket.tenant_id,
            ticket.idempotency_key,
            ticket.customer_email,
            ticket.subject,
            ticket.body,
            ticket.priority
        ],
    )?;
    if inserted == 1 {
        return Ok((db.last_insert_rowid(), true));
    }
    // Only a conflict inserts nothing, and only a key can conflict.
    let id = db.query_row(
        "SELECT id FROM tickets WHERE tenant_id = ?1 AND idempotency_key = ?2",
        params![ticket.tenant_id, ticket.idempotency_key],
        |row| row.get(0),
    )?;
    Ok((id, false))
}

/// How many tickets a tenant has, by priority, most urgent first.
///
/// # Errors
///
/// SQLite's error.
pub fn counts_by_priority(
    db: &Connection,
    tenant_id: &str,
) -> rusqlite::Result<Vec<(String, u64)>> {
    let mut statement = db.prepare(
        "SELECT priority, COUNT(*) FROM tickets WHERE tenant_id = ?1 GROUP BY priority
         ORDER BY CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END",
    )?;
    let rows = statement.query_map(params![tenant_id], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, u64>(1)?))
    })?;
    rows.collect()
}

/// A refund waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval<'a> {
    /// The call's wait id: the same on every re-run of the call.
    pub wait_id: &'a str,
    /// The tenant it belongs to.
    pub tenant_id: &'a str,
    /// The ticket the refund is for.
    pub ticket_id: &'a str,
    /// How much, in cents.
    pub amount_cents: u64,
    /// Why the customer should get it.
    pub reason: &'a str,
    /// Where the approver posts the decision. A credential: only the
    /// approvals queue reads it.
    pub answer_url: &'a str,
}

/// Queues an approval for the team's approvals page; a re-run of the same
/// call refreshes its link instead of queueing it twice.
///
/// # Errors
///
/// SQLite's error.
pub fn queue_approval(db: &Connection, approval: &PendingApproval<'_>) -> rusqlite::Result<()> {
    db.execute(
        "INSERT INTO approvals (wait_id, tenant_id, ticket_id, amount_cents, reason, answer_url)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (wait_id) DO UPDATE SET answer_url = excluded.answer_url",
        params![
            approval.wait_id,
            approval.tenant_id,
            approval.ticket_id,
            i64::try_from(approval.amount_cents).unwrap_or(i64::MAX),
            approval.reason,
            approval.answer_url
        ],
    )?;
    Ok(())
}

/// The ticket ids of a tenant's queued approvals.
///
/// # Errors
///
/// SQLite's error.
pub fn queued_approvals(db: &Connection, tenant_id: &str) -> rusqlite::Result<Vec<String>> {
    let mut statement =
        db.prepare("SELECT ticket_id FROM approvals WHERE tenant_id = ?1 ORDER BY requested_at")?;
    let rows = statement.query_map(params![tenant_id], |row| row.get(0))?;
    rows.collect()
}

/// The number of tickets a tenant has logged.
///
/// # Errors
///
/// SQLite's error.
pub fn ticket_count(db: &Connection, tenant_id: &str) -> rusqlite::Result<u64> {
    db.query_row(
        "SELECT COUNT(*) FROM tickets WHERE tenant_id = ?1",
        params![tenant_id],
        |row| row.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(key: Option<&str>) -> NewTicket<'_> {
        NewTicket {
            tenant_id: "acme",
            idempotency_key: key,
            customer_email: "ana@example.com",
            subject: "Refund",
            body: "Please refund order 12.",
            priority: "high",
        }
    }

    #[test]
    fn a_key_logs_once_and_no_key_logs_every_time() -> rusqlite::Result<()> {
        let dir =
            tempfile::tempdir().map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        let db = open(&dir.path().join("t.db"))?;
        let (first, created) = log_ticket(&db, &ticket(Some("k1")))?;
        assert!(created);
        assert_eq!(log_ticket(&db, &ticket(Some("k1")))?, (first, false));
        let (second, created) = log_ticket(&db, &ticket(None))?;
        assert!(created && second != first);
        assert!(log_ticket(&db, &ticket(None))?.1);
        assert_eq!(ticket_count(&db, "acme")?, 3);
        assert_eq!(
            counts_by_priority(&db, "acme")?,
            vec![("high".to_owned(), 3)]
        );
        Ok(())
    }
}
