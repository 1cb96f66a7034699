//! The accept loop, top to bottom: say where it listens, serve
//! connections until shutdown, drain ([`super::drain`]), say `stopped`.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use super::connections::{Connections, MAX_CONNECTIONS};
use super::drain::{self, CLOSE_WINDOW, SETTLE_WINDOW, Stopping, WindowEnd};
use super::idle_memory;
use super::limits;
use super::stalls::Watchdog;
use super::state::ServiceState;
use crate::log::{Level, Record};

/// Serves `listener` until `shutdown` resolves, then drains; returns once
/// `stopped` is logged. `open_files` is the open-files limit the
/// connection cap must fit in (`None`: not known).
pub(super) async fn run(
    state: Arc<ServiceState>,
    listener: TcpListener,
    open_files: Option<u64>,
    shutdown: impl Future<Output = ()>,
) {
    let logger = &state.invoker.logger;
    let index = &state.invoker.index;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    logger.log(
        Record::lifecycle(
            Level::Info,
            "listening",
            format!("Listening on port {port}"),
        )
        .field("port", port)
        .field("packId", index.pack_id.as_str())
        .field("artifactVersion", index.artifact_version.as_str()),
    );
    let cap = limits::connection_cap(open_files);
    if cap < MAX_CONNECTIONS {
        logger.log(
            Record::lifecycle(
                Level::Warn,
                "connections-capped",
                format!(
                    "Serving at most {cap} connections at once: the open-files limit is {} (raise it to {} or more for all {MAX_CONNECTIONS})",
                    open_files.unwrap_or_default(),
                    MAX_CONNECTIONS + MAX_CONNECTIONS / 3 + 1
                ),
            )
            .field("connections", cap)
            .field("openFiles", open_files.unwrap_or_default()),
        );
    }
    let connections = Connections::new(cap);
    // Watches the async handlers for one that blocks its thread, until the
    // service stops.
    let _watchdog = Watchdog::start(Arc::clone(&state.invoker.stalls), Arc::clone(logger));
    // Gives freed memory back once a burst of calls is over.
    let idle_memory = idle_memory::watch(Arc::clone(&state));
    // A connection taken from the listener, waiting for a slot. Kept here,
    // across both loops, rather than in a future of their select, so that
    // no other branch firing ever drops it.
    let mut arrived: Option<TcpStream> = None;

    accept_until(&listener, &connections, &state, &mut arrived, shutdown).await;

    // Draining: still accepting (new invokes get 503 `draining`) while the
    // calls in flight finish.
    let stopping = Stopping::begin(&state.drain, logger);
    let window = drain::window(&state.drain, &stopping);
    let ended = accept_until(&listener, &connections, &state, &mut arrived, window).await;
    if ended == WindowEnd::Closed {
        drain::cut_short(&state.drain).await;
    }
    finish(listener, arrived, connections, &state, &stopping).await;
    if let Some(idle_memory) = idle_memory {
        idle_memory.abort();
    }
    // The spans and metrics still held go out, within what is left before
    // `stopped` is due (the SDK says what it dropped, before it).
    if state.invoker.telemetry.is_on() {
        let flushing = Arc::clone(&state);
        let within = stopping.left(TELEMETRY_FLUSH);
        let _ =
            tokio::task::spawn_blocking(move || flushing.invoker.telemetry.shutdown(within)).await;
    }

    logger.log(Record::lifecycle(Level::Info, "stopped", "Stopped"));
    // `stopped` is the last record: what a handler still running logs from
    // here on (a blocking one's `handler-finished-late`) is not written.
    logger.close();
}

/// The most the telemetry's last export may take at exit.
const TELEMETRY_FLUSH: Duration = Duration::from_secs(1);

/// Accepts connections and serves each in a slot of `connections` until
/// `stop` resolves; returns what it resolved to.
async fn accept_until<T>(
    listener: &TcpListener,
    connections: &Connections,
    state: &Arc<ServiceState>,
    arrived: &mut Option<TcpStream>,
    stop: impl Future<Output = T>,
) -> T {
    tokio::pin!(stop);
    loop {
        tokio::select! {
            stopped = &mut stop => return stopped,
            accepted = listener.accept(), if arrived.is_none() => match accepted {
                Ok((stream, _)) => *arrived = Some(stream),
                // Out of file descriptors, or a connection reset before it
                // was taken: back off a little.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            slot = connections.slot(), if arrived.is_some() => {
                if let (Some(stream), Some(slot)) = (arrived.take(), slot) {
                    connections.serve(stream, slot, state);
                }
            }
        }
    }
}

/// After the drain window: the backlog, then the connections' last
/// answers (steps 4 and 5 of the module's list).
async fn finish(
    listener: TcpListener,
    arrived: Option<TcpStream>,
    connections: Connections,
    state: &Arc<ServiceState>,
    stopping: &Stopping,
) {
    take_backlog(listener, arrived, &connections, state, stopping).await;
    // Connections taken while draining close after their one answer: give
    // them a moment to read their request and answer it, so that none is
    // closed with its request unread.
    connections.settle(stopping.left(SETTLE_WINDOW)).await;
    // Connections that still have not sent a byte just close; every answer
    // is written before the process goes: connections finish the request
    // they are on, idle ones close.
    connections.close(stopping.left(CLOSE_WINDOW)).await;
}

/// Serves the connection taken but not yet served and those still waiting
/// in the backlog (they get 503 `draining` and close), then stops
/// listening, so that a connection made after this is refused instead of
/// being reset after it sent its request. The listener leaves the reactor
/// first, so that every accept asks the kernel rather than trusting a
/// readiness the reactor may not have seen yet.
async fn take_backlog(
    listener: TcpListener,
    arrived: Option<TcpStream>,
    connections: &Connections,
    state: &Arc<ServiceState>,
    stopping: &Stopping,
) {
    let listener = listener.into_std().ok();
    // Non-blocking (as tokio left it): an empty backlog ends the loop.
    let accept_now = || {
        let (stream, _) = listener.as_ref()?.accept().ok()?;
        stream
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(stream))
            .ok()
    };
    let mut next = arrived;
    for _ in 0..=connections.cap() {
        let Some(stream) = next.take().or_else(accept_now) else {
            break;
        };
        let slot = tokio::time::timeout(stopping.left(SETTLE_WINDOW), connections.slot()).await;
        let Ok(Some(slot)) = slot else {
            break;
        };
        connections.serve(stream, slot, state);
    }
    // The listener closes here.
}
