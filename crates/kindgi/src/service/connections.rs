//! The connections the service serves: a slot each, at most
//! [`MAX_CONNECTIONS`], and room made for newcomers by closing connections
//! that have not completed a request head, the oldest (slowest) first.
//!
//! A connection that has served its requests and sends no next one in the
//! header timeout is closed: hyper's header read timeout does it for
//! HTTP/1.1, [`Streams`] for HTTP/2 (`GOAWAY`), whose idle connection
//! would otherwise hold its slot for ever. An HTTP/2 connection told
//! `GOAWAY` for idleness that still hasn't finished within one more header
//! timeout is closed outright: what it still holds is answers its peer
//! never takes (a flow-control window left at zero), and a peer that reads
//! nothing must not keep a slot.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::Version;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::half_close::{AnswerAwaited, CallerStream};
use super::state::ServiceState;
use super::{routes, transport};

/// The most connections served at once. Past it, a new connection takes the
/// slot of the oldest one that has not completed its first request head
/// (silent, or trickling it: the slowest, as it has had the longest), or,
/// when every connection has, waits in the listen backlog until one closes.
pub(super) const MAX_CONNECTIONS: usize = 4096;

/// The connections being served: their slots, the ones among them that
/// have not completed a request head yet, and the signal to close.
pub(super) struct Connections {
    /// One permit per connection, `cap` in all.
    slots: Arc<Semaphore>,
    /// The most connections served at once: [`MAX_CONNECTIONS`], or fewer
    /// under a low open-files limit.
    cap: usize,
    silent: Arc<SilentConnections>,
    /// Cancelled at exit: every connection finishes the requests it is on
    /// and closes (hyper's graceful shutdown).
    closing: CancellationToken,
}

impl Connections {
    /// Serves at most `cap` connections at once.
    pub(super) fn new(cap: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(cap)),
            cap,
            silent: Arc::new(SilentConnections::default()),
            closing: CancellationToken::new(),
        }
    }

    /// The most connections served at once.
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// A slot for a new connection: a free one; else that of the oldest
    /// connection that has not completed a request head, which is closed
    /// for it; else (every connection is serving) the first one to free up.
    /// `None` only if the semaphore were closed, which it never is.
    pub(super) async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Some(slot);
        }
        // The closed connection's task gives its slot back as it ends.
        self.silent.close_oldest();
        Arc::clone(&self.slots).acquire_owned().await.ok()
    }

    /// Waits, up to `window`, for every connection to close (all slots
    /// back).
    pub(super) async fn settle(&self, window: Duration) {
        if let Ok(all) = u32::try_from(self.cap) {
            let settled = Arc::clone(&self.slots).acquire_many_owned(all);
            let _ = tokio::time::timeout(window, settled).await;
        }
    }

    /// Closes the connections that have not sent a byte, and lets the
    /// others finish the request they are on, for up to `window`; idle ones
    /// close.
    pub(super) async fn close(self, window: Duration) {
        self.silent.close_all();
        self.closing.cancel();
        self.settle(window).await;
    }

    /// Serves `stream` on its own task, holding `slot` until it closes.
    pub(super) fn serve(
        &self,
        stream: TcpStream,
        slot: OwnedSemaphorePermit,
        state: &Arc<ServiceState>,
    ) {
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(state);
        let silent = Arc::clone(&self.silent);
        let closing = self.closing.clone();
        let (id, mut closed) = silent.enter();
        // A request head is due `header_timeout` after the connection
        // opened (this timer, for the first) or after its last answer was
        // written (hyper's own header read timeout, for every next one on
        // HTTP/1.1; `Streams`, on HTTP/2).
        let header_timeout = state.header_timeout;
        let first_head_due = Instant::now() + header_timeout;
        tokio::spawn(async move {
            // Until its first byte, the connection may be closed to make
            // room for a new one (or at exit). (A peek, not `readable()`,
            // which may report a fresh socket readable before any byte
            // came.)
            let mut first = [0u8; 1];
            let heard = tokio::select! {
                peeked = stream.peek(&mut first) => matches!(peeked, Ok(n) if n > 0),
                () = tokio::time::sleep_until(first_head_due) => false,
                _ = &mut closed => false,
            };
            if heard {
                // Until its first request head is complete it may still be
                // closed for a newcomer: a client trickling its head can't
                // keep a slot from a new one.
                silent.heard(id);
                let listed = AtomicBool::new(true);
                let head_done = Arc::clone(&silent);
                let streams = Arc::new(Streams::new());
                let counted = Arc::clone(&streams);
                // On HTTP/2, idle past the header timeout: see the loop.
                let idle = streams.idle_for(header_timeout);
                tokio::pin!(idle);
                let server = transport::server(header_timeout);
                let awaited = AnswerAwaited::default();
                let told = awaited.clone();
                let service = service_fn(move |request: hyper::Request<_>| {
                    if listed.swap(false, Ordering::Relaxed) {
                        head_done.leave(id);
                    }
                    // An HTTP/1.1 call says when its answer is awaited, so
                    // that a caller that half-closes is answered.
                    let awaited = (request.version() == Version::HTTP_11).then(|| told.clone());
                    let open = (request.version() == Version::HTTP_2).then(|| counted.open());
                    // Boxed: hyper moves the future it is given into its
                    // own slot, and the call's future is some 2.7 kB.
                    let answer =
                        Box::pin(routes::answer_guarded(Arc::clone(&state), request, awaited));
                    async move {
                        let answer = answer.await;
                        drop(open);
                        Ok::<_, Infallible>(answer)
                    }
                });
                let mut connection =
                    std::pin::pin!(server.serve_connection(
                        TokioIo::new(CallerStream::new(stream, awaited)),
                        service
                    ));
                // Closed to make room, or its first head late. Once that
                // head is in, leaving the list drops the sender: an error,
                // which leaves the connection to hyper from then on.
                let first_head = async {
                    tokio::select! {
                        closing = &mut closed => match closing {
                            Ok(()) => {}
                            Err(_) => std::future::pending().await,
                        },
                        () = tokio::time::sleep_until(first_head_due) => {}
                    }
                };
                tokio::pin!(first_head);
                let mut shutting = false;
                // When a connection told `GOAWAY` for idleness is closed
                // whatever it still has to write.
                let mut cut_at: Option<Instant> = None;
                loop {
                    let cut = async {
                        match cut_at {
                            Some(at) => tokio::time::sleep_until(at).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = connection.as_mut() => break,
                        () = &mut first_head => break,
                        () = cut => break,
                        // At exit, or idle on HTTP/2 past the header
                        // timeout: the requests it is on are answered,
                        // then it closes.
                        () = closing.cancelled(), if !shutting => {
                            connection.as_mut().graceful_shutdown();
                            shutting = true;
                        }
                        () = &mut idle, if !shutting => {
                            connection.as_mut().graceful_shutdown();
                            shutting = true;
                            cut_at = Some(Instant::now() + header_timeout);
                        }
                    }
                }
            }
            silent.leave(id);
            drop(slot);
        });
    }
}

