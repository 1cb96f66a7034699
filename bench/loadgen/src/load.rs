//! The load generator: `concurrency` senders on hyper's client, each
//! sending one request at a time, back to back. Over HTTP/1.1 each sender
//! holds a keep-alive connection of its own; over h2c (HTTP/2 with prior
//! knowledge) the senders share a few connections, one stream each.
//!
//! Every connection runs through a warm-up, then the measured window. A
//! request counts when it started inside the window. The window closes
//! after `duration` once at least `min_requests` were answered, and at
//! `limit` whatever happened — so a slow target still gets a few samples
//! and no scenario runs unbounded.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

/// The header the pack token travels in.
pub(crate) const TOKEN_HEADER: &str = "kindgi-pack-token";

/// How the load reaches its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// HTTP/1.1: a keep-alive connection for every sender.
    Http1,
    /// h2c with prior knowledge: the senders' streams spread over
    /// `connections` connections.
    H2c {
        /// How many HTTP/2 connections carry the streams.
        connections: usize,
    },
}

/// One scenario's load against one target.
#[derive(Debug, Clone)]
pub(crate) struct Load {
    /// The target's address.
    pub(crate) addr: SocketAddr,
    /// HTTP/1.1 or h2c.
    pub(crate) protocol: Protocol,
    /// The pack token.
    pub(crate) token: String,
    /// The request body, sent as is with every request.
    pub(crate) body: Bytes,
    /// The exact answer body; any other answer is an error.
    pub(crate) expect: Bytes,
    /// Senders, each with one request in flight.
    pub(crate) concurrency: usize,
    /// How long to send before measuring.
    pub(crate) warmup: Duration,
    /// How long the measured window lasts at least.
    pub(crate) duration: Duration,
    /// How many answers the window waits for, past `duration`.
    pub(crate) min_requests: u64,
    /// When the window closes regardless.
    pub(crate) limit: Duration,
}

/// What one load measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Requests of the window answered `200` with the expected bytes.
    pub(crate) ok: u64,
    /// Requests of the window that failed: transport error, other status,
    /// other bytes.
    pub(crate) errors: u64,
    /// Every request sent, warm-up included.
    pub(crate) sent: u64,
    /// From the window's start to its last answer.
    pub(crate) elapsed: Duration,
    /// The window's latencies in microseconds, sorted.
    pub(crate) latencies_us: Vec<u32>,
}

impl Outcome {
    /// Answered requests per second.
    pub(crate) fn throughput(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ok as f64 / secs
        } else {
            0.0
        }
    }

    /// The `q` quantile (0–1) of the latencies, in milliseconds.
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let last = self.latencies_us.len() - 1;
        let at = ((last as f64) * q).round() as usize;
        f64::from(self.latencies_us[at.min(last)]) / 1000.0
    }
}

/// The clock every connection shares.
#[derive(Debug)]
struct Window {
    start: Instant,
    duration: Duration,
    hard_end: Instant,
    min_requests: u64,
    answered: AtomicU64,
}

impl Window {
    fn closed(&self, now: Instant) -> bool {
        now >= self.hard_end
            || (now >= self.start + self.duration
                && self.answered.load(Ordering::Relaxed) >= self.min_requests)
    }
}

/// One connection's tally.
#[derive(Debug, Default)]
struct Tally {
    ok: u64,
    errors: u64,
    sent: u64,
    last_answer: Option<Instant>,
    latencies_us: Vec<u32>,
}

/// A sender's handle on its connection: HTTP/1.1 sends one request at a
/// time on its own connection; HTTP/2 handles may share one.
#[derive(Debug)]
enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

/// A TCP stream with `TCP_NODELAY`, as a pack service's runtime would
/// hold one.
async fn dial(addr: SocketAddr) -> Result<TokioIo<TcpStream>> {
    let stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    Ok(TokioIo::new(stream))
}

/// A keep-alive HTTP/1.1 connection.
async fn connect_http1(addr: SocketAddr) -> Result<Sender> {
    let (sender, connection) = hyper::client::conn::http1::handshake(dial(addr).await?).await?;
    tokio::spawn(connection);
    Ok(Sender::Http1(sender))
}

/// An HTTP/2 connection with prior knowledge (h2c); its handle can be
/// cloned to open streams on it from many senders.
async fn connect_h2c(
    addr: SocketAddr,
) -> Result<hyper::client::conn::http2::SendRequest<Full<Bytes>>> {
    let (sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), dial(addr).await?).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// A fresh connection of the protocol's kind.
async fn connect(addr: SocketAddr, protocol: Protocol) -> Result<Sender> {
    match protocol {
        Protocol::Http1 => connect_http1(addr).await,
        Protocol::H2c { .. } => Ok(Sender::Http2(connect_h2c(addr).await?)),
    }
}

/// The invoke request. HTTP/2 carries the authority in the target (hyper
/// turns it into `:authority`); HTTP/1.1 in `Host`.
fn invoke(
    sender: &Sender,
    addr: SocketAddr,
    token: &HeaderValue,
    body: &Bytes,
) -> Result<Request<Full<Bytes>>> {
    let builder = match sender {
        Sender::Http1(_) => Request::post("/v1/invoke").header(HOST, addr.to_string()),
        Sender::Http2(_) => Request::post(format!("http://{addr}/v1/invoke")),
    };
    Ok(builder
        .header(CONTENT_TYPE, "application/json")
        .header(TOKEN_HEADER, token)
        .body(Full::new(body.clone()))?)
}

