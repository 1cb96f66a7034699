//! A caller that closes its sending side: answered if it only stopped
//! sending, its call cancelled if it is gone.
//!
//! A caller may send its request and at once close its sending side
//! (`shutdown(SHUT_WR)`, as `nc -N` and some proxies do). Read from the
//! service's side, that end of input looks just like a caller that closed
//! its socket and left — whose call the contract ends `cancelled`. Only a
//! write tells them apart: a socket closed for good answers what comes to
//! it with a reset; one only half-closed takes it. So when the end comes
//! while an HTTP/1.1 call, its request read to its end, waits for its
//! answer ([`AnswerAwaited`]) and every answer before it is written, the
//! stream ([`CallerStream`]) writes an interim `100 Continue`, which an
//! HTTP/1.1 client reads past (RFC 9110, 15.2), and keeps the end from
//! hyper. It then looks at the socket's pending error every
//! [`LOOK_EVERY`]: the reset of a caller gone leaves one there (`EPIPE`),
//! and it goes to hyper as a read error (the connection closes, the call
//! ends `cancelled`, logged); the answer, if it comes first, is written,
//! and the end is reported after it.
//!
//! Any other end (HTTP/2, HTTP/1.0, a request not yet read) is reported one
//! read late. A request and its end of input often arrive together, and
//! hyper would read both before it ever hands the request to the service,
//! and drop it unstarted — no answer, and no `call` record. One read later,
//! hyper has handed the request on: a call that answers at once is
//! answered, and any other ends `cancelled`, logged.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Interval, MissedTickBehavior};

/// How often a half-closed caller's socket is looked at for a reset.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// The interim answer that asks the caller's socket whether it is there.
const PROBE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Whether a connection's call waits for its answer, its request read:
/// set by the call, read by its connection's [`CallerStream`]. The
/// connection hands it to each of its HTTP/1.1 calls.
#[derive(Debug, Clone, Default)]
pub(super) struct AnswerAwaited(Arc<AtomicBool>);

impl AnswerAwaited {
    /// The call's request is read to its end; its answer is awaited until
    /// the guard is dropped.
    pub(super) fn begin(&self) -> Awaiting<'_> {
        self.0.store(true, Ordering::Relaxed);
        Awaiting(self)
    }

    fn is_awaited(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// An answer awaited, until dropped (answered, or its call ended).
#[must_use]
pub(super) struct Awaiting<'a>(&'a AnswerAwaited);

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        (self.0).0.store(false, Ordering::Relaxed);
    }
}

/// A connection's socket, which holds an error of its own once its peer
/// has reset it.
pub(super) trait Socket {
    /// The socket's pending error, taken (`SO_ERROR`): after the end of
    /// input, a caller gone answers what it is sent with a reset, which
    /// reads as the end again and shows only here.
    fn take_error(&self) -> io::Result<Option<io::Error>>;
}

impl Socket for TcpStream {
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        TcpStream::take_error(self)
    }
}

/// Where a connection's end of input is.
enum End {
    /// Not come.
    NotSeen,
    /// Come, and kept from hyper for one read.
    HeldOnce,
    /// Come while an answer was awaited: the caller was asked (the
    /// interim answer written), and is looked at for a reset at each wake.
    Probed { look: Interval, answered: bool },
    /// Reported to hyper.
    Reported,
}

/// A connection's stream, its end of input reported as the module says.
pub(super) struct CallerStream<S> {
    inner: S,
    awaited: AnswerAwaited,
    end: End,
    /// Every byte hyper wrote has been flushed: the stream stands between
    /// two answers (hyper flushes its buffer before it flushes the stream).
    flushed: bool,
}

impl<S> CallerStream<S> {
    /// `inner`, whose calls say through `awaited` when an answer is
    /// awaited.
    pub(super) fn new(inner: S, awaited: AnswerAwaited) -> Self {
        Self {
            inner,
            awaited,
            end: End::NotSeen,
            flushed: true,
        }
    }
}

impl<S: AsyncWrite + Unpin> CallerStream<S> {
    /// Writes the interim answer, whole, or says it couldn't.
    fn probe(&mut self, cx: &mut Context<'_>) -> bool {
        matches!(
            Pin::new(&mut self.inner).poll_write(cx, PROBE),
            Poll::Ready(Ok(n)) if n == PROBE.len()
        )
    }
}

/// Arms `look` to wake the task at its next tick.
fn look_again(look: &mut Interval, cx: &mut Context<'_>) {
    while look.poll_tick(cx).is_ready() {}
}

