//! A scripted HTTP/1.1 server: the fake pack service, file store or app a
//! test stands up on `127.0.0.1`, answering each request as the test says
//! and keeping every request it read.
//!
//! One request a connection: each answer says `Connection: close`, and the
//! connection is closed after it.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A reply that comes later, once the future is done.
pub type LaterReply = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// One request the server read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRequest {
    /// The head as sent: request line and headers, without the empty line
    /// that ends it.
    pub head: String,
    /// The headers by name, lowercased (a repeated one: its last value).
    pub headers: BTreeMap<String, String>,
    /// The body (`Content-Length` bytes of it).
    pub body: Vec<u8>,
}

impl SeenRequest {
    /// The request line (`POST /v1/invoke HTTP/1.1`).
    pub fn line(&self) -> &str {
        self.head.lines().next().unwrap_or_default()
    }

    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The body as JSON, `Null` when it isn't JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What the server does with one request.
pub enum Reply {
    /// Answers with this status, these headers and this body
    /// (`Content-Length` and `Connection: close` are added).
    Answer {
        /// The status code.
        status: u16,
        /// Headers, in order.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// Closes the connection without an answer.
    Drop,
    /// Holds the connection without answering for so long, then closes it.
    Hang(Duration),
    /// Replies what the future comes to, once it is done.
    Later(LaterReply),
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Answer {
                status,
                headers,
                body,
            } => f
                .debug_struct("Answer")
                .field("status", status)
                .field("headers", headers)
                .field("body", &String::from_utf8_lossy(body))
                .finish(),
            Self::Drop => f.write_str("Drop"),
            Self::Hang(wait) => f.debug_tuple("Hang").field(wait).finish(),
            Self::Later(_) => f.write_str("Later(..)"),
        }
    }
}

impl Reply {
    /// A JSON answer: `status`, `Content-Type: application/json`, `body`.
    pub fn json(status: u16, body: &Value) -> Self {
        Self::json_text(status, &body.to_string())
    }

    /// A JSON answer whose body is `text` as written.
    pub fn json_text(status: u16, text: &str) -> Self {
        Self::Answer {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: text.as_bytes().to_vec(),
        }
    }

    /// The answer with one more header (no change to the other replies).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Self::Answer { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// `reply` once `until` is done.
    pub fn after(until: impl Future<Output = ()> + Send + 'static, reply: Self) -> Self {
        Self::Later(Box::pin(async move {
            until.await;
            reply
        }))
    }
}

/// How the server picks each request's reply.
type Handler = Arc<dyn Fn(&SeenRequest) -> Reply + Send + Sync>;

/// Every request read so far.
type Seen = Arc<Mutex<Vec<SeenRequest>>>;

/// A running scripted server. It serves until the test's runtime ends.
#[derive(Debug, Clone)]
pub struct ScriptedServer {
    addr: SocketAddr,
    seen: Seen,
}

impl ScriptedServer {
    /// Serves on a free port of `127.0.0.1`, each request answered with
    /// `reply(request)`.
    ///
    /// # Panics
    ///
    /// When no port can be bound.
    pub async fn start(reply: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        Self::serve(listener, reply)
    }

    /// Serves on a free port, the requests answered with `replies` in the
    /// order they come, and dropped once they have all been used.
    ///
    /// # Panics
    ///
    /// As [`ScriptedServer::start`].
    pub async fn replying(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        Self::serve_replying(listener, replies)
    }

    /// As [`ScriptedServer::replying`], on `listener`.
    ///
    /// # Panics
    ///
    /// When the listener has no local address.
    pub fn serve_replying(listener: TcpListener, replies: Vec<Reply>) -> Self {
        let replies = Mutex::new(VecDeque::from(replies));
        Self::serve(listener, move |_| {
            replies
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop_front()
                .unwrap_or(Reply::Drop)
        })
    }

    /// Serves on `listener`, each request answered with `reply(request)`.
    ///
    /// # Panics
    ///
    /// When the listener has no local address.
    pub fn serve(
        listener: TcpListener,
        reply: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let addr = listener.local_addr().expect("the listener's address");
        let seen = Seen::default();
        let handler: Handler = Arc::new(reply);
        tokio::spawn(accept(listener, handler, Arc::clone(&seen)));
        Self { addr, seen }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request read so far, in the order read.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many requests it has read.
    pub fn count(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Takes connections until the listener fails, each on a task of its own.
async fn accept(listener: TcpListener, handler: Handler, seen: Seen) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(answer(stream, Arc::clone(&handler), Arc::clone(&seen)));
    }
}

/// Reads one request, keeps it, and replies as the handler says.
async fn answer(mut stream: TcpStream, handler: Handler, seen: Seen) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let mut reply = handler(&request);
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(request);
    loop {
        match reply {
            Reply::Answer {
                status,
                headers,
                body,
            } => {
                let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
                for (name, value) in headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                out.push_str(&format!(
                    "content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                ));
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
                return;
            }
            Reply::Drop => return,
            Reply::Hang(wait) => {
                tokio::time::sleep(wait).await;
                return;
            }
            Reply::Later(later) => reply = later.await,
        }
    }
}

/// The reason phrase of a status (clients read only the code).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

/// Reads a request's head and its `Content-Length` body; `None` when the
/// connection ends first.
async fn read_request(stream: &mut TcpStream) -> Option<SeenRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let headers: BTreeMap<String, String> = head
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(SeenRequest {
        head,
        headers,
        body: buf[body_start..body_start + length].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{self, HttpRequest};

    #[tokio::test]
    async fn answers_in_order_and_keeps_what_it_read() {
        let server = ScriptedServer::replying(vec![
            Reply::json_text(503, r#"{"error":"busy"}"#).header("retry-after", "0"),
            Reply::json(200, &serde_json::json!({"ok": true})),
        ])
        .await;
        let request = HttpRequest::post("/v1/invoke").json(&serde_json::json!({"n": 1}));
        let busy = http::send(server.addr(), &request).await.expect("answer");
        assert_eq!((busy.status, busy.header("retry-after")), (503, Some("0")));
        let ok = http::send(server.addr(), &request).await.expect("answer");
        assert_eq!(ok.json_or_null(), serde_json::json!({"ok": true}));
        assert!(
            http::send(server.addr(), &request).await.is_err(),
            "dropped"
        );
        let seen = server.seen();
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[0].line(), "POST /v1/invoke HTTP/1.1");
        assert_eq!(seen[0].header("Content-Type"), Some("application/json"));
        assert_eq!(seen[0].json(), serde_json::json!({"n": 1}));
    }
}
