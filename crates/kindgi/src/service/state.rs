//! What the service knows once booted, in two parts: the [`Invoker`], which
//! runs calls (all that [`crate::testing`] needs, in memory), and the
//! [`ServiceState`] around it, which the HTTP surface serves — its
//! admission and drain. Each is built whole from what boot read and the
//! configuration: nothing is patched in afterwards.

use crate::telemetry::Telemetry;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use foldhash::HashMap;
use kindgi_protocol::{PackIndex, ToolEntry};
use kindgi_validate::Validator;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::admission::Admission;
use super::drain::Drain;
use super::stalls::Stalls;
use crate::authoring::check::Evaluate;
use crate::authoring::handler::Handler;
use crate::log::{CallPack, Logger};

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

/// The booted service: the invoker, and who may call it, when.
pub(crate) struct ServiceState {
    pub(crate) invoker: Invoker,
    pub(crate) admission: Admission,
    pub(crate) drain: Drain,
    /// The `/v1/info` body, made once.
    pub(crate) info_body: Bytes,
    /// Every message answer's `kindgi-artifact-version`: `None` when the
    /// version can't be a header value.
    pub(crate) artifact_version: Option<http::HeaderValue>,
    /// How long a client may take to send a request's head.
    pub(crate) header_timeout: Duration,
}

impl ServiceState {
    /// The service of `invoker`, admitting calls by `admission` and
    /// stopping by `drain` (whose window-closed token `invoker` holds),
    /// answering `/v1/info` with `info_body`, giving clients
    /// `header_timeout` for a request's head.
    pub(crate) fn new(
        invoker: Invoker,
        admission: Admission,
        drain: Drain,
        info_body: Bytes,
        header_timeout: Duration,
    ) -> Self {
        Self {
            artifact_version: http::HeaderValue::from_str(&invoker.index.artifact_version).ok(),
            invoker,
            admission,
            drain,
            info_body,
            header_timeout,
        }
    }
}