impl<S: AsyncRead + AsyncWrite + Socket + Unpin> AsyncRead for CallerStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        let ended = matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() == before;
        if !ended || buf.remaining() == 0 {
            // Bytes, an error (a reset: the caller is gone), or no room.
            if matches!(read, Poll::Ready(Err(_))) {
                this.end = End::Reported;
            }
            return read;
        }
        if matches!(this.end, End::NotSeen | End::HeldOnce)
            && this.awaited.is_awaited()
            && this.flushed
            && this.probe(cx)
        {
            let mut look = tokio::time::interval_at(Instant::now() + LOOK_EVERY, LOOK_EVERY);
            look.set_missed_tick_behavior(MissedTickBehavior::Delay);
            look_again(&mut look, cx);
            this.end = End::Probed {
                look,
                answered: false,
            };
            return Poll::Pending;
        }
        match &mut this.end {
            End::Reported => read,
            End::Probed { look, answered } => {
                if let Some(gone) = this.inner.take_error().unwrap_or_else(Some) {
                    this.end = End::Reported;
                    return Poll::Ready(Err(gone));
                }
                if *answered && this.flushed && !this.awaited.is_awaited() {
                    this.end = End::Reported;
                    return read;
                }
                look_again(look, cx);
                Poll::Pending
            }
            End::NotSeen => {
                this.end = End::HeldOnce;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            End::HeldOnce => {
                this.end = End::Reported;
                read
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> CallerStream<S> {
    /// Notes that hyper wrote `written` bytes.
    fn wrote(&mut self, written: &Poll<io::Result<usize>>) {
        if matches!(written, Poll::Ready(Ok(n)) if *n > 0) {
            self.flushed = false;
            if let End::Probed { answered, .. } = &mut self.end {
                *answered = true;
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for CallerStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&written);
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        if matches!(flushed, Poll::Ready(Ok(()))) {
            self.flushed = true;
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
    use tokio::net::{TcpListener, TcpStream};

    use super::{AnswerAwaited, CallerStream, PROBE, Socket};

    impl Socket for DuplexStream {
        fn take_error(&self) -> io::Result<Option<io::Error>> {
            Ok(None)
        }
    }

    #[tokio::test]
    async fn with_no_answer_awaited_the_end_comes_one_read_late_and_then_stays() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"ab").await.expect("write");
        client.shutdown().await.expect("shutdown");
        let mut stream = CallerStream::new(server, AnswerAwaited::default());
        let mut buf = [0u8; 8];
        assert_eq!(stream.read(&mut buf).await.expect("read"), 2);
        // The end, held once (the read is woken again), then reported.
        assert_eq!(stream.read(&mut buf).await.expect("read"), 0);
        assert_eq!(stream.read(&mut buf).await.expect("read"), 0);
        // Nothing was written to the caller.
        drop(stream);
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.expect("read");
        assert_eq!(got, b"");
    }

    #[tokio::test]
    async fn with_an_answer_awaited_the_caller_is_asked_and_the_end_follows_the_answer() {
        let (mut client, server) = tokio::io::duplex(64);
        client.shutdown().await.expect("shutdown");
        let awaited = AnswerAwaited::default();
        let mut stream = CallerStream::new(server, awaited.clone());
        let awaiting = awaited.begin();
        let mut buf = [0u8; 8];
        let kept = futures::poll!(std::pin::pin!(stream.read(&mut buf)));
        assert!(
            kept.is_pending(),
            "the end is kept while the answer is awaited"
        );
        drop(awaiting);
        stream.write_all(b"answer").await.expect("write");
        stream.flush().await.expect("flush");
        assert_eq!(stream.read(&mut buf).await.expect("read"), 0);
        drop(stream);
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.expect("read");
        assert_eq!(got, [PROBE, b"answer"].concat());
    }

    #[tokio::test]
    async fn a_caller_gone_is_an_error_once_it_resets_the_probe() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let mut client = TcpStream::connect(listener.local_addr().expect("addr"))
            .await
            .expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        client.write_all(b"ab").await.expect("write");
        drop(client);
        let awaited = AnswerAwaited::default();
        let mut stream = CallerStream::new(server, awaited.clone());
        let _awaiting = awaited.begin();
        let mut buf = [0u8; 8];
        assert_eq!(stream.read(&mut buf).await.expect("read"), 2);
        let gone = stream.read(&mut buf).await.expect_err("the caller is gone");
        assert_eq!(gone.kind(), io::ErrorKind::BrokenPipe, "{gone}");
    }
}
