//! The pack inspector: a page that lists what the pack offers, builds a
//! form from each tool's schema, calls it, and shows what came back.
//!
//! ```text
//!  browser ──▶ /inspector/ (page, no token) ─┐
//!          ──▶ /inspector/api/… (Bearer) ────┤ Inspector ──▶ POST <service>/v1/invoke
//!                                            │    └── dev runtime: files grants, wait links
//! ```
//!
//! `kindgi dev` answers `/inspector/…` on its front's listener (one URL,
//! one token, and the calls go through the front, which adds the pack
//! folder's secrets); `kindgi inspect` serves the same on a listener of its
//! own, with a dev runtime of its own, for any pack service. Either way it
//! listens on 127.0.0.1 and [`guard`] refuses requests from other sites.

mod assets;
mod calls;
mod files;
pub(crate) mod guard;
mod history;
mod in_flight;
pub(crate) mod logs;
mod pauses;
mod routes;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use kindgi::Token;
use kindgi_protocol::{PackIndex, Secret};
use kindgi_runtime::DevRuntime;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use self::guard::Guard;
use self::history::History;
use self::logs::Logs;

/// Where the inspector sends calls: a pack service's base URL and token.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Its base URL, no trailing `/`.
    pub(crate) url: String,
    /// Its `kindgi-pack-token`.
    pub(crate) token: Secret,
}

/// What the page is told of the pack: the index it serves, and under
/// `kindgi dev` its generation and the last build's failure.
#[derive(Debug, Clone, Default)]
pub(crate) struct PackState {
    /// The index.
    pub(crate) index: Option<Arc<PackIndex>>,
    /// Where it is on disk, for `kindgi call --index`.
    pub(crate) index_path: Option<PathBuf>,
    /// The generation serving (`kindgi dev`).
    pub(crate) generation: Option<u64>,
    /// The last build, index or boot failure since the last good one.
    pub(crate) failure: Option<Value>,
    /// Context values the page starts with: `env` (name → value), and the
    /// names (never the values) of the `secrets` and `connections` the
    /// dev front adds.
    pub(crate) defaults: Value,
}

/// A paused call the page may answer.
#[derive(Debug, Clone)]
struct Paused {
    wait_id: String,
    link: Secret,
    /// The request id of the call, its id in the history.
    request_id: String,
}

/// The inspector of one pack service.
#[derive(Debug)]
pub(crate) struct Inspector {
    guard: Guard,
    /// `dev` or `inspect`.
    mode: &'static str,
    target: Target,
    runtime: DevRuntime,
    state: RwLock<PackState>,
    paused: Mutex<HashMap<String, Paused>>,
    /// The page's calls in flight, to cancel by their tickets.
    in_flight: in_flight::InFlight,
    logs: Arc<Logs>,
    history: History,
    http: reqwest::Client,
}

impl Inspector {
    /// An inspector on `127.0.0.1:port` checking `token`, calling `target`
    /// with grants of `runtime`.
    pub(crate) fn new(
        mode: &'static str,
        token: Token,
        port: u16,
        target: Target,
        runtime: DevRuntime,
    ) -> Self {
        Self {
            guard: Guard::new(token, port),
            mode,
            target,
            history: History::new(&runtime),
            runtime,
            state: RwLock::new(PackState::default()),
            paused: Mutex::new(HashMap::new()),
            in_flight: in_flight::InFlight::default(),
            logs: Arc::new(Logs::default()),
            http: reqwest::Client::new(),
        }
    }

    /// The page's URL, the token in its fragment (which no request carries).
    pub(crate) fn page_url(&self, token: &str) -> String {
        format!(
            "http://127.0.0.1:{}/inspector/#token={token}",
            self.guard.port()
        )
    }

    /// Where the service's log records go.
    pub(crate) fn logs(&self) -> Arc<Logs> {
        Arc::clone(&self.logs)
    }

    /// Changes what the page is told of the pack.
    pub(crate) fn update(&self, change: impl FnOnce(&mut PackState)) {
        if let Ok(mut state) = self.state.write() {
            change(&mut state);
        }
    }

    fn state(&self) -> PackState {
        self.state.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// What `GET /inspector/api/pack` answers.
    fn pack(&self) -> Value {
        let state = self.state();
        json!({
            "mode": self.mode,
            "serviceUrl": self.target.url,
            "indexPath": state.index_path.map(|p| p.display().to_string()),
            "generation": state.generation,
            "failure": state.failure,
            "defaults": state.defaults,
            "index": state.index.as_deref(),
        })
    }
}

/// Serves only the inspector on `listener` until `shutdown` resolves
/// (`kindgi inspect`).
pub(crate) async fn serve(
    inspector: Arc<Inspector>,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) {
    crate::http_loop::serve(listener, shutdown, move |request| {
        let inspector = Arc::clone(&inspector);
        async move { inspector.answer(request).await }
    })
    .await;
}
