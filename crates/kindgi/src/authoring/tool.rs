//! Declaring a tool: its id, schemas, flags and handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::numbers::read_typed;
use crate::{SourceFile, ToolContext, ToolError, input_schema_for, output_schema_for};

/// A boxed future the service awaits.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

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
/// let tool = Tool::new("acme.echo", kindgi::here!())
///     .description("Echo the message back.")
///     .mutating(false)
///     .handler(echo);
/// assert_eq!(tool.id(), "acme.echo");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) id: String,
    pub(crate) description: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Value,
    pub(crate) mutating: Option<bool>,
    pub(crate) needs_approval_when_unattended: Option<bool>,
    pub(crate) effects: Vec<Value>,
    pub(crate) needs_spec: Map<String, Value>,
    pub(crate) pauses: Option<bool>,
    pub(crate) output_pauses: bool,
    pub(crate) stores_files: bool,
    pub(crate) reads_files: bool,
    pub(crate) extra: Map<String, Value>,
    pub(crate) source: SourceFile,
    pub(crate) handler: Option<Handler>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("id", &self.id)
            .field("version", &self.version)
            .field("source", &self.source)
            .field(
                "blocking",
                &matches!(self.handler, Some(Handler::Blocking(_))),
            )
            .finish_non_exhaustive()
    }
}

/// The type-erased handler the service calls.
#[derive(Clone)]
pub(crate) enum Handler {
    /// Runs on the async workers; dropped when its call ends.
    Async(Arc<dyn Fn(Value, ToolContext) -> BoxFuture<Outcome> + Send + Sync>),
    /// Runs on the blocking pool; sees cancellation through its context.
    Blocking(Arc<dyn Fn(Value, ToolContext) -> Outcome + Send + Sync>),
}

/// What a handler produced, before output validation.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A reply to validate and send.
    Reply(ReplyValue),
    /// The input passed the schema but not the input type's `Deserialize`.
    BadInput(String),
    /// The handler returned an error.
    Failed(ToolError),
    /// The output didn't serialize to JSON.
    BadOutput(String),
}

/// A tool's answer as JSON: an output, or a pause.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyValue {
    /// The output.
    Output(Value),
    /// The call waits for another system.
    Pause(Pause),
}

/// The reply of a tool that may pause (protocol 2.8.0): its output now, or
/// a pause until another system posts the output to the call's wait link.
///
/// A tool whose handler returns `Reply<T>` declares `pauses` in the index.
///
/// ```
/// use kindgi::{Pause, Reply, ToolContext, ToolError};
/// # use schemars::JsonSchema; use serde::{Deserialize, Serialize};
/// # #[derive(Deserialize, JsonSchema)] struct Ask { amount: u32 }
/// # #[derive(Serialize, JsonSchema)] struct Decision { approved: bool }
/// async fn approve(input: Ask, ctx: ToolContext) -> Result<Reply<Decision>, ToolError> {
///     if input.amount < 100 {
///         return Ok(Reply::Done(Decision { approved: true }));
///     }
///     let link = ctx.wait_link()?;
///     // … send link.url() to the person who decides …
///     Ok(Reply::Pause(Pause::new().name("manager approval")))
/// }
/// let tool = kindgi::Tool::new("acme.approve", kindgi::here!()).handler(approve);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<T> {
    /// The call's output.
    Done(T),
    /// Wait for the output to be posted to the call's wait link.
    Pause(Pause),
}

/// A pause: how long to wait, and what for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pause {
    pub(crate) timeout: Option<Duration>,
    pub(crate) name: Option<String>,
}

impl Pause {
    /// A pause with the runtime's default timeout (24 hours).
    pub fn new() -> Self {
        Self::default()
    }

    /// How long the run waits, at most 24 days.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// What the run waits for, in a few words.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A handler's successful return type: any `Serialize + JsonSchema` value,
/// or [`Reply<T>`] for a tool that may pause.
pub trait ToolOutput: Send + 'static {
    /// The output schema the index carries.
    fn output_schema() -> Value;
    /// Whether this type can pause.
    fn pauses() -> bool {
        false
    }
    /// The reply as JSON.
    #[doc(hidden)]
    fn into_reply(self) -> Result<ReplyValue, serde_json::Error>;
}

