//! What runs calls: the [`Invoker`] — the index, its tools and checks
//! readied ([`super::boot`]), and what a running call uses. It is all that
//! [`crate::testing`] needs, in memory; the HTTP service holds one in its
//! [`ServiceState`](super::state::ServiceState).

use std::sync::{Arc, OnceLock};

use foldhash::HashMap;
use kindgi_protocol::{PackIndex, ToolEntry};
use kindgi_validate::Validator;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::stalls::Stalls;
use crate::authoring::check::Evaluate;
use crate::authoring::handler::Handler;
use crate::log::{CallPack, Logger};
use crate::telemetry::Telemetry;

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

/// What runs calls: the index, its tools and checks readied, and what a
/// running call uses. It knows nothing of tokens or HTTP: whoever holds one
/// has already decided the call may run.
pub(crate) struct Invoker {
    pub(crate) index: PackIndex,
    pub(crate) tools: HashMap<String, Arc<ToolRuntime>>,
    pub(crate) checks: HashMap<String, Arc<CheckRuntime>>,
    pub(crate) logger: Arc<Logger>,
    /// The pack as its `call` records name it.
    pub(crate) call_pack: CallPack,
    /// Slots of blocking handlers running, their calls ended or not
    /// ([`super::tool::MAX_BLOCKING_HANDLERS`]).
    pub(crate) blocking: Arc<Semaphore>,
    /// Fired when the service's drain window closes: running calls end
    /// `cancelled` (reason `shutdown`). Never fired in memory.
    pub(crate) window_closed: CancellationToken,
    /// The async handlers running, watched for one that blocks its thread
    /// ([`super::stalls`]).
    pub(crate) stalls: Arc<Stalls>,
    /// The calls' spans and metrics, when a collector is named
    /// ([`crate::telemetry`]); off until the service sets it.
    pub(crate) telemetry: Telemetry,
    /// The tool-files client, built on first use: see [`Invoker::http`].
    http: OnceLock<reqwest::Client>,
}

impl Invoker {
    /// Runs `tools` and `checks` of `index`, logging to `logger`, with at
    /// most `blocking_slots` blocking handlers running at once, ending
    /// running calls when `window_closed` fires.
    pub(crate) fn new(
        index: PackIndex,
        (tools, checks): Loaded,
        logger: Arc<Logger>,
        blocking_slots: usize,
        window_closed: CancellationToken,
    ) -> Self {
        Self {
            call_pack: CallPack::new(&index.pack_id, &index.artifact_version),
            index,
            tools,
            checks,
            logger,
            blocking: Arc::new(Semaphore::new(blocking_slots)),
            window_closed,
            stalls: Arc::new(Stalls::new()),
            telemetry: Telemetry::default(),
            http: OnceLock::new(),
        }
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

/// The tools and checks of an index, readied: see [`super::boot`].
pub(crate) type Loaded = (
    HashMap<String, Arc<ToolRuntime>>,
    HashMap<String, Arc<CheckRuntime>>,
);
