//! The header timeout of a connection: its next request head is due
//! [`HEADER_TIMEOUT`] after the connection opened or after its last answer
//! was made, and a connection whose head is late is closed.
//!
//! One timer a connection, rearmed only when it fires, where hyper's own
//! header timeout arms a timer (a boxed sleep in the runtime's timer wheel)
//! for every request head it waits for: a call costs a clock read and
//! three flags instead. The timer sleeps on a task of its own
//! ([`HeadWatch::late_on_own_task`]), so that the connection's task, woken
//! for each request, doesn't poll it each time. A connection is never closed while one of its
//! requests is being answered, nor while an answer can't be written
//! because the client reads nothing for now (hyper's timeout starts only
//! once an answer is written): such a connection is looked at again a
//! timeout later.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tokio::time::Instant;

/// How long a client may take to send a request's head.
pub(super) const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// When a connection's next request head is due: shared by its service
/// (a request began, its answer was made), its socket (a write could not
/// go on) and [`HeadWatch::late`].
#[derive(Debug)]
pub(super) struct HeadWatch {
    opened: Instant,
    /// Milliseconds from `opened` to the last answer made.
    answered_ms: AtomicU64,
    /// A request is being answered.
    answering: AtomicBool,
    /// The last write to the socket could not go on: the client reads
    /// nothing for now.
    write_stalled: AtomicBool,
}

impl HeadWatch {
    /// The watch of a connection opened at `opened`: its first head is due
    /// [`HEADER_TIMEOUT`] after.
    pub(super) fn new(opened: Instant) -> Self {
        Self {
            opened,
            answered_ms: AtomicU64::new(0),
            answering: AtomicBool::new(false),
            write_stalled: AtomicBool::new(false),
        }
    }

    /// A request's head is in: it is being answered.
    pub(super) fn request_began(&self) {
        self.answering.store(true, Ordering::Release);
    }

    /// Its answer is made: the next head is due [`HEADER_TIMEOUT`] from
    /// now, or from `at` (the call's end, when the clock was read for it:
    /// not read again).
    pub(super) fn answer_made(&self, at: Option<std::time::Instant>) {
        let at = at.map_or_else(Instant::now, Instant::from_std);
        let since = at.saturating_duration_since(self.opened);
        let ms = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
        self.answered_ms.store(ms, Ordering::Release);
        self.answering.store(false, Ordering::Release);
    }

    /// Resolves once the connection's next head is late: no request is
    /// being answered, no answer is stuck on its way out, and the head is
    /// [`HEADER_TIMEOUT`] past due.
    pub(super) async fn late(&self) {
        loop {
            let now = Instant::now();
            let waiting = !self.answering.load(Ordering::Acquire)
                && !self.write_stalled.load(Ordering::Acquire);
            let since = Duration::from_millis(self.answered_ms.load(Ordering::Acquire));
            let due = self.opened + since + HEADER_TIMEOUT;
            if due > now {
                tokio::time::sleep_until(due).await;
            } else if waiting {
                return;
            } else {
                // Busy: look again a timeout later.
                tokio::time::sleep_until(now + HEADER_TIMEOUT).await;
            }
        }
    }

    /// [`HeadWatch::late`] on a task of its own, which the returned future
    /// waits for: the timer is then looked at when it fires, not at every
    /// wake of the connection's task (each request's). Dropping the future
    /// stops the task.
    pub(super) fn late_on_own_task(self: &Arc<Self>) -> LateSignal {
        let (tell, told) = oneshot::channel();
        let watch = Arc::clone(self);
        let task = tokio::spawn(async move {
            watch.late().await;
            let _ = tell.send(());
        });
        LateSignal {
            told,
            task: task.abort_handle(),
        }
    }

    /// Notes how a write to the socket went.
    fn wrote<T>(&self, polled: &Poll<io::Result<T>>) {
        let stalled = polled.is_pending();
        // Mostly unchanged: read before written.
        if self.write_stalled.load(Ordering::Relaxed) != stalled {
            self.write_stalled.store(stalled, Ordering::Release);
        }
    }
}

/// Resolves once the connection's head is late: see
/// [`HeadWatch::late_on_own_task`].
#[derive(Debug)]
pub(super) struct LateSignal {
    told: oneshot::Receiver<()>,
    task: AbortHandle,
}

impl Future for LateSignal {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match Pin::new(&mut self.told).poll(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(()),
            // The task is gone without telling (the runtime is stopping):
            // never late.
            Poll::Ready(Err(_)) | Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for LateSignal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A connection's socket, telling its [`HeadWatch`] when a write can't go
/// on.
#[derive(Debug)]
pub(super) struct Watched {
    stream: TcpStream,
    watch: Arc<HeadWatch>,
}

impl Watched {
    /// `stream`, watched by `watch`.
    pub(super) fn new(stream: TcpStream, watch: Arc<HeadWatch>) -> Self {
        Self { stream, watch }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch.wrote(&polled);
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch.wrote(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_head_is_late_a_timeout_after_the_last_answer_and_never_while_busy() {
        let watch = HeadWatch::new(Instant::now());
        let late = async {
            watch.late().await;
            Instant::now()
        };
        let opened = Instant::now();
        let busy = async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            watch.request_began();
            // Answering for longer than the timeout.
            tokio::time::sleep(Duration::from_secs(50)).await;
            watch.answer_made(None);
            // The answer can't go out for a while.
            watch.wrote::<()>(&Poll::Pending);
            tokio::time::sleep(Duration::from_secs(40)).await;
            watch.wrote(&Poll::Ready(Ok(())));
            std::future::pending::<()>().await;
        };
        let closed_at = tokio::select! {
            at = late => at,
            () = busy => unreachable!(),
        };
        // Answered at 60 s: due at 90 s, when its answer was stuck; looked
        // at again a timeout later, the write having gone on at 100 s.
        assert_eq!(closed_at - opened, Duration::from_secs(120));
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_made_at_a_call_s_end_counts_from_that_end() {
        let opened = Instant::now();
        let watch = HeadWatch::new(opened);
        tokio::time::sleep(Duration::from_secs(5)).await;
        // The call ended at 5 s; its answer is made (told) at 8 s.
        let ended = Instant::now().into_std();
        tokio::time::sleep(Duration::from_secs(3)).await;
        watch.request_began();
        watch.answer_made(Some(ended));
        watch.late().await;
        assert_eq!(
            Instant::now() - opened,
            Duration::from_secs(5) + HEADER_TIMEOUT
        );
    }

    #[tokio::test(start_paused = true)]
    async fn lateness_on_its_own_task_is_told_at_the_same_time() {
        let opened = Instant::now();
        let watch = Arc::new(HeadWatch::new(opened));
        watch.late_on_own_task().await;
        assert_eq!(Instant::now() - opened, HEADER_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_signal_stops_its_task() {
        let watch = Arc::new(HeadWatch::new(Instant::now()));
        drop(watch.late_on_own_task());
        // The task held the only other reference to the watch.
        tokio::task::yield_now().await;
        assert_eq!(Arc::strong_count(&watch), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_sends_nothing_is_late_at_the_timeout() {
        let opened = Instant::now();
        let watch = HeadWatch::new(opened);
        watch.late().await;
        assert_eq!(Instant::now() - opened, HEADER_TIMEOUT);
    }
}
