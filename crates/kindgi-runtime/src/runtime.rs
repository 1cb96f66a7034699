//! The dev runtime as a library: open it on a data directory, open calls,
//! and serve its HTTP API on a listener until a shutdown future resolves.

use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kindgi_protocol::{Secret, ToolFilesGrant, ToolPause, WaitToken};
use serde::Serialize;
use tokio::sync::watch;

use crate::limits::{MemoryBudget, RateLimiter};
use crate::store::Store;
use crate::store::records::{OpenCall, OpenRefusal, TenantSettings, WaitRecord};
use crate::{RuntimeConfig, RuntimeError};

/// The default time a paused call waits for its answer: 24 hours.
pub const DEFAULT_PAUSE_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What a call's tool is handed: a files grant and/or a wait token.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallGrant {
    /// The call's id.
    pub call_id: String,
    /// Whether this re-ran a call its run already had (same idempotency key).
    pub rerun: bool,
    /// Where and with what token the tool stores and reads files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_files: Option<ToolFilesGrant>,
    /// The wait token, for a tool that pauses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_token: Option<WaitToken>,
}

/// A dev runtime: its store, limits and the links it hands out. Cheap to
/// clone; every clone is the same runtime.
///
/// ```no_run
/// # async fn demo() -> Result<(), kindgi_runtime::RuntimeError> {
/// use kindgi_runtime::{DevRuntime, RuntimeConfig};
/// let runtime = DevRuntime::open(RuntimeConfig::new("/tmp/kindgi-dev"))?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(kindgi_runtime::RuntimeError::Serve)?;
/// runtime.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct DevRuntime {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) config: RuntimeConfig,
    pub(crate) store: Store,
    pub(crate) rate: RateLimiter,
    pub(crate) budget: MemoryBudget,
    public_url: RwLock<String>,
    /// Bumped whenever a wait changes, so long-polls look again.
    changes: watch::Sender<u64>,
}

impl DevRuntime {
    /// Opens the runtime's store under `config.data_dir`, creating it on
    /// first start.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the data directory or database can't be used.
    pub fn open(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let store = Store::open(&config.data_dir)?;
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| "http://127.0.0.1".to_owned());
        Ok(Self {
            inner: Arc::new(Inner {
                rate: RateLimiter::new(config.rate_limit, config.rate_window),
                budget: MemoryBudget::new(config.memory_budget_bytes, config.memory_wait),
                store,
                public_url: RwLock::new(public_url.trim_end_matches('/').to_owned()),
                changes: watch::channel(0).0,
                config,
            }),
        })
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// The base URL of the links it hands out.
    pub fn public_url(&self) -> String {
        self.inner
            .public_url
            .read()
            .map(|u| u.clone())
            .unwrap_or_default()
    }

    pub(crate) fn set_public_url(&self, url: String) {
        if let Ok(mut current) = self.inner.public_url.write() {
            *current = url;
        }
    }

    /// Opens a call (or re-runs one, see [`OpenCall::idempotency_key`]): a
    /// files token when it stores or reads, a wait link when it pauses.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails; `Ok(Err(_))` when the run
    /// refuses new calls.
    pub async fn open_call(
        &self,
        req: OpenCall,
    ) -> Result<Result<CallGrant, OpenRefusal>, RuntimeError> {
        let now = now_ms();
        let deadline = req.deadline_ms.map_or(
            self.inner.config.default_call_deadline,
            Duration::from_millis,
        );
        let deadline_at =
            now.saturating_add(u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX));
        let opened = self
            .inner
            .store
            .db(move |db| db.open_call(&req, deadline_at, now))
            .await?;
        let base = self.public_url();
        Ok(opened.map(|call| CallGrant {
            call_id: call.call_id,
            rerun: call.rerun,
            tool_files: call.token.map(|token| ToolFilesGrant {
                url: format!("{base}/v1/tool-files"),
                token: Secret::new(token),
            }),
            wait_token: call.wait.map(|(id, link)| WaitToken {
                id,
                url: Secret::new(format!("{base}/v1/waits/{link}")),
            }),
        }))
    }

    /// Records a call's answer: its files token closes. `false` for an unknown call.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn answer_call(&self, call_id: &str) -> Result<bool, RuntimeError> {
        let id = call_id.to_owned();
        self.inner
            .store
            .db(move |db| db.answer_call(&id, now_ms()))
            .await
    }

    /// Ends a run: every token of its calls closes. `false` for an unknown run.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn end_run(&self, run_id: &str) -> Result<bool, RuntimeError> {
        let id = run_id.to_owned();
        self.inner
            .store
            .db(move |db| db.end_run(&id, now_ms()))
            .await
    }

    /// Records that a call paused (its tool answered `pause`): the wait's
    /// clock starts, `timeout_ms` (default 24 h, at most 24 days). `None`
    /// when the call has no wait.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn pause(
        &self,
        call_id: &str,
        timeout_ms: Option<u64>,
        name: Option<String>,
    ) -> Result<Option<WaitRecord>, RuntimeError> {
        let id = call_id.to_owned();
        let timeout = timeout_ms
            .unwrap_or(DEFAULT_PAUSE_TIMEOUT_MS)
            .min(ToolPause::MAX_TIMEOUT_MS);
        let record = self
            .inner
            .store
            .db(move |db| {
                let now = now_ms();
                match db.wait_of_call(&id, now)? {
                    Some(w) => db.pause(&w.id, now.saturating_add(timeout), name.as_deref(), now),
                    None => Ok(None),
                }
            })
            .await?;
        self.changed();
        Ok(record)
    }

    /// A wait's state, waiting up to `max_wait` for it to complete or time
    /// out (a long-poll). `None` for an unknown wait.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn wait(
        &self,
        wait_id: &str,
        max_wait: Duration,
    ) -> Result<Option<WaitRecord>, RuntimeError> {
        let until = tokio::time::Instant::now() + max_wait;
        let mut changes = self.inner.changes.subscribe();
        loop {
            let id = wait_id.to_owned();
            let record = self
                .inner
                .store
                .db(move |db| db.wait(&id, now_ms()))
                .await?;
            let Some(record) = record else {
                return Ok(None);
            };
            let now = tokio::time::Instant::now();
            if record.state.is_final() || now >= until {
                return Ok(Some(record));
            }
            let mut wake = until;
            if let Some(at) = record.timeout_at_ms {
                let left = Duration::from_millis(at.saturating_sub(now_ms()));
                wake = wake.min(now + left);
            }
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Sets a tenant's state and/or storage quota.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn set_tenant(
        &self,
        tenant_id: &str,
        settings: TenantSettings,
    ) -> Result<u64, RuntimeError> {
        let id = tenant_id.to_owned();
        self.inner
            .store
            .db(move |db| {
                db.set_tenant(&id, &settings)?;
                db.usage(&id)
            })
            .await
    }

    /// Suspends or resumes a project.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn set_project(&self, project_id: &str, suspended: bool) -> Result<(), RuntimeError> {
        let id = project_id.to_owned();
        self.inner
            .store
            .db(move |db| db.set_project(&id, suspended))
            .await
    }

    /// Deletes a stored file (reads then answer `gone`). `false` when unknown.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when the store fails.
    pub async fn delete_file(&self, artifact_id: &str) -> Result<bool, RuntimeError> {
        let id = artifact_id.to_owned();
        self.inner
            .store
            .db(move |db| db.delete_file(&id, now_ms()))
            .await
    }

    /// Tells long-polls that a wait changed.
    pub(crate) fn changed(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}
