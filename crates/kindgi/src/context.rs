//! What a tool handler gets besides its input.

use std::sync::Arc;
use std::time::Instant;

use kindgi_protocol::{CallContext, Connection, Secret, WaitToken};
use serde_json::{Map, Value};

use crate::error::PauseNotAvailable;
use crate::files::{Files, FilesNotAvailable};
use crate::log::{Ids, TransportIds, call_ids};
use crate::{CancelReason, Cancellation};

/// A tool call's context: the ids, env, secrets, connections and settings
/// the runtime sent, the call's cancellation and deadline, and — for tools
/// that declare them — its wait link and files.
///
/// Cheap to clone. Its `Debug` output never shows a secret, an access
/// token, the wait URL or the files token.
#[derive(Debug, Clone)]
pub struct ToolContext {
    inner: Arc<ContextInner>,
}

#[derive(Debug)]
struct ContextInner {
    tool_id: String,
    /// As the read boxed it (see `ToolCall`): not copied again.
    call: Box<CallContext>,
    wait_token: Option<WaitToken>,
    files: Result<Files, FilesNotAvailable>,
    cancellation: Cancellation,
    deadline: Instant,
    /// The ids the transport gave the call, for its log records.
    transport: TransportIds,
}

impl ToolContext {
    /// A context for one call. The wait token and the files grant are taken
    /// out of `call`: the handler reaches them only through
    /// [`ToolContext::wait_link`] and [`ToolContext::files`].
    pub(crate) fn new(
        tool_id: String,
        mut call: Box<CallContext>,
        wait_token: Option<WaitToken>,
        files: Result<Files, FilesNotAvailable>,
        cancellation: Cancellation,
        deadline: Instant,
        transport: TransportIds,
    ) -> Self {
        call.wait_token = None;
        call.tool_files = None;
        Self {
            inner: Arc::new(ContextInner {
                tool_id,
                call,
                wait_token,
                files,
                cancellation,
                deadline,
                transport,
            }),
        }
    }

    /// The call's ids, as its log records carry them.
    /// The call's span in the telemetry, when it is on.
    pub(crate) fn call_span(&self) -> Option<crate::log::CallSpan> {
        self.inner.transport.call_span
    }

    pub(crate) fn log_ids(&self) -> Ids<&str> {
        call_ids(&self.inner.tool_id, &self.inner.call, &self.inner.transport)
    }

    /// The id of the tool being called.
    pub fn tool_id(&self) -> &str {
        &self.inner.tool_id
    }

    /// The call's context as the runtime sent it, without `waitToken` and
    /// `toolFiles`.
    pub fn call(&self) -> &CallContext {
        &self.inner.call
    }

    /// Tenant the call runs for.
    pub fn tenant_id(&self) -> &str {
        &self.inner.call.tenant_id
    }

    /// The run the call belongs to.
    pub fn run_id(&self) -> &str {
        &self.inner.call.run_id
    }

    /// The run's project, when the runtime sent it.
    pub fn project_id(&self) -> Option<&str> {
        self.inner.call.project_id.as_deref()
    }

    /// The project's org, when it has one.
    pub fn org_id(&self) -> Option<&str> {
        self.inner.call.org_id.as_deref()
    }

    /// The individual call (e.g. the model's tool-call id).
    pub fn request_id(&self) -> Option<&str> {
        self.inner.call.request_id.as_deref()
    }

