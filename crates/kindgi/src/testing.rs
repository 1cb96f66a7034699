//! Call a pack's tools and checks in-process from a test, exactly as the
//! pack service would: input defaults filled and validated, output
//! validated, errors and panics answered as protocol errors.
//!
//! ```
//! use kindgi::testing::{TestContext, TestPack};
//! use kindgi::{Pack, Tool, ToolContext, ToolError};
//! use serde_json::{json, Value};
//!
//! async fn greet(input: Value, ctx: ToolContext) -> Result<Value, ToolError> {
//!     Ok(json!({"hello": input["name"], "tenant": ctx.tenant_id()}))
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let greet = Tool::new("acme.greet")
//!     .description("Greets someone by name.")
//!     .input_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}}))
//!     .handler(greet);
//! let pack = Pack::new().tool(greet);
//! let pack = TestPack::new(pack).expect("a valid pack");
//! let output = pack
//!     .call("acme.greet", json!({"name": "Ana"}), TestContext::new().tenant("acme"))
//!     .await
//!     .output()
//!     .expect("a result");
//! assert_eq!(output, json!({"hello": "Ana", "tenant": "acme"}));
//! # });
//! ```
//!
//! With the `testing` feature, `TestPack::with_dev_runtime` starts the
//! dev runtime in-process (on 127.0.0.1, its store in a temporary folder),
//! so `files.store` / `files.read` and pauses work in a test too: the
//! crate guide's "Files and pauses in a test" is a whole test of both (a
//! stored file's answer; a pause, its wait token in
//! [`TestAnswer::wait_token`], completed with `TestPack::complete_wait`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kindgi_protocol::{
    CallContext, CheckInvoke, CheckRef, Connection, ErrorResponse, Response, ToolRef,
};
use serde_json::{Map, Value};

use crate::Pack;
use crate::index::{PackConfig, PackProblems, Pins, build_index};
use crate::log::{Logger, TransportIds};
use crate::service::call::CallMeta;
use crate::service::check::check_response;
use crate::service::decode::{Input, ToolCall};
use crate::service::invoker::Invoker;
use crate::service::placement::Placement;
use crate::service::tool::tool_response;
use crate::{CancelReason, Cancellation};

/// A pack ready to be called in-process. For files and pauses, start the
/// dev runtime beside it: `TestPack::with_dev_runtime` (the `testing`
/// feature).
pub struct TestPack {
    state: Invoker,
    #[cfg(feature = "testing")]
    runtime: Option<dev::Runtime>,
}

impl std::fmt::Debug for TestPack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestPack")
            .field("pack_id", &self.state.index.pack_id)
            .finish_non_exhaustive()
    }
}

/// The answer of a test call.
#[derive(Debug, Clone, PartialEq)]
pub struct TestAnswer {
    /// The protocol response the service would send.
    pub response: Response,
    /// The call's wait token, when the dev runtime gave it one: post the
    /// output to its `url` to complete a pause.
    pub wait_token: Option<kindgi_protocol::WaitToken>,
}

impl TestAnswer {
    /// The tool's output, or the error the service would answer.
    ///
    /// # Errors
    ///
    /// The error response; a pause or check result is reported as an error
    /// response too (code `handler-shape-invalid`) since it has no output.
    // A test unwraps it at once; boxing would only make tests noisier.
    #[allow(clippy::result_large_err)]
    pub fn output(self) -> Result<Value, ErrorResponse> {
        match self.response {
            Response::Result(result) => Ok(result.output),
            Response::Error(error) => Err(error),
            other => Err(ErrorResponse::new(
                kindgi_protocol::ErrorCode::HandlerShapeInvalid,
                format!("expected a result, got {other:?}"),
            )),
        }
    }

    /// The error, when the answer is one.
    pub fn error(&self) -> Option<&ErrorResponse> {
        match &self.response {
            Response::Error(error) => Some(error),
            _ => None,
        }
    }
}

/// The context of a test call: ids, env, secrets, connections, settings,
/// a deadline, and a cancellation the test can fire.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until it is used"]
pub struct TestContext {
    call: CallContext,
    timeout: Duration,
    cancellation: Cancellation,
    process_env: HashMap<String, String>,
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

impl TestContext {
    /// Tenant `test-tenant`, run `test-run`, a 30 s deadline.
    pub fn new() -> Self {
        Self {
            call: CallContext {
                tenant_id: "test-tenant".to_owned(),
                run_id: "test-run".to_owned(),
                ..CallContext::default()
            },
            timeout: Duration::from_secs(30),
            cancellation: Cancellation::new(),
            process_env: HashMap::new(),
        }
    }

