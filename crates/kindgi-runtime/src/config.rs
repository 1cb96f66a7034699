//! What a dev runtime is configured with: where it keeps its store and the
//! limits of its tool-files API.

use std::path::PathBuf;
use std::time::Duration;

/// The most bytes of a request body the tool-files API reads: 10 MB.
pub const MAX_BODY_BYTES: u64 = 10 * 1024 * 1024;

/// The most files one call stores.
pub const MAX_FILES_PER_CALL: u32 = 10;

/// Size limits by kind of file, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeLimits {
    /// PNG, JPEG, GIF and WebP images.
    pub image: u64,
    /// PDF documents.
    pub pdf: u64,
    /// UTF-8 text.
    pub text: u64,
}

impl Default for TypeLimits {
    fn default() -> Self {
        Self {
            image: 5 * 1024 * 1024,
            pdf: MAX_BODY_BYTES,
            text: 1024 * 1024,
        }
    }
}

/// The configuration of a [`crate::DevRuntime`].
///
/// ```
/// use kindgi_runtime::RuntimeConfig;
/// let config = RuntimeConfig::new("/tmp/kindgi-data");
/// assert_eq!(config.max_files_per_call, 10);
/// ```
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where the store lives: `kindgi.db` and `blobs/`. Created on first start.
    pub data_dir: PathBuf,
    /// The base URL the runtime hands out in tool-files grants and wait
    /// links (`http://127.0.0.1:8787`). `None`: the address it listens on.
    pub public_url: Option<String>,
    /// The token of the dev admin API (`/v1/dev/...`).
    pub admin_token: String,
    /// The most bytes of a body read.
    pub max_body_bytes: u64,
    /// The most files one call stores.
    pub max_files_per_call: u32,
    /// Size limits by type.
    pub type_limits: TypeLimits,
    /// A tenant's storage quota, in bytes, unless the tenant sets its own.
    pub default_quota_bytes: u64,
    /// Requests one client may send to the tool-files API and to wait links,
    /// together, in a window.
    pub rate_limit: u32,
    /// The rate-limit window (a minute by default).
    pub rate_window: Duration,
    /// Bytes of files the runtime holds in memory at once.
    pub memory_budget_bytes: u64,
    /// How long a request waits for room in the memory budget before it is
    /// answered `tool-files-busy`.
    pub memory_wait: Duration,
    /// A call's deadline when its opener names none.
    pub default_call_deadline: Duration,
}

impl RuntimeConfig {
    /// The defaults, with the store under `data_dir` and a fresh random
    /// admin token.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            public_url: None,
            admin_token: crate::tokens::random_hex(24),
            max_body_bytes: MAX_BODY_BYTES,
            max_files_per_call: MAX_FILES_PER_CALL,
            type_limits: TypeLimits::default(),
            default_quota_bytes: 1024 * 1024 * 1024,
            rate_limit: 600,
            rate_window: Duration::from_secs(60),
            memory_budget_bytes: 64 * 1024 * 1024,
            memory_wait: Duration::from_secs(2),
            default_call_deadline: Duration::from_secs(120),
        }
    }
}