    /// The call's idempotency key: the same every time this call runs.
    /// Pass it to the system the tool writes to. `None` on a call that
    /// carries none (a runtime that can't name its steps, a call made by
    /// hand without `ctx.idempotencyKey`): a tool that must not write twice
    /// refuses such a call, or looks its write up another way.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.inner.call.idempotency_key.as_deref()
    }

    /// One of the env values the tool declares (`needsSpec.env`).
    pub fn env(&self, name: &str) -> Option<&str> {
        self.inner.call.env.as_ref()?.get(name).map(String::as_str)
    }

    /// One resolved secret, when it is a string.
    pub fn secret(&self, name: &str) -> Option<Secret> {
        self.secret_value(name)
            .and_then(Value::as_str)
            .map(Secret::new)
    }

    /// One resolved secret as sent (secrets are open JSON).
    pub fn secret_value(&self, name: &str) -> Option<&Value> {
        self.inner.call.secrets.as_ref()?.get(name)
    }

    /// One of the env values the tool declares, which this call must carry.
    ///
    /// # Errors
    ///
    /// [`MissingValue`] naming the value (never another's) when the call
    /// carries none; `?` makes it the handler's error.
    ///
    /// ```
    /// # use kindgi::{ToolContext, ToolError};
    /// async fn region(_input: serde_json::Value, ctx: ToolContext) -> Result<String, ToolError> {
    ///     Ok(ctx.require_env("REGION")?.to_owned())
    /// }
    /// ```
    pub fn require_env(&self, name: &str) -> Result<&str, MissingValue> {
        self.env(name)
            .ok_or_else(|| MissingValue::new(MissingKind::Env, name))
    }

    /// One resolved secret, which this call must carry as text.
    ///
    /// # Errors
    ///
    /// [`MissingValue`] naming the secret (never its value) when the call
    /// carries none, or one that isn't text.
    pub fn require_secret(&self, name: &str) -> Result<Secret, MissingValue> {
        match self.secret_value(name) {
            None => Err(MissingValue::new(MissingKind::Secret, name)),
            Some(Value::String(value)) => Ok(Secret::new(value)),
            Some(_) => Err(MissingValue::new(MissingKind::SecretNotText, name)),
        }
    }

    /// One of the tool's connections, which this call must carry.
    ///
    /// # Errors
    ///
    /// [`MissingValue`] naming the connection when the call carries none.
    pub fn require_connection(&self, name: &str) -> Result<&Connection, MissingValue> {
        self.connection(name)
            .ok_or_else(|| MissingValue::new(MissingKind::Connection, name))
    }

    /// One of the tool's connections, by the tool's name for it.
    pub fn connection(&self, name: &str) -> Option<&Connection> {
        self.inner.call.connections.as_ref()?.get(name)
    }

    /// One settings block the calling agent version pins, by block id.
    pub fn settings(&self, block: &str) -> Option<&Map<String, Value>> {
        self.inner.call.settings.as_ref()?.get(block)?.as_object()
    }

    /// The reserved `config` object, when sent.
    pub fn config(&self) -> Option<&Map<String, Value>> {
        self.inner.call.config.as_ref()
    }

    /// The call's cancellation.
    pub fn cancellation(&self) -> &Cancellation {
        &self.inner.cancellation
    }

    /// Whether the call has ended (deadline, disconnect, shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// Waits until the call is cancelled, and says why. Use it in a
    /// `tokio::select!` to stop early.
    pub async fn cancelled(&self) -> CancelReason {
        self.inner.cancellation.cancelled().await
    }

    /// When the call's deadline passes.
    pub fn deadline(&self) -> Instant {
        self.inner.deadline
    }

    /// The call's wait link, for a tool that declares `pauses`: hand
    /// [`WaitLink::url`] to the system that will answer, then return
    /// [`Reply::Pause`](crate::Reply::Pause).
    ///
    /// # Errors
    ///
    /// [`PauseNotAvailable`] when the call carries no wait token (an older
    /// runtime, or a tool that doesn't declare `pauses`); `?` turns it into
    /// the `pause-not-available` answer.
    pub fn wait_link(&self) -> Result<WaitLink, PauseNotAvailable> {
        self.inner
            .wait_token
            .as_ref()
            .map(|token| WaitLink {
                id: token.id.clone(),
                url: token.url.clone(),
            })
            .ok_or(PauseNotAvailable)
    }

    /// Whether the call can pause (it carries a wait token).
    pub(crate) fn can_pause(&self) -> bool {
        self.inner.wait_token.is_some()
    }

    /// The call's files, for a tool that declares `storesFiles` or
    /// `readsFiles`.
    ///
    /// # Errors
    ///
    /// [`FilesNotAvailable`] saying why: the tool declares neither, or the
    /// runtime sent no files grant (an older runtime, or one without a file
    /// store). `?` makes it the handler's error, with that message.
    pub fn files(&self) -> Result<&Files, FilesNotAvailable> {
        self.inner.files.as_ref().map_err(|e| *e)
    }
}

/// What a call lacks that its handler requires
/// ([`ToolContext::require_secret`], [`ToolContext::require_env`],
/// [`ToolContext::require_connection`]): it names the value and how to
/// give it, never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingValue {
    kind: MissingKind,
    name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MissingKind {
    Env,
    Secret,
    SecretNotText,
    Connection,
}

impl MissingValue {
    fn new(kind: MissingKind, name: &str) -> Self {
        Self {
            kind,
            name: name.to_owned(),
        }
    }

    /// The name of what is missing.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Display for MissingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = &self.name;
        match self.kind {
            MissingKind::Env => write!(
                f,
                "the call carries no env value \"{name}\": declare it with .needs_env(\"{name}\", …) on the tool; locally, give it with `kindgi call --env {name}=…`, or TestContext::env in a test"
            ),
            MissingKind::Secret => write!(
                f,
                "the call carries no secret \"{name}\": declare it with .needs_secret(\"{name}\") on the tool; locally, give it with `kindgi call --secret {name}=…` or the line `{name}=…` in .kindgi/secrets.env under `kindgi dev`, or TestContext::secret in a test"
            ),
            MissingKind::SecretNotText => write!(
                f,
                "the call's secret \"{name}\" is not text: read it with ctx.secret_value(\"{name}\")"
            ),
            MissingKind::Connection => write!(
                f,
                "the call carries no connection \"{name}\": declare it with .needs_connection(\"{name}\", app, scopes) on the tool; locally, give it with `kindgi call --connection {name}=APP:TOKEN` or a line in .kindgi/connections.env under `kindgi dev`, or TestContext::connection in a test"
            ),
        }
    }
}

impl std::error::Error for MissingValue {}

/// Where another system posts the answer a paused call waits for.
///
/// The URL is a credential: hand it only to the system that answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitLink {
    id: String,
    url: Secret,
}

impl WaitLink {
    /// The wait token's id: the same every time this attempt runs.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The URL to hand on: `POST` the output there as JSON.
    pub fn url(&self) -> &str {
        self.url.expose()
    }
}