/// The requests an HTTP/2 connection has open, and since when it has had
/// none: an HTTP/2 connection with none for the header timeout is closed,
/// as an HTTP/1.1 connection that sends no next head is.
#[derive(Debug)]
struct Streams {
    open: watch::Sender<Open>,
}

/// What [`Streams`] watches.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Requests open now.
    count: usize,
    /// When `count` last changed; `None` before the first request.
    changed: Option<Instant>,
}

/// One open request of [`Streams`]; closed as it drops (answered, or its
/// stream reset).
struct OpenStream(Arc<Streams>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open.send_modify(|open| {
            open.count = open.count.saturating_sub(1);
            open.changed = Some(Instant::now());
        });
    }
}

impl Streams {
    fn new() -> Self {
        Self {
            open: watch::Sender::new(Open {
                count: 0,
                changed: None,
            }),
        }
    }

    /// Counts a request open until the value drops.
    fn open(self: &Arc<Self>) -> OpenStream {
        self.open.send_modify(|open| {
            open.count += 1;
            open.changed = Some(Instant::now());
        });
        OpenStream(Arc::clone(self))
    }

    /// Resolves once the connection has had no request open for `idle`
    /// since its last one closed (never before its first request).
    async fn idle_for(&self, idle: Duration) {
        let mut changes = self.open.subscribe();
        loop {
            let open = *changes.borrow_and_update();
            match open.changed {
                Some(since) if open.count == 0 => tokio::select! {
                    () = tokio::time::sleep_until(since + idle) => return,
                    _ = changes.changed() => {}
                },
                // The sender lives in `self`: `changed` never fails.
                _ => {
                    let _ = changes.changed().await;
                }
            }
        }
    }
}

/// The connections that may be closed to make room for a newcomer: those
/// that have not completed their first request head (silent ones included),
/// oldest first. When every connection slot is taken and a new connection
/// comes, the oldest of them is closed: it has had the longest to send a
/// head and still hasn't, so it is the slowest (a connection that sends
/// nothing, or trickles its head; no token is needed for either), while a
/// connection just accepted, its request already on the way, is the last
/// one closed, and a connection serving a request never is.
#[derive(Debug, Default)]
struct SilentConnections {
    /// By arrival. Closing a connection is sending on its sender; dropping
    /// the sender (it left the list) is not.
    waiting: Mutex<BTreeMap<u64, Waiting>>,
    next: AtomicU64,
}

/// A connection without a complete request head.
#[derive(Debug)]
struct Waiting {
    close: oneshot::Sender<()>,
    /// Whether it has sent a byte: then, at exit, hyper's graceful
    /// shutdown decides, as for any connection reading a request.
    heard: bool,
}

impl SilentConnections {
    /// Counts a new connection in; the receiver resolves `Ok` when it is
    /// to be closed.
    fn enter(&self) -> (u64, oneshot::Receiver<()>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (close, closed) = oneshot::channel();
        self.waiting().insert(
            id,
            Waiting {
                close,
                heard: false,
            },
        );
        (id, closed)
    }

    /// Connection `id` has sent its first byte.
    fn heard(&self, id: u64) {
        if let Some(waiting) = self.waiting().get_mut(&id) {
            waiting.heard = true;
        }
    }

    /// Counts connection `id` out: its first head is in, or it closed.
    fn leave(&self, id: u64) {
        self.waiting().remove(&id);
    }

    /// Closes the oldest connection without a complete head, if there is
    /// one.
    fn close_oldest(&self) {
        if let Some((_, waiting)) = self.waiting().pop_first() {
            let _ = waiting.close.send(());
        }
    }

    /// Closes every connection that has not sent a byte (at exit): one
    /// that has may be sending its request, which hyper's graceful
    /// shutdown lets it finish.
    fn close_all(&self) {
        let mut waiting = self.waiting();
        let silent: Vec<u64> = waiting
            .iter()
            .filter(|(_, w)| !w.heard)
            .map(|(id, _)| *id)
            .collect();
        for id in silent {
            if let Some(w) = waiting.remove(&id) {
                let _ = w.close.send(());
            }
        }
    }

    /// The map, even if a thread panicked holding it (it stays consistent:
    /// every change is a single map operation).
    fn waiting(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Waiting>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
