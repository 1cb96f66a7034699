//! Declaring a tool: its id, schemas, flags and handler.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::handler::{AsyncHandler, BlockingHandler, Handler};
use super::http_call::HttpRunner;
use super::http_spec::HttpSpec;
use super::reply::ToolOutput;
use crate::schema::unread_input_schema_for;
use crate::{EffectKind, Sandbox, SourceFile, ToolContext, input_schema_for, output_schema_for};

/// A tool: what the model can call, and the Rust code that runs it.
///
/// Usually written with the [`tool`](crate::tool) attribute; the builder
/// is what that attribute expands to, and works on its own:
///
/// ```
/// use kindgi::{Tool, ToolContext, ToolError};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Input { message: String }
/// #[derive(Serialize, JsonSchema)]
/// struct Output { message: String }
///
/// async fn echo(input: Input, _ctx: ToolContext) -> Result<Output, ToolError> {
///     Ok(Output { message: input.message })
/// }
///
/// let tool = Tool::new("acme.echo")
///     .description("Echo the message back.")
///     .mutating(false)
///     .handler(echo);
/// assert_eq!(tool.id(), "acme.echo");
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until it is used"]
pub struct Tool {
    pub(crate) id: String,
    pub(crate) description: Option<String>,
    pub(crate) version: Option<String>,
    /// The input schema given with [`Tool::input_schema`]: it wins over the
    /// handler's, whichever call comes first.
    pub(crate) input_schema: Option<Value>,
    /// The output schema given with [`Tool::output_schema`].
    pub(crate) output_schema: Option<Value>,
    /// What the handler's types say.
    pub(crate) derived: Option<Derived>,
    pub(crate) mutating: Option<bool>,
    pub(crate) needs_approval_when_unattended: Option<bool>,
    pub(crate) effects: Vec<Value>,
    pub(crate) needs_spec: Map<String, Value>,
    pub(crate) pauses: Option<bool>,
    pub(crate) stores_files: bool,
    pub(crate) reads_files: bool,
    pub(crate) extra: Map<String, Value>,
    pub(crate) source: SourceFile,
    pub(crate) handler: Option<Handler>,
    /// The request a declarative HTTP tool makes ([`Tool::http`]).
    pub(crate) http: Option<HttpSpec>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("id", &self.id)
            .field("version", &self.version)
            .field("source", &self.source)
            .field(
                "blocking",
                &self.handler.as_ref().is_some_and(Handler::is_blocking),
            )
            .finish_non_exhaustive()
    }
}

/// The schemas and pausing a handler's types give.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    pub(crate) input: Value,
    pub(crate) output: Value,
    pub(crate) pauses: bool,
}

