//! A large call's async handler made and polled once off the async worker
//! ([`super::invoke::off_worker`]), on the thread that read its input.
//!
//! Most handlers answer at their first poll. Polled where its input was
//! read, such a handler's work runs off the worker, as the read did, and
//! its input is freed by the thread that allocated it: freed on the worker,
//! each of the input's allocations was an atomic push onto another
//! thread's free list, and that thread had to collect them again (~8 % of
//! a 1 MiB call's CPU). A handler that isn't done at its first
//! poll goes back to the worker, which polls it from then on.
//!
//! The first poll runs in the runtime's context (a handler may spawn tasks
//! or start timers) and wakes the call's own task: what the handler waits
//! on wakes the worker, which then has the handler back.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures::FutureExt as _;

use super::invoke::off_worker;
use crate::ToolContext;
use crate::authoring::tool::{BoxFuture, Outcome};
use crate::log_events::in_call;

/// A handler's run: its outcome, or the panic that ended it.
pub(crate) type Ran = std::thread::Result<Outcome>;

/// A handler's run, polled as part of its call ([`in_call`]), a panic
/// caught.
pub(crate) type Run = Pin<Box<dyn Future<Output = Ran> + Send>>;

/// Where a handler is after its first poll.
pub(crate) enum FirstPoll {
    /// Done: its outcome, or its panic (making its future included).
    Done(Ran),
    /// Still running: the worker polls it from here on.
    Running(Run),
}

/// Makes the handler's future with `make` and polls it once, as part of
/// `call`, off the worker (in place on a runtime of one thread).
pub(crate) async fn first_poll(
    call: ToolContext,
    make: impl FnOnce() -> std::thread::Result<BoxFuture<Outcome>> + Send + 'static,
) -> FirstPoll {
    // What the handler waits on wakes this task.
    let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
    let runtime = tokio::runtime::Handle::try_current().ok();
    off_worker(true, move || {
        let _in_runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
        poll_once(make, call, &waker)
    })
    .await
}

/// Makes the future and polls it once with `waker`.
fn poll_once(
    make: impl FnOnce() -> std::thread::Result<BoxFuture<Outcome>>,
    call: ToolContext,
    waker: &Waker,
) -> FirstPoll {
    let future = match make() {
        Ok(future) => future,
        Err(payload) => return FirstPoll::Done(Err(payload)),
    };
    let mut run: Run = Box::pin(run_of(call, future));
    match run.as_mut().poll(&mut Context::from_waker(waker)) {
        Poll::Ready(ran) => FirstPoll::Done(ran),
        Poll::Pending => FirstPoll::Running(run),
    }
}

/// The handler's `future` run as part of `call` ([`in_call`]), a panic
/// caught.
pub(crate) fn run_of(
    call: ToolContext,
    future: BoxFuture<Outcome>,
) -> impl Future<Output = Ran> + Send {
    std::panic::AssertUnwindSafe(in_call(call, future)).catch_unwind()
}
