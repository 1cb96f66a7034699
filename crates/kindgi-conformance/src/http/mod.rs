//! A small HTTP/1.1 client over a raw TCP stream.
//!
//! The suite needs what ordinary clients hide: a body sent chunked with no
//! `Content-Length`, a body past the service's limit whose answer arrives
//! before it is all sent, a connection closed in the middle of a call,
//! framing that lies, HTTP/1.0, several requests on one connection. So it
//! writes requests itself ([`HttpRequest`]), one connection each
//! (`Connection: close`) unless a request asks to keep it alive, and reads
//! answers itself ([`HttpResponse`]).
//!
//! Every way an exchange can end is told apart ([`exchange`] and its
//! [`Outcome`]): no connection (the request provably never left), an
//! answer, or a connection that ended without one. [`send`] says the same
//! as text, for a report.
//!
//! [`h2c`] sends the same requests over HTTP/2 cleartext with prior
//! knowledge and answers with the same values; a run of the suite speaks
//! one or the other ([`Transport`]).

pub mod h2c;
mod request;
mod response;
mod transport;

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

pub use request::{HttpRequest, RequestBody};
pub(crate) use response::shorten;
pub use response::{HttpResponse, read_one_from, read_response_from};
pub use transport::{Hangup, Transport};

/// How one exchange ended.
#[derive(Debug)]
pub enum Outcome {
    /// A complete answer.
    Answered(HttpResponse),
    /// No connection was made: the request never left, so it provably did
    /// not run.
    NotConnected(std::io::Error),
    /// The connection was made, but it ended (or timed out) before a
    /// complete answer: the caller can't tell whether the call ran.
    NoAnswer(String),
}

impl Outcome {
    /// The answer, if there was one.
    pub fn response(&self) -> Option<&HttpResponse> {
        match self {
            Self::Answered(r) => Some(r),
            _ => None,
        }
    }

    /// The answer's status, if there was one.
    pub fn status(&self) -> Option<u16> {
        self.response().map(|r| r.status)
    }

    /// The answer.
    ///
    /// # Panics
    ///
    /// When there was none: for tests, which want one.
    pub fn expect_answer(self, what: &str) -> HttpResponse {
        match self {
            Self::Answered(r) => r,
            other => panic!("{what}: no answer: {other}"),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Answered(r) => write!(f, "{} {}", r.status, r.text()),
            Self::NotConnected(e) => write!(f, "not connected: {e}"),
            Self::NoAnswer(e) => write!(f, "no answer: {e}"),
        }
    }
}

/// Sends `request` to `addr` and reads the answer, within the request's
/// timeout. The answer may arrive before the body is all sent (a 413):
/// sending then stops, and its error, if any, is ignored.
///
/// # Errors
///
/// What went wrong, as text: no connection, a broken or malformed answer,
/// or the request's timeout.
pub async fn send(addr: SocketAddr, request: &HttpRequest) -> Result<HttpResponse, String> {
    let what = format!("{} {}", request.method(), request.path());
    match exchange(addr, request, request.time_limit()).await {
        Outcome::Answered(response) => Ok(response),
        Outcome::NotConnected(e) => Err(format!("{what}: cannot connect to {addr}: {e}")),
        Outcome::NoAnswer(why) => Err(format!("{what}: {why}")),
    }
}

/// Connects, sends `request` and reads one final answer: the connection
/// within `timeout`, and the answer within `timeout` of it.
pub async fn exchange(addr: SocketAddr, request: &HttpRequest, timeout: Duration) -> Outcome {
    exchange_bytes(addr, &request.to_bytes(), timeout).await
}

