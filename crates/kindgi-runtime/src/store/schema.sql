PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;

CREATE TABLE IF NOT EXISTS tenants (
    id          TEXT PRIMARY KEY,
    state       TEXT NOT NULL DEFAULT 'active',
    quota_bytes INTEGER
);

CREATE TABLE IF NOT EXISTS projects (
    id        TEXT PRIMARY KEY,
    suspended INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS runs (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    project_id TEXT,
    ended_ms   INTEGER
);

CREATE TABLE IF NOT EXISTS calls (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs(id),
    tool_id         TEXT NOT NULL,
    idempotency_key TEXT,
    can_store       INTEGER NOT NULL,
    can_read        INTEGER NOT NULL,
    output_schema   TEXT,
    answered_ms     INTEGER,
    created_ms      INTEGER NOT NULL,
    UNIQUE (run_id, idempotency_key)
);

CREATE TABLE IF NOT EXISTS tokens (
    id          TEXT PRIMARY KEY,
    call_id     TEXT NOT NULL REFERENCES calls(id),
    secret_hash BLOB NOT NULL,
    deadline_ms INTEGER NOT NULL,
    created_ms  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS files (
    artifact_id  TEXT PRIMARY KEY,
    call_id      TEXT NOT NULL REFERENCES calls(id),
    run_id       TEXT NOT NULL,
    tenant_id    TEXT NOT NULL,
    name         TEXT,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    pages        INTEGER,
    deleted_ms   INTEGER,
    created_ms   INTEGER NOT NULL,
    UNIQUE (call_id, sha256)
);

CREATE TABLE IF NOT EXISTS usage (
    tenant_id TEXT PRIMARY KEY,
    bytes     INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS waits (
    id            TEXT PRIMARY KEY,
    call_id       TEXT NOT NULL UNIQUE REFERENCES calls(id),
    state         TEXT NOT NULL,
    name          TEXT,
    timeout_at_ms INTEGER,
    output        TEXT,
    completed_ms  INTEGER,
    created_ms    INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS wait_links (
    id          TEXT PRIMARY KEY,
    wait_id     TEXT NOT NULL REFERENCES waits(id),
    secret_hash BLOB NOT NULL,
    created_ms  INTEGER NOT NULL
);

-- The calls a developer made from the inspector, as it shows them (its
-- request without credentials, its answer), newest last; the last
-- HISTORY_KEEP are kept.
CREATE TABLE IF NOT EXISTS history (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    record     TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
