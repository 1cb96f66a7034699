//! What the service knows once booted: the index, compiled validators,
//! handlers, and the counters of its calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use kindgi_protocol::{Info, InfoTool, PackIndex, ProtocolV2, ToolEntry};
use kindgi_validate::Validator;
use tokio::sync::{Notify, Semaphore};

use super::config::EnvCheck;
use crate::authoring::check::Evaluate;
use crate::authoring::tool::Handler;
use crate::log::Logger;

/// A tool ready to run: its entry, handler and compiled schemas.
pub(crate) struct ToolRuntime {
    pub(crate) entry: ToolEntry,
    pub(crate) handler: Handler,
    pub(crate) input: Validator,
    pub(crate) output: Validator,
}

/// A check ready to run.
pub(crate) struct CheckRuntime {
    pub(crate) config: Option<Validator>,
    pub(crate) evaluate: Evaluate,
}

/// The booted service.
pub(crate) struct ServiceState {
    pub(crate) index: PackIndex,
    pub(crate) tools: HashMap<String, ToolRuntime>,
    pub(crate) checks: HashMap<String, CheckRuntime>,
    pub(crate) token: String,
    pub(crate) tenant_id: Option<String>,
    pub(crate) env_check: EnvCheck,
    pub(crate) missing_env: Vec<String>,
    pub(crate) capacity: Arc<Semaphore>,
    /// The memory budget of request bodies and their parsed documents.
    pub(crate) budget: Arc<super::budget::MemoryBudget>,
    /// Slots of blocking handlers running, their calls ended or not
    /// ([`super::invoke::MAX_BLOCKING_HANDLERS`]).
    pub(crate) blocking: Arc<Semaphore>,
    pub(crate) draining: AtomicBool,
    /// Fired when the drain window closes: the calls still running are
    /// answered `cancelled` (reason `shutdown`), bodies still arriving 503
    /// `draining`.
    pub(crate) window_closed: tokio_util::sync::CancellationToken,
    pub(crate) in_flight: Arc<InFlight>,
    pub(crate) logger: Arc<Logger>,
    /// The tool-files client, built on first use: see [`ServiceState::http`].
    pub(crate) http: OnceLock<reqwest::Client>,
    pub(crate) info_body: Bytes,
    /// `Kindgi-Artifact-Version` of every answer, made once (`None` if the
    /// version can't be a header value).
    pub(crate) artifact_version_header: Option<http::HeaderValue>,
}

impl ServiceState {
    /// A state serving `tools` and `checks` of `index`, answering `/info`
    /// with `info_body`: no token, no tenant pinned, nothing missing from
    /// the environment, no limit on concurrent calls. Booting sets those
    /// from the configuration.
    pub(crate) fn new(
        index: PackIndex,
        tools: HashMap<String, ToolRuntime>,
        checks: HashMap<String, CheckRuntime>,
        info_body: Bytes,
        logger: Arc<Logger>,
    ) -> Self {
        ServiceState {
            artifact_version_header: http::HeaderValue::from_str(&index.artifact_version).ok(),
            index,
            tools,
            checks,
            token: String::new(),
            tenant_id: None,
            env_check: EnvCheck::Warn,
            missing_env: Vec::new(),
            capacity: Arc::new(Semaphore::new(Semaphore::MAX_PERMITS)),
            budget: super::budget::MemoryBudget::new(usize::MAX),
            blocking: Arc::new(Semaphore::new(super::invoke::MAX_BLOCKING_HANDLERS)),
            draining: AtomicBool::new(false),
            window_closed: tokio_util::sync::CancellationToken::new(),
            in_flight: Arc::new(InFlight::default()),
            logger,
            http: OnceLock::new(),
            info_body,
        }
    }

    /// Whether invokes are refused for missing env.
    pub(crate) fn blocked_by_env(&self) -> bool {
        self.env_check == EnvCheck::Strict && !self.missing_env.is_empty()
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// The HTTP client of the tool-files API (protocol 2.10), built on the
    /// first call that needs it: with the `https` feature, building one
    /// loads the platform's root certificates (some 100 ms and 7 MB on a
    /// small machine), which a process that never serves a files call
    /// should not pay before it listens.
    pub(crate) fn http(&self) -> reqwest::Client {
        self.http.get_or_init(crate::files::client).clone()
    }
}

/// The `/v1/info` body.
pub(crate) fn info_body(index: &PackIndex, missing_env: &[String], index_hash: &str) -> Bytes {
    let info = Info {
        protocol: ProtocolV2,
        pack_id: index.pack_id.clone(),
        pack_version: index.pack_version.clone(),
        artifact_version: index.artifact_version.clone(),
        tools: index
            .tools
            .iter()
            .map(|t| InfoTool {
                id: t.id.clone(),
                version: t.version.clone(),
            })
            .collect(),
        checks: index
            .guardrails
            .iter()
            .map(|g| g.effective_check_id().to_owned())
            .collect(),
        missing_env: missing_env.to_vec(),
        index_hash: Some(index_hash.to_owned()),
    };
    Bytes::from(serde_json::to_vec(&info).unwrap_or_default())
}

/// Counts the calls in flight; the drain waits for zero.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

impl InFlight {
    /// Counts a call until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>) -> InFlightGuard {
        self.count.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(Arc::clone(self))
    }

    /// Waits until no call is in flight.
    pub(crate) async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One call in flight.
pub(crate) struct InFlightGuard(Arc<InFlight>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}