    /// A process environment variable as the pack's code reads it with
    /// [`crate::env::var`] during this call, instead of the process's: one
    /// test's value, without `std::env::set_var`.
    pub fn process_env(mut self, name: &str, value: &str) -> Self {
        self.process_env.insert(name.to_owned(), value.to_owned());
        self
    }

    /// The tenant.
    pub fn tenant(mut self, tenant_id: &str) -> Self {
        self.call.tenant_id = tenant_id.to_owned();
        self
    }

    /// The run.
    pub fn run(mut self, run_id: &str) -> Self {
        self.call.run_id = run_id.to_owned();
        self
    }

    /// The project.
    pub fn project(mut self, project_id: &str) -> Self {
        self.call.project_id = Some(project_id.to_owned());
        self
    }

    /// The org.
    pub fn org(mut self, org_id: &str) -> Self {
        self.call.org_id = Some(org_id.to_owned());
        self
    }

    /// The request id.
    pub fn request_id(mut self, request_id: &str) -> Self {
        self.call.request_id = Some(request_id.to_owned());
        self
    }

    /// The idempotency key.
    pub fn idempotency_key(mut self, key: &str) -> Self {
        self.call.idempotency_key = Some(key.to_owned());
        self
    }

    /// One `needsSpec.env` value.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.call
            .env
            .get_or_insert_with(Default::default)
            .insert(name.to_owned(), value.to_owned());
        self
    }

    /// One secret.
    pub fn secret(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.call
            .secrets
            .get_or_insert_with(Map::new)
            .insert(name.to_owned(), value.into());
        self
    }

    /// One connection, by the tool's name for it.
    pub fn connection(mut self, name: &str, connection: Connection) -> Self {
        self.call
            .connections
            .get_or_insert_with(Default::default)
            .insert(name.to_owned(), connection);
        self
    }

    /// One settings block.
    pub fn settings(mut self, block: &str, values: Value) -> Self {
        self.call
            .settings
            .get_or_insert_with(Map::new)
            .insert(block.to_owned(), values);
        self
    }

    /// The files grant, as a runtime would send it (`ctx.toolFiles`): for
    /// a test against a files endpoint of its own. A pack under
    /// `TestPack::with_dev_runtime` (feature `testing`) gets one without asking.
    pub fn tool_files(mut self, url: &str, token: &str) -> Self {
        self.call.tool_files = Some(kindgi_protocol::ToolFilesGrant {
            url: url.to_owned(),
            token: kindgi_protocol::Secret::new(token),
        });
        self
    }

    /// The wait token, as a runtime would send it (`ctx.waitToken`).
    pub fn wait_token(mut self, id: &str, url: &str) -> Self {
        self.call.wait_token = Some(kindgi_protocol::WaitToken {
            id: id.to_owned(),
            url: kindgi_protocol::Secret::new(url),
        });
        self
    }

    /// The call's deadline, from when it starts.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The call's cancellation: fire it from the test with
    /// `cancel(CancelReason::Requested)`.
    pub fn cancellation(&self) -> Cancellation {
        self.cancellation.clone()
    }

    /// Fires the cancellation.
    pub fn cancel(&self) {
        self.cancellation.cancel(CancelReason::Requested);
    }
}

/// `pack` indexed in memory (pack `test` 0.0.0), every tool and check
/// readied as `serve` would: the invoker a [`TestPack`] calls through.
pub(crate) fn invoker_of(pack: &Pack) -> Result<Invoker, PackProblems> {
    let config = PackConfig {
        id: "test".to_owned(),
        version: "0.0.0".to_owned(),
        env: None,
    };
    let pins = Pins {
        artifact_version: "test".to_owned(),
        published_at: "1970-01-01T00:00:00.000Z".to_owned(),
    };
    let index = build_index(pack, &config, &pins)?;
    crate::service::in_memory(pack, index, Arc::new(Logger::quiet())).map_err(PackProblems::from)
}

