//! A tool call's files (protocol 2.10.0): store bytes with the runtime and
//! read files back, through the call's own token.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kindgi_protocol::percent::encode_component;
use kindgi_protocol::{FileValue, NotRead, NotStored, ReadAnswer, Secret, StoreAnswer, headers};

/// How long a files request may outlive the call's deadline.
const DEADLINE_MARGIN: Duration = Duration::from_millis(100);

/// How many times a busy (503) or rate-limited (429) answer is retried.
const MAX_RETRIES: u32 = 5;

/// The HTTP client of the files API. It follows no redirect — the
/// protocol has none, and following one would send the call's bytes (a
/// 307 re-posts them) to wherever the answer points — and sends no
/// `Referer`, which would carry the files URL: a redirect is answered to
/// the handler as [`FilesError::Redirected`].
pub(crate) fn client() -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false);
    // The `native-tls` feature asks for the platform's TLS library (by
    // default: rustls, when `https` is on too, as in a workspace build).
    #[cfg(feature = "native-tls")]
    let builder = builder.tls_backend_native();
    // Building fails only when the TLS backend can't start, which
    // `Client::new` would fail on as well.
    builder.build().unwrap_or_else(|_| reqwest::Client::new())
}

/// The handle a tool that declares `storesFiles` / `readsFiles` gets for
/// its call's files ([`crate::ToolContext::files`]).
///
/// The call's token travels only to the runtime's files URL, only in the
/// `Authorization` header, and is never logged.
#[derive(Debug, Clone)]
pub struct Files {
    client: reqwest::Client,
    url: String,
    token: Secret,
    stores: bool,
    reads: bool,
    has_idempotency_key: bool,
    deadline: Instant,
}

/// Why a call has no files ([`crate::ToolContext::files`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilesNotAvailable {
    /// The tool declares neither `storesFiles` nor `readsFiles`, so the
    /// runtime grants it no files.
    #[error(
        "this tool declares neither storesFiles nor readsFiles, so its calls get no files: add .stores_files() or .reads_files() to the tool (`stores_files` / `reads_files` in #[kindgi::tool])"
    )]
    NotDeclared,
    /// The runtime sent no files grant with this call.
    #[error(
        "the runtime sent no files grant with this call: it predates protocol 2.10 or has no file store; under `kindgi dev` the dev runtime sends one, and in a test `TestPack::with_dev_runtime` does"
    )]
    NoGrant,
    /// A tool that only stores files gets them only on a call with an
    /// idempotency key (so that a re-run stores once), and this call has
    /// none.
    #[error(
        "this call has no idempotency key, and a tool that stores files gets its files only on a call with one, so that a re-run stores once: a runtime sets one on every tool step; by hand, send ctx.idempotencyKey (`kindgi call` sends one), and in a test give TestContext::idempotency_key(…)"
    )]
    NoIdempotencyKey,
}

/// What a store answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreOutcome {
    /// The stored file: return it in the output's top-level `files`.
    File(FileValue),
    /// Nothing stored, and why.
    NotStored(NotStored),
}

/// What a read answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The file's bytes.
    Bytes(Bytes),
    /// Nothing read, and why.
    NotRead(NotRead),
}

/// Why a store or read didn't get an answer from the runtime.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilesError {
    /// The tool doesn't declare `storesFiles` (or `readsFiles`).
    #[error("this tool doesn't declare {0}: add .{1}() to the tool (`{1}` in #[kindgi::tool])")]
    NotDeclared(&'static str, &'static str),
    /// Storing needs a call with an idempotency key.
    #[error(
        "files can be stored only on a call with an idempotency key, so that a re-run of the call stores once: a runtime sets one on every tool step; `kindgi call` sets one, and in a test give TestContext::idempotency_key(…)"
    )]
    NoIdempotencyKey,
    /// The runtime stayed busy (`tool-files-busy`) through every retry.
    #[error("the runtime's file store stayed busy (tool-files-busy)")]
    Busy,
    /// The runtime kept refusing for the rate limit through every retry.
    #[error("the runtime's file store kept answering 429 rate-limit-exceeded")]
    RateLimited,
    /// The call's deadline passed before an answer.
    #[error("the call's deadline passed before the file store answered")]
    Deadline,
    /// The runtime refused the request (`{error:{code, message}}`).
    #[error("the file store answered {status} {code}: {message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The error code (`tool-file-token-closed`, …).
        code: String,
        /// The runtime's message.
        message: String,
    },
    /// The request didn't reach the runtime, or its answer was unreadable.
    #[error("the file store couldn't be reached: {0}")]
    Transport(String),
    /// The file store answered with a redirect (`status`), which the files
    /// client doesn't follow: the call's files go only to its files URL.
    #[error(
        "the file store answered {status}, a redirect, which is not followed: a call's files go only to its files URL"
    )]
    Redirected {
        /// HTTP status (301, 302, 303, 307, 308).
        status: u16,
    },
}

