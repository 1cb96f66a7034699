//! Raw HTTP/1.1 over TCP, so that every way an exchange can end is told
//! apart: no connection (the request provably never left), an answer, or
//! a connection that ended without one.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The longest response head read (status line and headers).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The longest response body read (a hostile input may make a large one,
/// which a test wants to measure, not refuse).
const MAX_BODY_BYTES: usize = 1024 * 1024 * 1024;

/// An HTTP request, written out by hand.
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    path: String,
    version: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    close: bool,
}

impl Request {
    /// A request with `Host` set and `Connection: close`.
    pub fn new(method: &str, path: &str) -> Self {
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            version: "HTTP/1.1",
            headers: vec![("host".to_owned(), "127.0.0.1".to_owned())],
            body: Vec::new(),
            close: true,
        }
    }

    /// `GET path`.
    pub fn get(path: &str) -> Self {
        Self::new("GET", path)
    }

    /// `POST path`.
    pub fn post(path: &str) -> Self {
        Self::new("POST", path)
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds `kindgi-pack-token`.
    pub fn token(self, token: &str) -> Self {
        self.header("kindgi-pack-token", token)
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, body: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(body.to_string().into_bytes())
    }

    /// Sets the body (sent with `Content-Length`).
    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    /// Keeps the connection open after the answer (no `Connection: close`).
    pub fn keep_alive(mut self) -> Self {
        self.close = false;
        self
    }

    /// Sends it as HTTP/1.0, without `Host`.
    pub fn http10(mut self) -> Self {
        self.version = "HTTP/1.0";
        self.headers.retain(|(name, _)| name != "host");
        self
    }

    /// The head only: request line and headers, with `Content-Length` of
    /// the body set here.
    pub fn head_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} {}\r\n", self.method, self.path, self.version);
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        let has_length = self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            || self
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"));
        if !has_length && (!self.body.is_empty() || self.method == "POST") {
            out.push_str(&format!("content-length: {}\r\n", self.body.len()));
        }
        if self.close {
            out.push_str("connection: close\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }

    /// The whole request as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.head_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// An HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Its status code.
    pub status: u16,
    /// Its headers, names lowercase, in order.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it isn't JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How one exchange ended.
#[derive(Debug)]
pub enum Outcome {
    /// A complete answer.
    Answered(Response),
    /// No connection was made: the request never left, so it provably did
    /// not run.
    NotConnected(std::io::Error),
    /// The connection was made, but it ended (or timed out) before a
    /// complete answer: the caller can't tell whether the call ran.
    NoAnswer(String),
}

impl Outcome {
    /// The answer, if there was one.
    pub fn response(&self) -> Option<&Response> {
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
    /// When there was none.
    pub fn expect_answer(self, what: &str) -> Response {
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

/// Connects, sends `request` and reads one answer, all within `timeout`.
pub async fn exchange(addr: SocketAddr, request: &Request, timeout: Duration) -> Outcome {
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
    let mut conn = Connection::new(stream);
    match tokio::time::timeout(timeout, async {
        // A service may answer before it has read the whole request (a 413
        // from the declared length): a failed write still reads what came.
        let sent = conn.send(bytes).await;
        match conn.read_response().await {
            Ok(response) => Ok(response),
            Err(read) => Err(sent.err().unwrap_or(read)),
        }
    })
    .await
    {
        Ok(Ok(response)) => Outcome::Answered(response),
        Ok(Err(e)) => Outcome::NoAnswer(e.to_string()),
        Err(_) => Outcome::NoAnswer(format!("no answer within {timeout:?}")),
    }
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

    /// Reads one final answer, skipping interim (1xx) ones.
    ///
    /// # Errors
    ///
    /// When the connection ends before a complete answer, or the answer
    /// isn't HTTP.
    pub async fn read_response(&mut self) -> std::io::Result<Response> {
        read_response_from(&mut self.stream).await
    }

    /// Reads one answer, interim (1xx) ones included.
    ///
    /// # Errors
    ///
    /// As [`Connection::read_response`].
    pub async fn read_one(&mut self) -> std::io::Result<Response> {
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

/// Reads one final answer from `reader`, skipping interim (1xx) ones.
///
/// # Errors
///
/// When the stream ends before a complete answer, or the answer isn't
/// HTTP.
pub async fn read_response_from<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Response> {
    loop {
        let response = read_one_from(reader).await?;
        if !(100..200).contains(&response.status) {
            return Ok(response);
        }
    }
}

/// Reads one answer from `reader`, interim (1xx) ones included.
///
/// # Errors
///
/// As [`read_response_from`].
pub async fn read_one_from<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Response> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let n = (&mut *reader)
            .take((MAX_HEAD_BYTES - head.len()) as u64)
            .read_until(b'\n', &mut head)
            .await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                if head.is_empty() {
                    "the connection closed with no answer"
                } else {
                    "the connection closed mid-answer"
                },
            ));
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        if head.len() >= MAX_HEAD_BYTES {
            return Err(bad("answer head too long"));
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad("not an HTTP status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if (100..200).contains(&status) || status == 204 || status == 304 {
        // No body.
    } else if let Some(length) = get("content-length") {
        let length: usize = length.parse().map_err(|_| bad("bad content-length"))?;
        if length > MAX_BODY_BYTES {
            return Err(bad("answer body too long"));
        }
        body.resize(length, 0);
        reader.read_exact(&mut body).await?;
    } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        body = read_chunked(reader).await?;
    } else {
        (&mut *reader)
            .take(MAX_BODY_BYTES as u64)
            .read_to_end(&mut body)
            .await?;
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

async fn read_chunked<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Vec<u8>> {
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "bad chunk");
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await?;
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| bad())?;
        if size == 0 {
            let mut trailer = String::new();
            reader.read_line(&mut trailer).await?;
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(bad());
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).await?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).await?;
    }
}