impl Tool {
    /// A tool with this id, declared in the file that calls this (its
    /// `modulePath`; see [`SourceFile`]).
    #[track_caller]
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: None,
            version: None,
            input_schema: None,
            output_schema: None,
            derived: None,
            mutating: None,
            needs_approval_when_unattended: None,
            effects: Vec::new(),
            needs_spec: Map::new(),
            pauses: None,
            stores_files: false,
            reads_files: false,
            extra: Map::new(),
            source: SourceFile::caller(),
            handler: None,
            http: None,
        }
    }

    /// The tool's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file the tool is declared in, when it isn't the one that
    /// calls `new` (e.g. `.source(kindgi::here!())` for a file outside
    /// `src/`).
    pub fn source(mut self, source: SourceFile) -> Self {
        self.source = source;
        self
    }

    /// What the tool does — the model reads it.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The tool's version (default: the pack's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// `false` makes the tool read-only: it runs in a dry run.
    pub fn mutating(mut self, mutating: bool) -> Self {
        self.mutating = Some(mutating);
        self
    }

    /// Whether a person must approve every call in a run nobody started.
    pub fn needs_approval_when_unattended(mut self, needs: bool) -> Self {
        self.needs_approval_when_unattended = Some(needs);
        self
    }

    /// Declares a side effect: what kind, and what it touches (`resource`,
    /// e.g. `"support-desk tickets"` or `"external:api.example.com"`).
    ///
    /// ```
    /// use kindgi::{EffectKind, Tool};
    /// let tool = Tool::new("acme.send")
    ///     .effect(EffectKind::ExternalSideEffect, Some("mail"));
    /// ```
    pub fn effect(mut self, kind: EffectKind, resource: Option<&str>) -> Self {
        let mut effect = Map::new();
        effect.insert("kind".into(), Value::from(kind.as_str()));
        if let Some(resource) = resource {
            effect.insert("resource".into(), Value::from(resource));
        }
        self.effects.push(Value::Object(effect));
        self
    }

    /// The isolation the runtime keeps around the handler (`sandbox`).
    pub fn sandbox(self, sandbox: Sandbox) -> Self {
        self.field("sandbox", Value::from(sandbox.as_str()))
    }

    /// The hosts the handler may reach (`network`).
    ///
    /// ```
    /// use kindgi::{Network, Tool};
    /// let tool = Tool::new("acme.fetch")
    ///     .network(Network::allowlist(["api.example.com"]));
    /// ```
    pub fn network(self, network: Network) -> Self {
        self.field("network", network.to_value())
    }

    /// Declares an env value the call's context carries (`needsSpec.env`),
    /// with its spec (e.g. `{"type": "string", "default": "eu"}`).
    pub fn needs_env(self, name: &str, spec: Value) -> Self {
        self.needs_entry("env", name, spec)
    }

    /// Declares a secret the call's context carries (`needsSpec.secrets`).
    pub fn needs_secret(self, name: &str) -> Self {
        self.needs_entry("secrets", name, json!({}))
    }

    /// Declares a connection to another app (`needsSpec.connections`,
    /// protocol 2.9.0) under the tool's own name for it.
    pub fn needs_connection(self, name: &str, app: &str, scopes: &[&str]) -> Self {
        let mut spec = json!({ "app": app });
        if !scopes.is_empty() {
            spec["scopes"] = json!(scopes);
        }
        self.needs_entry("connections", name, spec)
    }

    fn needs_entry(mut self, group: &str, name: &str, spec: Value) -> Self {
        let entry = self
            .needs_spec
            .entry(group)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = entry {
            map.insert(name.to_owned(), spec);
        }
        self
    }

    /// Whether the tool may answer `pause` (default: whether its handler
    /// returns [`Reply`](crate::Reply)). It stands whichever of this and the handler is
    /// given first.
    pub fn pauses(mut self, pauses: bool) -> Self {
        self.pauses = Some(pauses);
        self
    }

    /// The tool stores files (protocol 2.10.0).
    pub fn stores_files(mut self) -> Self {
        self.stores_files = true;
        self
    }

    /// The tool reads files (protocol 2.10.0).
    pub fn reads_files(mut self) -> Self {
        self.reads_files = true;
        self
    }

    /// Any other index field (`sandbox`, `limits`, `network`, `needs`, …).
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// The input schema, instead of the one the handler's input type gives
    /// (e.g. for a `serde_json::Value` input). It stands whichever of this
    /// and [`Tool::handler`] is called first.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The output schema, instead of the one the handler's output type
    /// gives. It stands whichever of this and [`Tool::handler`] is called
    /// first.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The input schema the index carries: the one given, else the
    /// handler's; `None` before either.
    pub(crate) fn effective_input_schema(&self) -> Option<&Value> {
        self.input_schema
            .as_ref()
            .or(self.derived.as_ref().map(|d| &d.input))
    }

    /// The output schema the index carries.
    pub(crate) fn effective_output_schema(&self) -> Option<&Value> {
        self.output_schema
            .as_ref()
            .or(self.derived.as_ref().map(|d| &d.output))
    }

    /// The async handler: `async fn(Input) -> Result<Output, E>`, or
    /// `async fn(Input, ToolContext) -> Result<Output, E>` when it needs
    /// the call's context (see [`AsyncHandler`]). The input and output
    /// schemas are derived from its types; any `std::error::Error` (or
    /// [`ToolError`](crate::ToolError)) works as `E`.
    ///
    /// When the call ends early (deadline, disconnect) its future is dropped.
    pub fn handler<H, Args>(mut self, handler: H) -> Self
    where
        H: AsyncHandler<Args>,
    {
        self.set_types::<H::Input, H::Output>();
        self.handler = Some(handler.into_async_fn().0);
        self.http = None;
        self
    }

    /// A blocking handler: `fn(Input) -> Result<Output, E>` or
    /// `fn(Input, ToolContext) -> Result<Output, E>`, run on the blocking
    /// thread pool, off the async workers.
    ///
    /// It can't be stopped mid-way. When its call ends early — its deadline
    /// passes, the caller goes away, the service's drain window closes — the
    /// call is answered at once (`deadline-exceeded`, `cancelled`), and the
    /// handler is told through its context: [`ToolContext::is_cancelled`]
    /// turns true and [`ToolContext::cancellation`] gives the reason
    /// ([`crate::CancelReason`]). A long one checks it between steps (and
    /// bounds each step by [`ToolContext::deadline`]) and returns; what it
    /// returns then is dropped, and the service logs
    /// `handler-finished-late`. Until it returns it keeps its thread and
    /// one of the service's blocking slots (as many as
    /// `KINDGI_PACK_SERVICE_MAX_CONCURRENCY`, at most 256): while every slot
    /// is held, a new call of a blocking tool is refused 503 `overloaded`
    /// (it did not run), so a handler that ignores its cancellation takes
    /// that room from later calls.
    pub fn blocking_handler<H, Args>(mut self, handler: H) -> Self
    where
        H: BlockingHandler<Args>,
    {
        self.set_types::<H::Input, H::Output>();
        self.handler = Some(handler.into_blocking_fn().0);
        self.http = None;
        self
    }

    /// Makes this a declarative HTTP tool: each call is the request `spec`
    /// describes, its placeholders filled from the input, and its output
    /// the response's JSON (or text). The index carries the spec
    /// (`spec: {kind: "http", …}`), so a runtime makes the request itself;
    /// `kindgi dev`, `kindgi call`, the inspector and
    /// [`TestPack`](crate::testing::TestPack) make it the same way, through
    /// the pack service. `I` and `O` give the input and output schemas
    /// (`serde_json::Value` with [`Tool::input_schema`] /
    /// [`Tool::output_schema`] works too). It replaces a handler given
    /// before, and a handler given after replaces it.
    ///
    /// The indexer checks that every `{placeholder}` of the URL is an
    /// input property, in its path or query, and that the secret it sends
    /// is declared ([`Tool::needs_secret`]). See [`HttpSpec`].
    pub fn http<I, O>(mut self, spec: HttpSpec) -> Self
    where
        I: JsonSchema,
        O: JsonSchema,
    {
        let runner = Arc::new(HttpRunner::new(spec.clone(), self.id.clone()));
        let handler = move |input: Value, ctx: ToolContext| {
            let runner = Arc::clone(&runner);
            async move { runner.call(input, &ctx).await }
        };
        self.handler = Some(handler.into_async_fn().0);
        self.derived = Some(Derived {
            input: unread_input_schema_for::<I>(),
            output: output_schema_for::<O>(),
            pauses: false,
        });
        self.http = Some(spec);
        self
    }

    fn set_types<I: JsonSchema + DeserializeOwned, O: ToolOutput>(&mut self) {
        self.derived = Some(Derived {
            input: input_schema_for::<I>(),
            output: O::output_schema(),
            pauses: O::pauses(),
        });
    }

    /// Whether the index says `pauses`: as given, else whether the
    /// handler's output is a [`Reply`](crate::Reply).
    pub(crate) fn effective_pauses(&self) -> bool {
        self.pauses
            .unwrap_or(self.derived.as_ref().is_some_and(|d| d.pauses))
    }
}

/// The hosts a tool's handler may reach (`network` of `tool.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Network {
    /// No network at all.
    None,
    /// Any host.
    Unrestricted,
    /// Only these hosts.
    Allowlist(Vec<String>),
}

impl Network {
    /// Only `hosts`.
    pub fn allowlist<S: Into<String>>(hosts: impl IntoIterator<Item = S>) -> Self {
        Self::Allowlist(hosts.into_iter().map(Into::into).collect())
    }

    /// As the index carries it: `{"kind": "allowlist", "hosts": […]}`.
    fn to_value(&self) -> Value {
        match self {
            Self::None => json!({"kind": "none"}),
            Self::Unrestricted => json!({"kind": "unrestricted"}),
            Self::Allowlist(hosts) => json!({"kind": "allowlist", "hosts": hosts}),
        }
    }
}
