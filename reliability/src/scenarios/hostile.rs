//! Hostile HTTP that takes long: huge bodies streamed, bodies and headers
//! that trickle, idle connections by the thousand.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::http::{Connection, Request, Response};
use crate::service::PackService;

/// What streaming a huge body found.
#[derive(Debug, Clone, Default)]
pub struct HugeBodyReport {
    /// The answer, if one came.
    pub status: Option<u16>,
    /// Its body.
    pub body: String,
    /// Bytes written before the service answered or closed.
    pub sent_bytes: u64,
    /// How long until the answer.
    pub took: Duration,
    /// The service's peak resident memory before, in KiB.
    pub peak_before_kib: u64,
    /// The service's peak resident memory after, in KiB.
    pub peak_after_kib: u64,
}

impl HugeBodyReport {
    /// How much the service's peak resident memory grew, in KiB.
    pub fn growth_kib(&self) -> u64 {
        self.peak_after_kib.saturating_sub(self.peak_before_kib)
    }
}

/// Streams a body of `total` bytes to `/v1/invoke` (chunked, or with a
/// `Content-Length` of `total`), reading the answer as it comes: the
/// writer stops as soon as the service answers or closes.
pub async fn stream_huge_body(service: &PackService, total: u64, chunked: bool) -> HugeBodyReport {
    let peak_before_kib = service.peak_rss_kib();
    let mut head = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json");
    head = if chunked {
        head.header("transfer-encoding", "chunked")
    } else {
        head.header("content-length", &total.to_string())
    };
    let stream = match TcpStream::connect(service.addr()).await {
        Ok(stream) => stream,
        Err(_) => return HugeBodyReport::default(),
    };
    let (read, mut write) = stream.into_split();
    let started = Instant::now();
    let reader = tokio::spawn(async move {
        let mut conn = ReadHalfConnection::new(read);
        conn.read_response().await
    });
    let mut sent = 0u64;
    // A JSON string that never ends: `{"v":2,"x":"aaaa…`.
    let chunk = vec![b'a'; 64 * 1024];
    let mut ok = write.write_all(&head.head_bytes()).await.is_ok();
    if ok {
        let prefix: &[u8] = br#"{"v":2,"x":""#;
        let framed = if chunked {
            [
                format!("{:x}\r\n", prefix.len()).as_bytes(),
                prefix,
                b"\r\n",
            ]
            .concat()
        } else {
            prefix.to_vec()
        };
        ok = write.write_all(&framed).await.is_ok();
    }
    while ok
        && sent < total
        && !reader.is_finished()
        && started.elapsed() < Duration::from_secs(120)
    {
        let n = chunk
            .len()
            .min(usize::try_from(total - sent).unwrap_or(chunk.len()));
        let written = if chunked {
            let mut framed = format!("{n:x}\r\n").into_bytes();
            framed.extend_from_slice(&chunk[..n]);
            framed.extend_from_slice(b"\r\n");
            write.write_all(&framed).await
        } else {
            write.write_all(&chunk[..n]).await
        };
        ok = written.is_ok();
        if ok {
            sent += n as u64;
        }
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), reader).await;
    let took = started.elapsed();
    drop(write);
    let (status, body) = match answer {
        Ok(Ok(Ok(response))) => (Some(response.status), response.text()),
        _ => (None, String::new()),
    };
    // Let the service free what it held before its peak is read.
    tokio::time::sleep(Duration::from_millis(100)).await;
    HugeBodyReport {
        status,
        body,
        sent_bytes: sent,
        took,
        peak_before_kib,
        peak_after_kib: service.peak_rss_kib(),
    }
}

/// Reads answers from the read half of a split stream.
#[derive(Debug)]
struct ReadHalfConnection {
    inner: tokio::io::BufReader<tokio::net::tcp::OwnedReadHalf>,
}

impl ReadHalfConnection {
    fn new(read: tokio::net::tcp::OwnedReadHalf) -> Self {
        Self {
            inner: tokio::io::BufReader::new(read),
        }
    }

    async fn read_response(&mut self) -> std::io::Result<Response> {
        crate::http::read_response_from(&mut self.inner).await
    }
}

/// What a slow client found.
#[derive(Debug, Clone, Default)]
pub struct SlowClientReport {
    /// The answer, if one came before the connection closed.
    pub status: Option<u16>,
    /// Its body.
    pub body: String,
    /// When the service closed the connection (or answered), after the
    /// first byte was sent; `None` when it was still open at the limit.
    pub closed_after: Option<Duration>,
}

/// Sends a request head, then its body one byte every `every`, until the
/// service answers or closes, or `limit` passes.
pub async fn trickle_body(
    service: &PackService,
    every: Duration,
    limit: Duration,
) -> SlowClientReport {
    let head = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .header("content-length", "1000000");
    trickle(service.addr(), head.head_bytes(), b"{", every, limit).await
}