/// As [`exchange`], with the request's raw bytes.
pub async fn exchange_bytes(addr: SocketAddr, bytes: &[u8], timeout: Duration) -> Outcome {
    let stream = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return Outcome::NotConnected(e),
        Err(_) => {
            return Outcome::NotConnected(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "connect timed out",
            ));
        }
    };
    let _ = stream.set_nodelay(true);
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let write = async move {
        // Errors are ignored: a service may answer (413) and close before
        // the body is all sent. Keep the write half open until the answer
        // is read, so the service sees no early end of the request.
        let _ = writer.write_all(bytes).await;
        let _ = writer.flush().await;
        std::future::pending::<()>().await;
    };
    let answer = async {
        tokio::select! {
            answer = read_response_from(&mut reader) => answer,
            () = write => Err(std::io::Error::other("the request could not be written")),
        }
    };
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(response)) => Outcome::Answered(response),
        Ok(Err(e)) => Outcome::NoAnswer(e.to_string()),
        Err(_) => Outcome::NoAnswer(format!("no answer within {} ms", timeout.as_millis())),
    }
}

/// Sends `request`, waits `after`, then closes the connection without
/// reading the answer: the caller going away mid-call.
///
/// # Errors
///
/// When the service can't be reached or the request can't be written.
pub async fn send_then_disconnect(
    addr: SocketAddr,
    request: &HttpRequest,
    after: Duration,
) -> Result<(), String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    stream
        .write_all(&request.to_bytes())
        .await
        .map_err(|e| format!("cannot write the request: {e}"))?;
    tokio::time::sleep(after).await;
    drop(stream);
    Ok(())
}

/// One open connection: write requests, read answers in order (for
/// keep-alive and pipelining).
#[derive(Debug)]
pub struct Connection {
    stream: BufReader<TcpStream>,
}

impl Connection {
    /// Connects to `addr`.
    ///
    /// # Errors
    ///
    /// When the connection can't be made.
    pub async fn open(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        Ok(Self::new(stream))
    }

    /// Wraps a connected stream.
    pub fn new(stream: TcpStream) -> Self {
        Self {
            stream: BufReader::new(stream),
        }
    }

    /// Writes bytes and flushes.
    ///
    /// # Errors
    ///
    /// When the write fails (the peer closed or reset the connection).
    pub async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stream = self.stream.get_mut();
        stream.write_all(bytes).await?;
        stream.flush().await
    }

    /// Closes the sending side (`shutdown(SHUT_WR)`, as `nc -N` does): the
    /// answers can still be read.
    ///
    /// # Errors
    ///
    /// When the shutdown fails.
    pub async fn half_close(&mut self) -> std::io::Result<()> {
        self.stream.get_mut().shutdown().await
    }

    /// Reads one final answer, skipping interim (1xx) ones.
    ///
    /// # Errors
    ///
    /// When the connection ends before a complete answer, or the answer
    /// isn't HTTP.
    pub async fn read_response(&mut self) -> std::io::Result<HttpResponse> {
        read_response_from(&mut self.stream).await
    }

    /// Reads one answer, interim (1xx) ones included.
    ///
    /// # Errors
    ///
    /// As [`Connection::read_response`].
    pub async fn read_one(&mut self) -> std::io::Result<HttpResponse> {
        read_one_from(&mut self.stream).await
    }

    /// Whether the peer has closed the connection: a read returns end of
    /// file (or an error) within `wait`.
    pub async fn closed_within(&mut self, wait: Duration) -> bool {
        let mut byte = [0u8; 1];
        matches!(
            tokio::time::timeout(wait, self.stream.read(&mut byte)).await,
            Ok(Ok(0) | Err(_))
        )
    }

    /// The stream, to write by hand.
    pub fn stream(&mut self) -> &mut TcpStream {
        self.stream.get_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_an_answer_by_content_length() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut buf = [0_u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nRetry-After: 1\r\n\r\n{}",
                )
                .await;
        });
        let answer = send(addr, &HttpRequest::get("/nope"))
            .await
            .expect("answer");
        assert_eq!(answer.status, 404);
        assert_eq!(answer.header("retry-after"), Some("1"));
        assert_eq!(answer.body, b"{}");
    }

    #[tokio::test]
    async fn a_refused_connection_is_not_connected() {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            probe.local_addr().expect("addr").port()
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let outcome = exchange(addr, &HttpRequest::get("/"), Duration::from_secs(5)).await;
        assert!(matches!(outcome, Outcome::NotConnected(_)), "{outcome}");
    }
}
