//! What a tool's handler gives back: an output, or a pause
//! ([`Reply`], [`Pause`], the [`ToolOutput`] trait), and the outcome the
//! service checks and answers.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::numbers::TypedRefusal;
use crate::{ToolError, output_schema_for};

/// What a handler produced, before output validation.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A reply to validate and send.
    Reply(ReplyValue),
    /// The input passed the schema but not the input type's `Deserialize`.
    BadInput(TypedRefusal),
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
/// let tool = kindgi::Tool::new("acme.approve").handler(approve);
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
#[must_use = "a builder does nothing until it is used"]
pub struct Pause {
    pub(crate) timeout: Option<Duration>,
    pub(crate) name: Option<String>,
}

impl Pause {
    /// The longest a pause may wait: 24 days.
    pub const MAX_TIMEOUT: Duration =
        Duration::from_millis(kindgi_protocol::ToolPause::MAX_TIMEOUT_MS);

    /// A pause with the runtime's default timeout (24 hours).
    pub fn new() -> Self {
        Self::default()
    }

    /// How long the run waits: from zero to 24 days
    /// ([`Pause::MAX_TIMEOUT`]). A longer pause is the handler's mistake,
    /// answered `handler-shape-invalid`.
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

/// A handler's result as the service takes it: its reply as JSON, an
/// output that can't be written as JSON, or its error.
pub(crate) fn finish<O: ToolOutput, E: Into<ToolError>>(result: Result<O, E>) -> Outcome {
    match result {
        Ok(output) => match output.into_reply() {
            Ok(reply) => Outcome::Reply(reply),
            Err(e) => Outcome::BadOutput(e.to_string()),
        },
        Err(e) => Outcome::Failed(e.into()),
    }
}