impl TestPack {
    /// Indexes `pack` in memory (pack `test` 0.0.0) and readies every tool
    /// and check as `serve` would.
    ///
    /// # Errors
    ///
    /// The indexer's or the service's problems with the pack.
    pub fn new(pack: Pack) -> Result<Self, PackProblems> {
        let state = invoker_of(&pack)?;
        Ok(Self {
            state,
            #[cfg(feature = "testing")]
            runtime: None,
        })
    }

    /// The dev runtime behind the pack, when started: set a tenant's state
    /// or quota, end a run, delete a file.
    #[cfg(feature = "testing")]
    pub fn dev_runtime(&self) -> Option<&kindgi_runtime::DevRuntime> {
        self.runtime.as_ref().map(|r| &r.runtime)
    }

    /// Calls a tool.
    pub async fn call(&self, tool_id: &str, input: Value, context: TestContext) -> TestAnswer {
        let mut context = context;
        self.resolve_env(tool_id, &mut context);
        #[cfg(feature = "testing")]
        let opened = match &self.runtime {
            Some(runtime) => runtime.open(&self.state, tool_id, &mut context).await,
            None => None,
        };
        let wait_token = context.call.wait_token.clone();
        let started = Instant::now();
        let timeout_ms = u64::try_from(context.timeout.as_millis()).unwrap_or(u64::MAX);
        let meta = CallMeta::new(
            Placement::InPlace,
            started,
            timeout_ms,
            TransportIds::default(),
        );
        let invoke = ToolCall {
            tool: ToolRef {
                id: tool_id.to_owned(),
                version: None,
            },
            input: Input::Unchecked(input),
            ctx: Box::new(context.call),
        };
        let call = tool_response(&self.state, invoke, &meta, context.cancellation);
        let response = if context.process_env.is_empty() {
            call.await
        } else {
            crate::env::in_task(Arc::new(context.process_env), call).await
        };
        #[cfg(feature = "testing")]
        if let (Some(runtime), Some(call_id)) = (&self.runtime, opened) {
            runtime.answered(&call_id, &response).await;
        }
        TestAnswer {
            response,
            wait_token,
        }
    }

    /// Fills the env values the tool declares (`needsSpec.env`) that the
    /// test didn't give with their specs' defaults, as a runtime resolves
    /// them.
    fn resolve_env(&self, tool_id: &str, context: &mut TestContext) {
        let Some(tool) = self.state.tools.get(tool_id) else {
            return;
        };
        for (name, default) in tool.entry.env_defaults() {
            context
                .call
                .env
                .get_or_insert_with(Default::default)
                .entry(name.to_owned())
                .or_insert(default);
        }
    }

    /// Runs a check with `config` on `trace`.
    pub fn check(&self, check_id: &str, config: Value, trace: Value) -> TestAnswer {
        let config = match config {
            Value::Object(config) => config,
            _ => Map::new(),
        };
        TestAnswer {
            response: check_response(
                &self.state,
                CheckInvoke {
                    check: CheckRef {
                        id: check_id.to_owned(),
                    },
                    config,
                    trace,
                },
            ),
            wait_token: None,
        }
    }
}

/// Runs `work` with `vars` standing in for the process environment as the
/// pack's code reads it ([`crate::env::var`]), on this thread: e.g. to
/// build a pack whose settings come from its env, in one test, without
/// `std::env::set_var`.
///
/// ```
/// let url = kindgi::testing::with_process_env(&[("DATABASE_URL", "sqlite::memory:")], || {
///     kindgi::env::var("DATABASE_URL")
/// });
/// assert_eq!(url.as_deref(), Some("sqlite::memory:"));
/// ```
pub fn with_process_env<R>(vars: &[(&str, &str)], work: impl FnOnce() -> R) -> R {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    crate::env::in_thread(Some(Arc::new(vars)), work)
}

#[cfg(feature = "testing")]
mod dev {
    //! The in-process dev runtime behind [`super::TestPack`].

    use kindgi_protocol::Response;
    use kindgi_runtime::{DevRuntime, OpenCall, RuntimeConfig, WaitRecord};

    use super::{Invoker, TestContext, TestPack};

    pub(super) struct Runtime {
        pub(super) runtime: DevRuntime,
        _dir: tempfile::TempDir,
        _shutdown: tokio::sync::oneshot::Sender<()>,
    }

