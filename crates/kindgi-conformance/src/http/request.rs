//! Requests written out by hand, byte for byte.

use std::time::Duration;

use serde_json::Value;

/// The size of each chunk of a chunked body.
pub(crate) const CHUNK_BYTES: usize = 64 * 1024;

/// How long a whole exchange may take unless the request says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How a request's body is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RequestBody {
    /// No body.
    #[default]
    None,
    /// The bytes, with `Content-Length`.
    Full(Vec<u8>),
    /// The bytes in chunks, `Transfer-Encoding: chunked`, no `Content-Length`.
    Chunked(Vec<u8>),
}

impl From<Vec<u8>> for RequestBody {
    /// The bytes with `Content-Length`; no bytes, no body.
    fn from(bytes: Vec<u8>) -> Self {
        if bytes.is_empty() {
            Self::None
        } else {
            Self::Full(bytes)
        }
    }
}

/// One request.
///
/// Unless told otherwise it is HTTP/1.1 with `Host: 127.0.0.1` and
/// `Connection: close`, and says how long its body is: `Content-Length`
/// (0 for a `POST` without a body) or `Transfer-Encoding: chunked`. A
/// framing header set by hand (`content-length` or `transfer-encoding`)
/// replaces that, so that a test can send framing that lies.
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
    version: &'static str,
    headers: Vec<(String, String)>,
    body: RequestBody,
    close: bool,
    timeout: Duration,
}

impl HttpRequest {
    /// A request with `method` to `path`, no headers and no body.
    pub fn new(method: &str, path: &str) -> Self {
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            version: "HTTP/1.1",
            headers: vec![("host".to_owned(), "127.0.0.1".to_owned())],
            body: RequestBody::None,
            close: true,
            timeout: DEFAULT_TIMEOUT,
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

    /// The request's method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// How long the whole exchange may take.
    pub fn time_limit(&self) -> Duration {
        self.timeout
    }

    /// The headers, in the order added (`host` first, unless HTTP/1.0);
    /// the framing headers computed for the body are not among them.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The body, and how HTTP/1.1 frames it.
    pub fn payload(&self) -> &RequestBody {
        &self.body
    }

    /// Whether it is sent as HTTP/1.0 ([`HttpRequest::http10`]).
    pub fn is_http10(&self) -> bool {
        self.version == "HTTP/1.0"
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds `kindgi-pack-token`.
    #[must_use]
    pub fn token(self, token: &str) -> Self {
        self.header("kindgi-pack-token", token)
    }

    /// Sends `value` as the body, with `Content-Type: application/json`.
    #[must_use]
    pub fn json(self, value: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(RequestBody::Full(value.to_string().into_bytes()))
    }

    /// Sets the body: a [`RequestBody`], or bytes (sent with
    /// `Content-Length`).
    #[must_use]
    pub fn body(mut self, body: impl Into<RequestBody>) -> Self {
        self.body = body.into();
        self
    }

    /// How long the whole exchange may take (30 s unless set).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Keeps the connection open after the answer (no `Connection: close`).
    #[must_use]
    pub fn keep_alive(mut self) -> Self {
        self.close = false;
        self
    }

    /// Sends it as HTTP/1.0, without `Host`.
    #[must_use]
    pub fn http10(mut self) -> Self {
        self.version = "HTTP/1.0";
        self.headers.retain(|(name, _)| name != "host");
        self
    }

    /// The head only: request line and headers, the framing of the body
    /// set here included.
    pub fn head_bytes(&self) -> Vec<u8> {
        let mut head = format!("{} {} {}\r\n", self.method, self.path, self.version);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let framed_by_hand = self.headers.iter().any(|(name, _)| {
            name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
        });
        if !framed_by_hand {
            match &self.body {
                RequestBody::None if self.method == "POST" => {
                    head.push_str("content-length: 0\r\n");
                }
                RequestBody::None => {}
                RequestBody::Full(bytes) => {
                    head.push_str(&format!("content-length: {}\r\n", bytes.len()));
                }
                RequestBody::Chunked(_) => head.push_str("transfer-encoding: chunked\r\n"),
            }
        }
        if self.close {
            head.push_str("connection: close\r\n");
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// The whole request as bytes: head and body.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.head_bytes();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_chunked_bodies_without_length() {
        let request = HttpRequest::post("/x").body(RequestBody::Chunked(vec![b'a'; 3]));
        let text = String::from_utf8(request.to_bytes()).expect("ascii");
        assert!(text.contains("transfer-encoding: chunked\r\n"));
        assert!(!text.contains("content-length"));
        assert!(text.ends_with("\r\n\r\n3\r\naaa\r\n0\r\n\r\n"));
    }

    #[test]
    fn framing_set_by_hand_replaces_the_computed_one() {
        let request = HttpRequest::post("/x")
            .header("content-length", "99")
            .body(b"abc".to_vec());
        let text = String::from_utf8(request.to_bytes()).expect("ascii");
        assert_eq!(text.matches("content-length").count(), 1, "{text}");
        assert!(text.ends_with("content-length: 99\r\nconnection: close\r\n\r\nabc"));
    }

    #[test]
    fn an_empty_get_says_no_length_and_http10_has_no_host() {
        let text = String::from_utf8(
            HttpRequest::get("/healthz")
                .http10()
                .keep_alive()
                .to_bytes(),
        )
        .expect("ascii");
        assert_eq!(text, "GET /healthz HTTP/1.0\r\n\r\n");
    }
}
