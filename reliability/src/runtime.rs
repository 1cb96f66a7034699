//! A `kindgi runtime` process (the dev runtime of `crates/kindgi-cli`) on
//! `127.0.0.1` port 0, and checks of its store on disk.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kindgi_test_kit::process::{ListeningProcess, start_dev_runtime};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::http::{self, Request, Response};

/// The admin token the runtime is started with.
pub const ADMIN_TOKEN: &str = "reliability-admin-token";

/// A running `kindgi runtime`. Killed when dropped.
#[derive(Debug)]
pub struct RuntimeProcess {
    process: ListeningProcess,
    data_dir: PathBuf,
}

impl RuntimeProcess {
    /// Starts `bin runtime` on `data_dir` with more `args`.
    ///
    /// # Panics
    ///
    /// When its first stdout line isn't a `listening` record.
    pub fn start(bin: &Path, data_dir: &Path, args: &[&str]) -> Self {
        let process = start_dev_runtime(bin, data_dir, ADMIN_TOKEN, args)
            .unwrap_or_else(|e| panic!("kindgi runtime: {e}"));
        Self {
            process,
            data_dir: data_dir.to_path_buf(),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.process.addr()
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        self.process.url()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Its data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// SIGKILLs it, as a crash would, and waits for it.
    pub fn kill(mut self) {
        self.process.kill();
    }

    /// Opens a call with the dev admin API (`POST /v1/dev/calls`): the
    /// answer's `toolFiles.token` is the call's files token.
    ///
    /// # Panics
    ///
    /// When the runtime doesn't answer 201.
    pub async fn open_call(&self, body: &Value) -> Value {
        let response = self
            .send(
                Request::post("/v1/dev/calls")
                    .header("authorization", &format!("Bearer {ADMIN_TOKEN}"))
                    .json(body),
            )
            .await;
        assert_eq!(response.status, 201, "open call: {}", response.text());
        response.json_or_null()
    }

    /// `POST /v1/tool-files` with the call's token.
    pub async fn store(
        &self,
        token: &str,
        bytes: &[u8],
        content_type: &str,
        name: Option<&str>,
    ) -> Response {
        let mut request = Request::post("/v1/tool-files")
            .header("authorization", &format!("Bearer {token}"))
            .header("content-type", content_type)
            .body(bytes.to_vec());
        if let Some(name) = name {
            request = request.header("kindgi-file-name", name);
        }
        self.send(request).await
    }

    /// `GET /v1/tool-files/{artifactId}` with the call's token.
    pub async fn read(&self, token: &str, artifact_id: &str) -> Response {
        self.send(
            Request::get(&format!("/v1/tool-files/{artifact_id}"))
                .header("authorization", &format!("Bearer {token}")),
        )
        .await
    }

    /// Sends a request and reads the answer; `None` when none came in 30 s.
    pub async fn try_send(&self, request: Request) -> Option<Response> {
        http::exchange(self.addr(), &request, Duration::from_secs(30))
            .await
            .response()
            .cloned()
    }

    /// Sends a request and reads the answer.
    ///
    /// # Panics
    ///
    /// When there is no answer within 30 s.
    pub async fn send(&self, request: Request) -> Response {
        http::exchange(self.addr(), &request, Duration::from_secs(30))
            .await
            .expect_answer("kindgi runtime")
    }
}

/// What a store folder holds, checked record by record.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StoreCheck {
    /// File records not deleted.
    pub records: usize,
    /// Records whose blob is missing.
    pub missing_blobs: Vec<String>,
    /// Records whose blob's sha256 or size isn't the record's.
    pub wrong_blobs: Vec<String>,
    /// What `PRAGMA integrity_check` answered (`ok` when all is well).
    pub integrity: String,
    /// Files left in `tmp/`.
    pub tmp_files: usize,
}

impl StoreCheck {
    /// Whether every record's blob is there with its sha256 and size, and
    /// SQLite finds the database whole.
    pub fn is_consistent(&self) -> bool {
        self.missing_blobs.is_empty() && self.wrong_blobs.is_empty() && self.integrity == "ok"
    }
}

/// Checks the store under `data_dir` (with no runtime running on it):
/// every file record's blob exists with its sha256 and size.
///
/// # Errors
///
/// When the database can't be opened or read.
pub fn check_store(data_dir: &Path) -> rusqlite::Result<StoreCheck> {
    let db = rusqlite::Connection::open(data_dir.join("kindgi.db"))?;
    let integrity: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    let mut statement = db.prepare(
        "SELECT artifact_id, sha256, size FROM files WHERE deleted_ms IS NULL ORDER BY artifact_id",
    )?;
    let rows = statement.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    let mut check = StoreCheck {
        integrity,
        ..StoreCheck::default()
    };
    for row in rows {
        let (id, sha, size) = row?;
        check.records += 1;
        let path = data_dir
            .join("blobs")
            .join(sha.get(..2).unwrap_or("00"))
            .join(&sha);
        match std::fs::read(&path) {
            Err(_) => check.missing_blobs.push(id),
            Ok(bytes) => {
                if hex::encode(Sha256::digest(&bytes)) != sha
                    || i64::try_from(bytes.len()).ok() != Some(size)
                {
                    check.wrong_blobs.push(id);
                }
            }
        }
    }
    check.tmp_files = std::fs::read_dir(data_dir.join("tmp"))
        .map(|d| d.count())
        .unwrap_or(0);
    Ok(check)
}