    impl Runtime {
        /// Opens the call on the dev runtime when its tool stores, reads or
        /// pauses, and puts the grant into the context.
        pub(super) async fn open(
            &self,
            state: &Invoker,
            tool_id: &str,
            context: &mut TestContext,
        ) -> Option<String> {
            let tool = state.tools.get(tool_id)?;
            let entry = &tool.entry;
            if !(entry.pauses || entry.stores_files || entry.reads_files) {
                return None;
            }
            let opened = self
                .runtime
                .open_call(OpenCall {
                    run_id: context.call.run_id.clone(),
                    tenant_id: context.call.tenant_id.clone(),
                    project_id: context.call.project_id.clone(),
                    tool_id: tool_id.to_owned(),
                    idempotency_key: context.call.idempotency_key.clone(),
                    store: entry.stores_files && context.call.idempotency_key.is_some(),
                    read: entry.reads_files,
                    pauses: entry.pauses,
                    deadline_ms: Some(context.timeout.as_millis() as u64),
                    output_schema: Some(entry.output.clone()),
                })
                .await
                .ok()?
                .ok()?;
            context.call.tool_files = opened.tool_files;
            context.call.wait_token = opened.wait_token;
            Some(opened.call_id)
        }

        /// Closes the call's token; records a pause.
        pub(super) async fn answered(&self, call_id: &str, response: &Response) {
            if let Response::Pause(pause) = response {
                let _ = self
                    .runtime
                    .pause(call_id, pause.timeout_ms, pause.name.clone())
                    .await;
            }
            let _ = self.runtime.answer_call(call_id).await;
        }
    }

    impl TestPack {
        /// Starts the dev runtime in-process for this pack's calls: a tool
        /// that stores or reads files gets a files grant, one that pauses a
        /// wait link (post to it with any HTTP client).
        ///
        /// # Errors
        ///
        /// A sentence when the runtime can't start.
        pub async fn with_dev_runtime(self) -> Result<Self, String> {
            self.with_dev_runtime_config(|_| {}).await
        }

        /// As [`TestPack::with_dev_runtime`], with the runtime's config
        /// changed first (smaller limits, a quota, …).
        ///
        /// # Errors
        ///
        /// A sentence when the runtime can't start.
        pub async fn with_dev_runtime_config(
            mut self,
            configure: impl FnOnce(&mut RuntimeConfig),
        ) -> Result<Self, String> {
            let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
            let mut config = RuntimeConfig::new(dir.path());
            configure(&mut config);
            let runtime = DevRuntime::open(config)
                .map_err(|e| format!("the dev runtime didn't open: {e}"))?;
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| format!("the dev runtime can't listen: {e}"))?;
            let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
            let serving = runtime.clone().serve(listener, async move {
                let _ = stop.await;
            });
            tokio::spawn(serving);
            self.runtime = Some(Runtime {
                runtime,
                _dir: dir,
                _shutdown: shutdown,
            });
            Ok(self)
        }

        /// Waits up to `max_wait` for the wait `wait_id` to complete, and
        /// answers its record.
        pub async fn wait(
            &self,
            wait_id: &str,
            max_wait: std::time::Duration,
        ) -> Option<WaitRecord> {
            let runtime = &self.runtime.as_ref()?.runtime;
            runtime.wait(wait_id, max_wait).await.ok().flatten()
        }

        /// Completes a paused call as the system it waits for would: posts
        /// `output` to the call's wait link, then answers the completed
        /// wait. No HTTP client of the test's own is needed.
        ///
        /// # Errors
        ///
        /// The link's status and answer when it refuses the output (e.g.
        /// `400` for an output the tool's output schema refuses), or why
        /// the wait didn't complete.
        pub async fn complete_wait(
            &self,
            token: &kindgi_protocol::WaitToken,
            output: serde_json::Value,
        ) -> Result<WaitRecord, String> {
            let posted = reqwest::Client::new()
                .post(token.url.expose())
                .json(&output)
                .send()
                .await
                .map_err(|e| format!("the wait link couldn't be reached: {}", e.without_url()))?;
            let status = posted.status();
            if !status.is_success() {
                let body = posted.text().await.unwrap_or_default();
                return Err(format!(
                    "the wait link answered {}: {body}",
                    status.as_u16()
                ));
            }
            self.wait(&token.id, std::time::Duration::from_secs(5))
                .await
                .ok_or_else(|| format!("the wait {} didn't complete", token.id))
        }
    }
}