impl FilesError {
    fn transport(error: reqwest::Error) -> Self {
        // reqwest's Display names the URL, never the Authorization header.
        Self::Transport(error.without_url().to_string())
    }
}

impl Files {
    pub(crate) fn new(
        client: reqwest::Client,
        url: String,
        token: Secret,
        (stores, reads): (bool, bool),
        has_idempotency_key: bool,
        deadline: Instant,
    ) -> Self {
        Self {
            client,
            url: url.trim_end_matches('/').to_owned(),
            token,
            stores,
            reads,
            has_idempotency_key,
            deadline,
        }
    }

    /// Stores a file's bytes with the runtime.
    ///
    /// The runtime checks the bytes (they alone decide the type) and answers
    /// the stored file, or why nothing was stored. Storing the same bytes
    /// again in the same call answers the first file.
    ///
    /// # Errors
    ///
    /// [`FilesError`] when the tool doesn't declare `storesFiles`, the call
    /// has no idempotency key, or the runtime refused or didn't answer.
    /// A busy (503) or rate-limited (429) answer is retried after its
    /// `Retry-After` while the call's deadline allows.
    pub async fn store(
        &self,
        bytes: impl Into<Bytes>,
        name: &str,
        content_type: &str,
    ) -> Result<StoreOutcome, FilesError> {
        if !self.stores {
            return Err(FilesError::NotDeclared("storesFiles", "stores_files"));
        }
        if !self.has_idempotency_key {
            return Err(FilesError::NoIdempotencyKey);
        }
        let bytes = bytes.into();
        let encoded_name = encode_component(name);
        let response = self
            .send(|| {
                self.client
                    .post(&self.url)
                    .bearer_auth(self.token.expose())
                    .header(http::header::CONTENT_TYPE, content_type)
                    .header(headers::FILE_NAME, &encoded_name)
                    .body(bytes.clone())
            })
            .await?;
        let answer: StoreAnswer = response
            .json()
            .await
            .map_err(|e| FilesError::Transport(format!("unreadable store answer: {e}")))?;
        Ok(match answer {
            StoreAnswer::Stored { file } => StoreOutcome::File(file),
            StoreAnswer::NotStored { not_stored } => StoreOutcome::NotStored(not_stored),
            _ => return Err(FilesError::Transport("unknown store answer".to_owned())),
        })
    }

    /// Reads a file the call's run may be shown.
    ///
    /// # Errors
    ///
    /// As [`Files::store`], for `readsFiles`.
    pub async fn read(&self, artifact_id: &str) -> Result<ReadOutcome, FilesError> {
        if !self.reads {
            return Err(FilesError::NotDeclared("readsFiles", "reads_files"));
        }
        let url = format!("{}/{}", self.url, encode_component(artifact_id));
        let response = self
            .send(|| self.client.get(&url).bearer_auth(self.token.expose()))
            .await?;
        let is_json = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("application/json"));
        let body = response.bytes().await.map_err(FilesError::transport)?;
        if is_json {
            let answer: ReadAnswer = serde_json::from_slice(&body)
                .map_err(|e| FilesError::Transport(format!("unreadable read answer: {e}")))?;
            return Ok(ReadOutcome::NotRead(answer.not_read));
        }
        Ok(ReadOutcome::Bytes(body))
    }

    /// Sends a request, retrying 503 and 429 after `Retry-After` within the
    /// deadline, and turns a non-200 answer into an error.
    async fn send(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, FilesError> {
        let mut attempt = 0;
        loop {
            let remaining = self
                .deadline
                .checked_duration_since(Instant::now())
                .ok_or(FilesError::Deadline)?;
            // A margin past the deadline: when time runs out, the call's own
            // `deadline-exceeded` answers first, not this request's error.
            let response = request()
                .timeout(remaining + DEADLINE_MARGIN)
                .send()
                .await
                .map_err(|e| {
                    if e.is_timeout() {
                        FilesError::Deadline
                    } else {
                        FilesError::transport(e)
                    }
                })?;
            let status = response.status().as_u16();
            if status == 200 {
                return Ok(response);
            }
            if response.status().is_redirection() {
                return Err(FilesError::Redirected { status });
            }
            if matches!(status, 429 | 503) && attempt < MAX_RETRIES {
                let wait = retry_after(&response);
                if Instant::now() + wait < self.deadline {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            return Err(refusal(status, response).await);
        }
    }
}

fn retry_after(response: &reqwest::Response) -> Duration {
    let wait = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(kindgi_protocol::headers::parse_retry_after)
        .unwrap_or(Duration::from_secs(1));
    wait.min(Duration::from_secs(60))
}

async fn refusal(status: u16, response: reqwest::Response) -> FilesError {
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
    match (status, code.as_str()) {
        (503, "tool-files-busy") => FilesError::Busy,
        (429, _) => FilesError::RateLimited,
        _ => FilesError::Refused {
            status,
            message: body["error"]["message"].as_str().unwrap_or("").to_owned(),
            code,
        },
    }
}
