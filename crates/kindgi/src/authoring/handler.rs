//! What a tool's handler may look like (with or without its context,
//! async or blocking), and the one shape each is erased to for the
//! service ([`Handler`]).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::input::ToolInput;
use super::reply::{Outcome, ToolOutput, finish};
#[cfg(feature = "fast-input")]
use super::text_input::TextReader;
#[cfg(feature = "fast-input")]
use super::text_input::read_passing;
use crate::{ToolContext, ToolError};

/// An async function a [`Tool`](crate::Tool) runs: `async fn(Input) ->
/// Result<Output, E>` or `async fn(Input, ToolContext) -> Result<Output, E>`.
///
/// `Input` is `Deserialize + JsonSchema`, `Output` is `Serialize +
/// JsonSchema` (or [`Reply<T>`](crate::Reply)), and `E` is any
/// `std::error::Error` or [`ToolError`]. `Args` only tells the two shapes
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an async tool handler",
    label = "not `async fn(Input) -> Result<Output, E>` or `async fn(Input, ToolContext) -> Result<Output, E>`",
    note = "a plain `fn` that blocks goes to `.blocking_handler(…)` (or `#[kindgi::tool(blocking)]`)",
    note = "`E` is any `std::error::Error` or `ToolError`; a boxed error becomes one with `ToolError::from_boxed`",
    note = "`Input` is `Deserialize + JsonSchema`; `Output` is `Serialize + JsonSchema`, or `Reply<T>`"
)]
pub trait AsyncHandler<Args>: Send + Sync + Sized + 'static {
    /// The input type, whose schema the index carries.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The output type.
    type Output: ToolOutput;

    /// The handler, type-erased for the service.
    #[doc(hidden)]
    fn into_async_fn(self) -> ErasedHandler;
}

/// A plain function a [`Tool`](crate::Tool) runs on the blocking thread
/// pool: `fn(Input) -> Result<Output, E>` or `fn(Input, ToolContext) ->
/// Result<Output, E>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a blocking tool handler",
    label = "not `fn(Input) -> Result<Output, E>` or `fn(Input, ToolContext) -> Result<Output, E>`",
    note = "an `async fn` goes to `.handler(…)`",
    note = "`E` is any `std::error::Error` or `ToolError`; a boxed error becomes one with `ToolError::from_boxed`"
)]
pub trait BlockingHandler<Args>: Send + Sync + Sized + 'static {
    /// The input type, whose schema the index carries.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The output type.
    type Output: ToolOutput;

    /// The handler, type-erased for the service.
    #[doc(hidden)]
    fn into_blocking_fn(self) -> ErasedHandler;
}

/// A handler as the service calls it, whatever its shape.
#[doc(hidden)]
pub struct ErasedHandler(pub(crate) Handler);

impl std::fmt::Debug for ErasedHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErasedHandler")
    }
}

/// Erases `handler`, which takes the context, with the reader of its
/// input type.
fn erase_async<F, Fut, I, O, E>(handler: F) -> Handler
where
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: DeserializeOwned + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    let handler = Arc::new(handler);
    let run: AsyncFn = Arc::new(move |input: ToolInput, ctx| {
        // The input becomes `I` as the future is made, not as it is first
        // polled; the handler itself is called on the first poll.
        let typed = input.read::<I>();
        let handler = Arc::clone(&handler);
        Box::pin(async move {
            match typed {
                Ok(input) => finish(handler(input, ctx).await),
                Err(refusal) => Outcome::BadInput(refusal),
            }
        })
    });
    Handler {
        run: Run::Async(run),
        #[cfg(feature = "fast-input")]
        read_text: read_passing::<I>,
    }
}

/// Erases `handler`, which takes the context, with the reader of its
/// input type.
fn erase_blocking<F, I, O, E>(handler: F) -> Handler
where
    F: Fn(I, ToolContext) -> Result<O, E> + Send + Sync + 'static,
    I: DeserializeOwned + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    let run: BlockingFn = Arc::new(move |input: ToolInput, ctx| match input.read::<I>() {
        Ok(input) => finish(handler(input, ctx)),
        Err(refusal) => Outcome::BadInput(refusal),
    });
    Handler {
        run: Run::Blocking(run),
        #[cfg(feature = "fast-input")]
        read_text: read_passing::<I>,
    }
}

impl<F, Fut, I, O, E> AsyncHandler<(I, ToolContext)> for F
where
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    type Input = I;
    type Output = O;

    fn into_async_fn(self) -> ErasedHandler {
        ErasedHandler(erase_async(self))
    }
}

impl<F, Fut, I, O, E> AsyncHandler<(I,)> for F
where
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    type Input = I;
    type Output = O;

    fn into_async_fn(self) -> ErasedHandler {
        ErasedHandler(erase_async(move |input, _ctx| self(input)))
    }
}

impl<F, I, O, E> BlockingHandler<(I, ToolContext)> for F
where
    F: Fn(I, ToolContext) -> Result<O, E> + Send + Sync + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    type Input = I;
    type Output = O;

    fn into_blocking_fn(self) -> ErasedHandler {
        ErasedHandler(erase_blocking(self))
    }
}

impl<F, I, O, E> BlockingHandler<(I,)> for F
where
    F: Fn(I) -> Result<O, E> + Send + Sync + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: ToolOutput,
    E: Into<ToolError> + 'static,
{
    type Input = I;
    type Output = O;

    fn into_blocking_fn(self) -> ErasedHandler {
        ErasedHandler(erase_blocking(move |input, _ctx| self(input)))
    }
}

/// An async handler as the service calls it.
pub(crate) type AsyncFn =
    Arc<dyn Fn(ToolInput, ToolContext) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// A blocking handler as the service calls it.
pub(crate) type BlockingFn = Arc<dyn Fn(ToolInput, ToolContext) -> Outcome + Send + Sync>;

/// The type-erased handler the service calls, and the reader of its input
/// type.
#[derive(Clone)]
pub(crate) struct Handler {
    /// How it runs.
    pub(crate) run: Run,
    /// Reads its input type from JSON text, checked as it is read.
    #[cfg(feature = "fast-input")]
    pub(crate) read_text: TextReader,
}

impl Handler {
    /// Whether it runs on the blocking pool.
    pub(crate) fn is_blocking(&self) -> bool {
        matches!(self.run, Run::Blocking(_))
    }
}

/// How a handler runs.
#[derive(Clone)]
pub(crate) enum Run {
    /// On the async workers; dropped when its call ends.
    Async(AsyncFn),
    /// On the blocking pool; sees cancellation through its context.
    Blocking(BlockingFn),
}
