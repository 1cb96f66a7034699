//! A small HTTP/1.1 client over a raw TCP stream.
//!
//! The suite needs what ordinary clients hide: a body sent chunked with no
//! `Content-Length`, a body past the service's limit whose answer arrives
//! before it is all sent, a connection closed in the middle of a call. So it
//! writes requests itself, one connection each (`Connection: close`).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most bytes of a response head read.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The size of each chunk of a chunked body.
const CHUNK_BYTES: usize = 64 * 1024;

/// How a request's body is sent.
#[derive(Debug, Clone, Default)]
pub enum RequestBody {
    /// No body.
    #[default]
    None,
    /// The bytes, with `Content-Length`.
    Full(Vec<u8>),
    /// The bytes in chunks, `Transfer-Encoding: chunked`, no `Content-Length`.
    Chunked(Vec<u8>),
}

/// One request.
///
/// ```
/// use kindgi_conformance::http::HttpRequest;
/// let request = HttpRequest::post("/v1/invoke")
///     .header("kindgi-pack-token", "t0k3n")
///     .json(&serde_json::json!({"v": 2}));
/// assert_eq!(request.path(), "/v1/invoke");
/// ```
#[derive(Debug, Clone)]
pub struct HttpRequest {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: RequestBody,
    timeout: Duration,
}

impl HttpRequest {
    /// A request with `method` to `path`, no headers and no body.
    pub fn new(method: &str, path: &str) -> Self {
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            headers: Vec::new(),
            body: RequestBody::None,
            timeout: Duration::from_secs(30),
        }
    }

    /// A `GET` of `path`.
    pub fn get(path: &str) -> Self {
        Self::new("GET", path)
    }

    /// A `POST` to `path`.
    pub fn post(path: &str) -> Self {
        Self::new("POST", path)
    }

    /// The request's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sends `value` as the body, with `Content-Type: application/json`.
    #[must_use]
    pub fn json(self, value: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(RequestBody::Full(value.to_string().into_bytes()))
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: RequestBody) -> Self {
        self.body = body;
        self
    }

    /// How long the whole exchange may take (30 s unless set).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn head(&self) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n",
            self.method, self.path
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match &self.body {
            RequestBody::None => {
                if self.method == "POST" {
                    head.push_str("content-length: 0\r\n");
                }
            }
            RequestBody::Full(bytes) => {
                head.push_str(&format!("content-length: {}\r\n", bytes.len()))
            }
            RequestBody::Chunked(_) => head.push_str("transfer-encoding: chunked\r\n"),
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// The whole request as bytes: head and body.
    fn bytes(&self) -> Vec<u8> {
        let mut out = self.head();
        match &self.body {
            RequestBody::None => {}
            RequestBody::Full(bytes) => out.extend_from_slice(bytes),
            RequestBody::Chunked(bytes) => {
                for chunk in bytes.chunks(CHUNK_BYTES) {
                    out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
        out
    }
}

/// One answer.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    ///
    /// # Errors
    ///
    /// The difference when the body isn't JSON.
    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| {
            format!(
                "expected a JSON body, got {} ({e})",
                shorten(&String::from_utf8_lossy(&self.body), 300)
            )
        })
    }

    /// The body as text, lossily.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `text`, cut to about `max` characters.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Sends `request` to `addr` and reads the answer. The answer may arrive
/// before the body is all sent (a 413): sending then stops, and its error,
/// if any, is ignored.
///
/// # Errors
///
/// What went wrong, as text: no connection, a broken or malformed answer,
/// or the request's timeout.
pub async fn send(addr: SocketAddr, request: &HttpRequest) -> Result<HttpResponse, String> {
    let what = format!("{} {}", request.method, request.path);
    tokio::time::timeout(request.timeout, exchange(addr, request))
        .await
        .map_err(|_| {
            format!(
                "{what}: no answer within {} ms",
                request.timeout.as_millis()
            )
        })?
        .map_err(|e| format!("{what}: {e}"))
}

async fn exchange(addr: SocketAddr, request: &HttpRequest) -> Result<HttpResponse, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let bytes = request.bytes();
    let write = async move {
        // Errors are ignored: a service may answer (413) and close before
        // the body is all sent. Keep the write half open until the answer
        // is read, so the service sees no early end of the request.
        let _ = writer.write_all(&bytes).await;
        let _ = writer.flush().await;
        std::future::pending::<()>().await;
    };
    tokio::select! {
        answer = read_response(&mut reader) => answer,
        () = write => Err("the request could not be written".to_owned()),
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
        .write_all(&request.bytes())
        .await
        .map_err(|e| format!("cannot write the request: {e}"))?;
    tokio::time::sleep(after).await;
    drop(stream);
    Ok(())
}

async fn read_response(reader: &mut (impl AsyncRead + Unpin)) -> Result<HttpResponse, String> {
    let mut buffer = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err("the answer's head is over 64 KiB".to_owned());
        }
        let mut chunk = [0_u8; 8192];
        let n = reader
            .read(&mut chunk)
            .await
            .map_err(|e| format!("the connection broke before an answer: {e}"))?;
        if n == 0 {
            return Err("the connection closed without an answer".to_owned());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut rest = buffer[head_end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("malformed status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let chunked =
        get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = get("content-length").and_then(|v| v.parse::<usize>().ok());
    let body = if chunked {
        read_to_end(reader, &mut rest).await?;
        dechunk(&rest)?
    } else if let Some(length) = length {
        while rest.len() < length {
            let mut chunk = vec![0_u8; (length - rest.len()).min(65536)];
            let n = reader
                .read(&mut chunk)
                .await
                .map_err(|e| format!("the connection broke in the answer's body: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the answer's body ended after {} of {length} bytes",
                    rest.len()
                ));
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(length);
        rest
    } else {
        read_to_end(reader, &mut rest).await?;
        rest
    };
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

async fn read_to_end(
    reader: &mut (impl AsyncRead + Unpin),
    into: &mut Vec<u8>,
) -> Result<(), String> {
    reader
        .read_to_end(into)
        .await
        .map(|_| ())
        .map_err(|e| format!("the connection broke in the answer's body: {e}"))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = find(raw, b"\r\n").ok_or("a malformed chunked body")?;
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("a malformed chunk size {size_text:?}"))?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if raw.len() < size + 2 {
            return Err("a chunked body cut short".to_owned());
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dechunks() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n").expect("valid"),
            b"abcde"
        );
        assert!(dechunk(b"zz\r\n").is_err());
    }

    #[test]
    fn writes_chunked_bodies_without_length() {
        let request = HttpRequest::post("/x").body(RequestBody::Chunked(vec![b'a'; 3]));
        let text = String::from_utf8(request.bytes()).expect("ascii");
        assert!(text.contains("transfer-encoding: chunked\r\n"));
        assert!(!text.contains("content-length"));
        assert!(text.ends_with("\r\n\r\n3\r\naaa\r\n0\r\n\r\n"));
    }

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
}