impl<T: Serialize + JsonSchema + Send + 'static> ToolOutput for T {
    fn output_schema() -> Value {
        output_schema_for::<T>()
    }

    fn into_reply(self) -> Result<ReplyValue, serde_json::Error> {
        serde_json::to_value(self).map(ReplyValue::Output)
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> ToolOutput for Reply<T> {
    fn output_schema() -> Value {
        output_schema_for::<T>()
    }

    fn pauses() -> bool {
        true
    }

    fn into_reply(self) -> Result<ReplyValue, serde_json::Error> {
        match self {
            Reply::Done(output) => serde_json::to_value(output).map(ReplyValue::Output),
            Reply::Pause(pause) => Ok(ReplyValue::Pause(pause)),
        }
    }
}

fn finish<O: ToolOutput, E: Into<ToolError>>(result: Result<O, E>) -> Outcome {
    match result {
        Ok(output) => match output.into_reply() {
            Ok(reply) => Outcome::Reply(reply),
            Err(e) => Outcome::BadOutput(e.to_string()),
        },
        Err(e) => Outcome::Failed(e.into()),
    }
}

impl Tool {
    /// A tool with this id, declared in `source` ([`here!`](crate::here)).
    pub fn new(id: impl Into<String>, source: SourceFile) -> Self {
        Self {
            id: id.into(),
            description: None,
            version: None,
            input_schema: json!({}),
            output_schema: json!({}),
            mutating: None,
            needs_approval_when_unattended: None,
            effects: Vec::new(),
            needs_spec: Map::new(),
            pauses: None,
            output_pauses: false,
            stores_files: false,
            reads_files: false,
            extra: Map::new(),
            source,
            handler: None,
        }
    }

    /// The tool's id.
    pub fn id(&self) -> &str {
        &self.id
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

    /// Declares a side effect: `kind` is `reads`, `writes`, `deletes`,
    /// `network`, `external-side-effect`, …; `resource` names what it touches.
    pub fn effect(mut self, kind: &str, resource: Option<&str>) -> Self {
        let mut effect = Map::new();
        effect.insert("kind".into(), Value::from(kind));
        if let Some(resource) = resource {
            effect.insert("resource".into(), Value::from(resource));
        }
        self.effects.push(Value::Object(effect));
        self
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
    /// returns [`Reply`]).
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

    /// Replaces the input schema (e.g. for a `serde_json::Value` input).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Replaces the output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = schema;
        self
    }

    /// The async handler: `async fn(Input, ToolContext) -> Result<Output, E>`.
    /// The input and output schemas are derived from its types; any
    /// `std::error::Error` (or [`ToolError`]) works as `E`.
    ///
    /// When the call ends early (deadline, disconnect) its future is dropped.
    pub fn handler<F, Fut, I, O, E>(mut self, handler: F) -> Self
    where
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: ToolOutput,
        E: Into<ToolError> + 'static,
    {
        self.set_types::<I, O>();
        let handler = Arc::new(handler);
        self.handler = Some(Handler::Async(Arc::new(move |input, ctx| {
            // The input becomes `I` as the future is made, not as it is
            // first polled: the service makes it off the async worker for a
            // large body. The handler itself is called on the first poll.
            let typed = read_typed::<I>(input);
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                match typed {
                    Ok(input) => finish(handler(input, ctx).await),
                    Err(e) => Outcome::BadInput(e.to_string()),
                }
            })
        })));
        self
    }

    /// A blocking handler: `fn(Input, ToolContext) -> Result<Output, E>`,
    /// run on the blocking thread pool, off the async workers. It can't be
    /// dropped mid-way: it should check [`ToolContext::is_cancelled`].
    pub fn blocking_handler<F, I, O, E>(mut self, handler: F) -> Self
    where
        F: Fn(I, ToolContext) -> Result<O, E> + Send + Sync + 'static,
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: ToolOutput,
        E: Into<ToolError> + 'static,
    {
        self.set_types::<I, O>();
        self.handler = Some(Handler::Blocking(Arc::new(
            move |input, ctx| match read_typed::<I>(input) {
                Ok(input) => finish(handler(input, ctx)),
                Err(e) => Outcome::BadInput(e.to_string()),
            },
        )));
        self
    }

    fn set_types<I: JsonSchema, O: ToolOutput>(&mut self) {
        self.input_schema = input_schema_for::<I>();
        self.output_schema = O::output_schema();
        self.output_pauses = O::pauses();
    }

    /// Whether the index says `pauses`.
    pub(crate) fn effective_pauses(&self) -> bool {
        self.pauses.unwrap_or(self.output_pauses)
    }
}