/// Sends one invoke; its status, headers and body.
async fn send(
    sender: &mut Sender,
    addr: SocketAddr,
    token: &HeaderValue,
    body: &Bytes,
) -> Result<(StatusCode, HeaderMap, Bytes)> {
    let request = invoke(sender, addr, token, body)?;
    let response = match sender {
        Sender::Http1(sender) => {
            sender.ready().await?;
            sender.send_request(request).await?
        }
        Sender::Http2(sender) => {
            sender.ready().await?;
            sender.send_request(request).await?
        }
    };
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await?.to_bytes();
    Ok((parts.status, parts.headers, bytes))
}

/// Sends one invoke on a fresh connection (the runner's check of a
/// target's answer before a load): its status, headers and body.
pub(crate) async fn once(
    addr: SocketAddr,
    protocol: Protocol,
    token: &str,
    body: &Bytes,
) -> Result<(StatusCode, HeaderMap, Bytes)> {
    let mut sender = connect(addr, protocol).await?;
    let token = HeaderValue::from_str(token).context("the token is not a header value")?;
    send(&mut sender, addr, &token, body).await
}

async fn connection(mut sender: Sender, load: Arc<Load>, window: Arc<Window>) -> Tally {
    let token = HeaderValue::from_str(&load.token).unwrap_or(HeaderValue::from_static("-"));
    let mut tally = Tally::default();
    loop {
        let began = Instant::now();
        if window.closed(began) {
            break;
        }
        tally.sent += 1;
        let answer = send(&mut sender, load.addr, &token, &load.body).await;
        let done = Instant::now();
        let ok = matches!(&answer, Ok((StatusCode::OK, _, bytes)) if *bytes == load.expect);
        if began >= window.start {
            let micros = done.duration_since(began).as_micros();
            tally
                .latencies_us
                .push(u32::try_from(micros).unwrap_or(u32::MAX));
            tally.last_answer = Some(done);
            if ok {
                tally.ok += 1;
                window.answered.fetch_add(1, Ordering::Relaxed);
            } else {
                tally.errors += 1;
            }
        }
        if answer.is_err() {
            // The connection broke (or, over HTTP/2, the stream was
            // refused): open another and go on.
            tokio::time::sleep(Duration::from_millis(10)).await;
            match connect(load.addr, load.protocol).await {
                Ok(fresh) => sender = fresh,
                Err(_) => continue,
            }
        }
    }
    tally
}

/// Runs one load on the current tokio runtime.
pub(crate) async fn run(load: Load) -> Result<Outcome> {
    if load.concurrency == 0 {
        bail!("concurrency must be at least 1");
    }
    let mut senders = Vec::with_capacity(load.concurrency);
    match load.protocol {
        Protocol::Http1 => {
            for _ in 0..load.concurrency {
                senders.push(connect_http1(load.addr).await?);
            }
        }
        Protocol::H2c { connections } => {
            if connections == 0 {
                bail!("h2c needs at least 1 connection");
            }
            let mut shared = Vec::with_capacity(connections);
            for _ in 0..connections {
                shared.push(connect_h2c(load.addr).await?);
            }
            // Sender `i` opens its streams on connection `i mod n`.
            for i in 0..load.concurrency {
                senders.push(Sender::Http2(shared[i % connections].clone()));
            }
        }
    }
    let now = Instant::now();
    let start = now + load.warmup;
    let window = Arc::new(Window {
        start,
        duration: load.duration,
        hard_end: start + load.limit.max(load.duration),
        min_requests: load.min_requests,
        answered: AtomicU64::new(0),
    });
    let load = Arc::new(load);
    let tasks: Vec<_> = senders
        .into_iter()
        .map(|sender| tokio::spawn(connection(sender, Arc::clone(&load), Arc::clone(&window))))
        .collect();
    let mut outcome = Outcome::default();
    let mut last = start;
    for task in tasks {
        let tally = task.await?;
        outcome.ok += tally.ok;
        outcome.errors += tally.errors;
        outcome.sent += tally.sent;
        outcome.latencies_us.extend(tally.latencies_us);
        if let Some(at) = tally.last_answer {
            last = last.max(at);
        }
    }
    outcome.elapsed = last.saturating_duration_since(start);
    outcome.latencies_us.sort_unstable();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_sorted_latencies() {
        let outcome = Outcome {
            ok: 100,
            elapsed: Duration::from_secs(2),
            latencies_us: (1..=100).map(|i| i * 1000).collect(),
            ..Outcome::default()
        };
        assert_eq!(outcome.throughput(), 50.0);
        assert_eq!(outcome.quantile_ms(0.5), 51.0);
        assert_eq!(outcome.quantile_ms(0.99), 99.0);
        assert_eq!(outcome.quantile_ms(1.0), 100.0);
    }

    #[test]
    fn empty_outcome_has_no_latency() {
        let outcome = Outcome::default();
        assert!(outcome.quantile_ms(0.5).is_nan());
        assert_eq!(outcome.throughput(), 0.0);
    }
}
