//! A connection's stream whose end of input is reported one read late.
//!
//! A caller may send its request and at once close its sending side
//! (`shutdown(SHUT_WR)`, as `nc -N` and some proxies do). The request and
//! the end of input then arrive together, and hyper reads both before it
//! ever hands the request to the service: it sees the end, closes the
//! connection and drops the request unstarted — no answer, and no `call`
//! record for a call whose every byte came. Reported one read later, the
//! end comes after hyper has polled the request once: a call that answers
//! at once is answered (the connection can still be written to), and any
//! other is cancelled and logged as a call whose caller went away, as the
//! Node reference does with every such call.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// `inner`, its first end of input reported as not ready yet (the task
/// woken at once to read again).
#[derive(Debug)]
pub(super) struct LateEof<S> {
    inner: S,
    held_once: bool,
}

impl<S> LateEof<S> {
    pub(super) fn new(inner: S) -> Self {
        Self {
            inner,
            held_once: false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for LateEof<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        let ended = matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() == before;
        if ended && buf.remaining() > 0 && !self.held_once {
            self.held_once = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for LateEof<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::LateEof;

    #[tokio::test]
    async fn the_first_end_of_input_comes_one_read_late_and_then_stays() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"ab").await.expect("write");
        client.shutdown().await.expect("shutdown");
        let mut late = LateEof::new(server);
        let mut buf = [0u8; 8];
        assert_eq!(late.read(&mut buf).await.expect("read"), 2);
        // The end, held once (the read is woken again), then reported.
        assert_eq!(late.read(&mut buf).await.expect("read"), 0);
        assert!(late.held_once);
        assert_eq!(late.read(&mut buf).await.expect("read"), 0);
    }
}