/// Sends a request line, then one more header line every `every`, never
/// ending the head, until the service closes or `limit` passes.
pub async fn trickle_headers(
    addr: SocketAddr,
    every: Duration,
    limit: Duration,
) -> SlowClientReport {
    trickle(
        addr,
        b"POST /v1/invoke HTTP/1.1\r\nhost: 127.0.0.1\r\n".to_vec(),
        b"x-slow: 1\r\n",
        every,
        limit,
    )
    .await
}

async fn trickle(
    addr: SocketAddr,
    first: Vec<u8>,
    then: &[u8],
    every: Duration,
    limit: Duration,
) -> SlowClientReport {
    // Timed from before the connection opens: the service's clock starts
    // when it accepts, which may come before this task resumes.
    let started = Instant::now();
    let Ok(mut conn) = Connection::open(addr).await else {
        return SlowClientReport::default();
    };
    if conn.send(&first).await.is_err() {
        return SlowClientReport {
            closed_after: Some(started.elapsed()),
            ..SlowClientReport::default()
        };
    }
    let mut ticks = 0u32;
    while started.elapsed() < limit {
        // Wait for the next tick, watching for an answer or a close.
        let answered = tokio::time::timeout(every, conn.read_one()).await;
        match answered {
            Ok(Ok(response)) => {
                return SlowClientReport {
                    status: Some(response.status),
                    body: response.text(),
                    closed_after: Some(started.elapsed()),
                };
            }
            Ok(Err(_)) => {
                return SlowClientReport {
                    closed_after: Some(started.elapsed()),
                    ..SlowClientReport::default()
                };
            }
            Err(_) => {}
        }
        ticks += 1;
        if ticks > 100_000 || conn.send(then).await.is_err() {
            break;
        }
    }
    let closed = conn.closed_within(Duration::from_millis(10)).await;
    SlowClientReport {
        closed_after: closed.then(|| started.elapsed()),
        ..SlowClientReport::default()
    }
}

/// What holding many idle connections found.
#[derive(Debug, Clone, Default)]
pub struct IdleReport {
    /// Connections opened.
    pub opened: usize,
    /// The service's open files before.
    pub fds_before: usize,
    /// The service's open files with the connections open.
    pub fds_during: usize,
    /// The service's resident memory before, in KiB.
    pub rss_before_kib: u64,
    /// The service's resident memory with the connections open, in KiB.
    pub rss_during_kib: u64,
    /// `/healthz` on a new connection while they were open: its status,
    /// and how long it took (`None`: no answer within the wait).
    pub healthz_during: Option<(u16, Duration)>,
    /// How many the service had closed by the end of the wait.
    pub closed_by_service: usize,
    /// When the last of them was closed by the service, after they were
    /// opened.
    pub all_closed_after: Option<Duration>,
    /// The service's open files after the wait.
    pub fds_after: usize,
}

/// Opens `count` connections that send nothing, then checks the service
/// still answers on a new one (waiting up to `healthz_wait`), and waits
/// up to `close_wait` for the service to close the idle ones.
pub async fn idle_connections(
    service: &PackService,
    count: usize,
    healthz_wait: Duration,
    close_wait: Duration,
) -> IdleReport {
    let addr = service.addr();
    let mut report = IdleReport {
        fds_before: service.open_fds(),
        rss_before_kib: service.rss_kib(),
        ..IdleReport::default()
    };
    let mut conns = Vec::with_capacity(count);
    let opened_at = Instant::now();
    for _ in 0..count {
        match tokio::time::timeout(Duration::from_secs(5), Connection::open(addr)).await {
            Ok(Ok(conn)) => conns.push(conn),
            _ => break,
        }
    }
    report.opened = conns.len();
    tokio::time::sleep(Duration::from_millis(300)).await;
    report.fds_during = service.open_fds();
    report.rss_during_kib = service.rss_kib();
    let started = Instant::now();
    report.healthz_during = crate::http::exchange(addr, &Request::get("/healthz"), healthz_wait)
        .await
        .response()
        .map(|r| (r.status, started.elapsed()));
    // Wait for the service to close them.
    let mut closed = vec![false; conns.len()];
    while opened_at.elapsed() < close_wait && closed.iter().any(|c| !c) {
        for (conn, done) in conns.iter_mut().zip(closed.iter_mut()) {
            if !*done && conn.closed_within(Duration::from_millis(1)).await {
                *done = true;
            }
        }
        if closed.iter().all(|c| *c) {
            report.all_closed_after = Some(opened_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    report.closed_by_service = closed.iter().filter(|c| **c).count();
    drop(conns);
    tokio::time::sleep(Duration::from_millis(300)).await;
    report.fds_after = service.open_fds();
    report
}
