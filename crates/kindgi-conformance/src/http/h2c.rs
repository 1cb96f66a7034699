//! The same requests over HTTP/2 cleartext with prior knowledge (h2c), on
//! hyper's HTTP/2 client.
//!
//! An [`HttpRequest`] becomes one HTTP/2 stream: its method, its path (with
//! `http` and its `host` header, else the address, as `:authority`), its
//! other headers, and its body — [`RequestBody::Full`] with its
//! `content-length`, [`RequestBody::Chunked`] as `DATA` frames of 64 KiB
//! with no length, the nearest HTTP/2 has to a chunked body. An answer is
//! read into the same [`HttpResponse`], and every way an exchange ends is
//! told apart with the same [`Outcome`] as the HTTP/1.1 client's.
//!
//! What only HTTP/1.1 can say is refused before anything is sent, so that
//! a request never goes out as something it isn't: HTTP/1.0, and a
//! `transfer-encoding` (or any other connection-specific header, which
//! HTTP/2 forbids) set by hand. A `content-length` set by hand is sent as
//! it is: HTTP/2 has the header, and a service must check it against the
//! `DATA` it gets.
//!
//! [`exchange`] opens a connection for one request, as the HTTP/1.1
//! client's `Connection: close` does; an [`H2Connection`] carries several
//! requests, each on a stream of its own, at once. A caller going away
//! mid-call is a stream reset (`RST_STREAM` with `CANCEL`, what an HTTP/2
//! client does when it drops a call) on a connection that stays open
//! ([`send_then_reset`]).

use std::convert::Infallible;
use std::error::Error;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::client::conn::http2::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use super::request::CHUNK_BYTES;
use super::response::MAX_BODY_BYTES;
use super::{HttpRequest, HttpResponse, Outcome, RequestBody};

/// A request body as hyper's client sends it.
type Body = BoxBody<Bytes, Infallible>;

/// Headers that say something about one HTTP/1.1 connection; RFC 9113
/// §8.2.2 forbids them in HTTP/2 (`te` is let through only as `trailers`).
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Sends `request` to `addr` over h2c and reads the answer, within the
/// request's timeout. As [`super::send`], which says the same over
/// HTTP/1.1.
///
/// # Errors
///
/// What went wrong, as text: no connection, a request HTTP/2 can't carry,
/// a reset stream or connection, or the request's timeout.
pub async fn send(addr: SocketAddr, request: &HttpRequest) -> Result<HttpResponse, String> {
    let what = format!("{} {}", request.method(), request.path());
    match exchange(addr, request, request.time_limit()).await {
        Outcome::Answered(response) => Ok(response),
        Outcome::NotConnected(e) if e.kind() == io::ErrorKind::InvalidInput => {
            Err(format!("{what}: {e}"))
        }
        Outcome::NotConnected(e) => Err(format!("{what}: cannot connect to {addr} (h2c): {e}")),
        Outcome::NoAnswer(why) => Err(format!("{what}: {why}")),
    }
}

/// Opens an h2c connection to `addr`, sends `request` on one stream and
/// reads its final answer: the connection within `timeout`, and the answer
/// within `timeout` of it; then closes the connection.
///
/// A request HTTP/2 can't carry (see the module's comment) is
/// [`Outcome::NotConnected`]: it never left.
pub async fn exchange(addr: SocketAddr, request: &HttpRequest, timeout: Duration) -> Outcome {
    let request = match to_hyper(request, addr) {
        Ok(request) => request,
        Err(why) => return Outcome::NotConnected(io::Error::new(io::ErrorKind::InvalidInput, why)),
    };
    let connection = match tokio::time::timeout(timeout, H2Connection::open(addr)).await {
        Ok(Ok(connection)) => connection,
        Ok(Err(e)) => return Outcome::NotConnected(e),
        Err(_) => {
            return Outcome::NotConnected(io::Error::new(
                io::ErrorKind::TimedOut,
                "connect timed out",
            ));
        }
    };
    connection.exchange_hyper(request, timeout).await
}

/// Sends `request` to `addr` on a new h2c connection, waits `after`, then
/// resets its stream (`RST_STREAM`, `CANCEL`) without reading the answer:
/// the caller going away mid-call, as an HTTP/2 client does. The
/// connection stays open; it is returned, and closes when dropped.
///
/// # Errors
///
/// When the service can't be reached, the request can't be sent over
/// HTTP/2, or the call ends (answered, or its stream or connection broken)
/// before `after`.
pub async fn send_then_reset(
    addr: SocketAddr,
    request: &HttpRequest,
    after: Duration,
) -> Result<H2Connection, String> {
    let request = to_hyper(request, addr)?;
    let connection = H2Connection::open(addr)
        .await
        .map_err(|e| format!("cannot connect to {addr} (h2c): {e}"))?;
    let mut sender = connection.sender.clone();
    let mut call = Box::pin(sender.send_request(request));
    tokio::select! {
        () = tokio::time::sleep(after) => {}
        ended = &mut call => {
            return Err(match ended {
                Ok(response) => format!(
                    "expected no answer within {} ms, got status {}",
                    after.as_millis(),
                    response.status().as_u16()
                ),
                Err(e) => format!("the request could not be sent: {}", describe(&e)),
            });
        }
    }
    // Dropping the call's future is what resets its stream.
    drop(call);
    Ok(connection)
}

/// One open h2c connection; each [`H2Connection::exchange`] is a stream of
/// its own, and several may run at once (`&self`). Dropping it closes the
/// connection at once (the socket is shut down both ways), streams in
/// flight included.
#[derive(Debug)]
pub struct H2Connection {
    addr: SocketAddr,
    sender: SendRequest<Body>,
    /// The same socket, to shut down when this is dropped: hyper's own
    /// tasks hold the one they read and write until their streams end.
    socket: std::net::TcpStream,
    driver: JoinHandle<()>,
}

impl Drop for H2Connection {
    fn drop(&mut self) {
        let _ = self.socket.shutdown(Shutdown::Both);
        self.driver.abort();
    }
}

impl H2Connection {
    /// Connects to `addr` and opens HTTP/2 on it with the connection
    /// preface (prior knowledge: no upgrade).
    ///
    /// # Errors
    ///
    /// When the connection can't be made, or HTTP/2 can't start on it.
    pub async fn open(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let stream = stream.into_std()?;
        let socket = stream.try_clone()?;
        let stream = TcpStream::from_std(stream)?;
        let (sender, connection) = http2::Builder::new(TokioExecutor::new())
            .handshake::<_, Body>(TokioIo::new(stream))
            .await
            .map_err(|e| {
                io::Error::other(format!("the HTTP/2 handshake failed: {}", describe(&e)))
            })?;
        let driver = tokio::spawn(async move {
            // How it ended (the peer's GOAWAY, a broken connection) is
            // what the streams in flight see; nothing is left to tell.
            let _ = connection.await;
        });
        Ok(Self {
            addr,
            sender,
            socket,
            driver,
        })
    }

    /// Sends `request` on a new stream and reads its final answer within
    /// `timeout`.
    pub async fn exchange(&self, request: &HttpRequest, timeout: Duration) -> Outcome {
        match to_hyper(request, self.addr) {
            Ok(request) => self.exchange_hyper(request, timeout).await,
            Err(why) => Outcome::NotConnected(io::Error::new(io::ErrorKind::InvalidInput, why)),
        }
    }

    /// Whether the connection has ended: the peer closed it, or sent
    /// `GOAWAY` and its last stream ended.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    async fn exchange_hyper(&self, request: Request<Body>, timeout: Duration) -> Outcome {
        let mut sender = self.sender.clone();
        let answer = async move {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| describe(&e))?;
            read(response).await
        };
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(response)) => Outcome::Answered(response),
            Ok(Err(why)) => Outcome::NoAnswer(why),
            Err(_) => Outcome::NoAnswer(format!("no answer within {} ms", timeout.as_millis())),
        }
    }
}

/// `request` as hyper's HTTP/2 client sends it to `addr`, or why HTTP/2
/// can't carry it.
fn to_hyper(request: &HttpRequest, addr: SocketAddr) -> Result<Request<Body>, String> {
    if request.is_http10() {
        return Err("HTTP/1.0 can't be sent over HTTP/2".to_owned());
    }
    let mut authority = None;
    let mut builder = Request::builder().method(request.method());
    for (name, value) in request.headers() {
        if name.eq_ignore_ascii_case("host") {
            authority.get_or_insert_with(|| value.clone());
            continue;
        }
        let forbidden = CONNECTION_SPECIFIC
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
            || (name.eq_ignore_ascii_case("te") && !value.eq_ignore_ascii_case("trailers"));
        if forbidden {
            return Err(format!(
                "the header {name:?} is HTTP/1.1's own; HTTP/2 forbids it"
            ));
        }
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("the header name {name:?}: {e}"))?;
        let value = HeaderValue::from_bytes(value.as_bytes())
            .map_err(|e| format!("the value of {name}: {e}"))?;
        builder = builder.header(name, value);
    }
    let authority = authority.unwrap_or_else(|| addr.to_string());
    let uri: Uri = format!("http://{authority}{}", request.path())
        .parse()
        .map_err(|e| format!("the path {:?}: {e}", request.path()))?;
    let body: Body = match request.payload() {
        RequestBody::None => Empty::new().boxed(),
        RequestBody::Full(bytes) => Full::new(Bytes::from(bytes.clone())).boxed(),
        RequestBody::Chunked(bytes) => {
            let bytes = Bytes::from(bytes.clone());
            let frames: Vec<Result<Frame<Bytes>, Infallible>> = (0..bytes.len())
                .step_by(CHUNK_BYTES)
                .map(|at| {
                    Ok(Frame::data(
                        bytes.slice(at..bytes.len().min(at + CHUNK_BYTES)),
                    ))
                })
                .collect();
            StreamBody::new(futures::stream::iter(frames)).boxed()
        }
    };
    builder
        .uri(uri)
        .body(body)
        .map_err(|e| format!("the request can't be made: {e}"))
}

/// Reads `response` whole, as an [`HttpResponse`].
async fn read(response: Response<Incoming>) -> Result<HttpResponse, String> {
    let (head, body) = response.into_parts();
    let body = Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
        .map_err(|e| format!("the stream broke in the answer's body: {}", describe(&*e)))?
        .to_bytes()
        .to_vec();
    let headers = head
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    Ok(HttpResponse {
        status: head.status.as_u16(),
        headers,
        body,
    })
}

/// An error with every cause under it: `a: b: c`.
fn describe(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use hyper::service::service_fn;
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    use super::*;

    /// A small h2c server (HTTP/2 only): `/echo` answers what it got,
    /// `/refuse` answers 413 without reading the body, `/hang` never
    /// answers and says when its call is dropped.
    struct Server {
        addr: SocketAddr,
        accepted: Arc<AtomicUsize>,
        ended: Arc<AtomicUsize>,
        dropped: mpsc::UnboundedReceiver<()>,
    }

    /// Says when the call holding it is dropped.
    struct OnDrop(mpsc::UnboundedSender<()>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    async fn answer(
        request: Request<Incoming>,
        dropped: mpsc::UnboundedSender<()>,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        let reply = |status: u16, body: Value| {
            Response::builder()
                .status(status)
                .header("retry-after", "1")
                .body(Full::new(Bytes::from(body.to_string())))
                .expect("a response")
        };
        match request.uri().path() {
            "/echo" => {
                let (head, mut body) = request.into_parts();
                let (mut bytes, mut frames) = (Vec::new(), 0);
                while let Some(Ok(frame)) = body.frame().await {
                    if let Ok(data) = frame.into_data() {
                        frames += 1;
                        bytes.extend_from_slice(&data);
                    }
                }
                let header = |name: &str| {
                    head.headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                Ok(reply(
                    200,
                    json!({
                        "version": format!("{:?}", head.version),
                        "method": head.method.as_str(),
                        "path": head.uri.path(),
                        "authority": head.uri.authority().map(|a| a.as_str().to_owned()),
                        "host": header("host"),
                        "probe": header("x-probe"),
                        "contentLength": header("content-length"),
                        "body": String::from_utf8_lossy(&bytes),
                        "length": bytes.len(),
                        "frames": frames,
                    }),
                ))
            }
            "/refuse" => Ok(reply(413, json!({"error": "Request body too large"}))),
            _ => {
                let _guard = OnDrop(dropped);
                std::future::pending::<()>().await;
                Ok(reply(500, json!({})))
            }
        }
    }

    async fn server() -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (accepted, ended) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (tell, dropped) = mpsc::unbounded_channel();
        let (counted, closed) = (Arc::clone(&accepted), Arc::clone(&ended));
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let (tell, closed) = (tell.clone(), Arc::clone(&closed));
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(request, tell.clone()));
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                    closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Server {
            addr,
            accepted,
            ended,
            dropped,
        }
    }

    const SOON: Duration = Duration::from_secs(5);

    async fn echo(addr: SocketAddr, request: &HttpRequest) -> Value {
        exchange(addr, request, SOON)
            .await
            .expect_answer("echo")
            .json()
            .expect("JSON")
    }

    #[tokio::test]
    async fn a_full_body_goes_with_its_length_and_the_answer_comes_back_whole() {
        let server = server().await;
        let request = HttpRequest::post("/echo")
            .header("x-probe", "p1")
            .body(b"abc".to_vec());
        let answer = exchange(server.addr, &request, SOON)
            .await
            .expect_answer("echo");
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("retry-after"), Some("1"));
        let got = answer.json().expect("JSON");
        assert_eq!(got["version"], "HTTP/2.0");
        assert_eq!(got["method"], "POST");
        assert_eq!(got["path"], "/echo");
        assert_eq!(got["authority"], "127.0.0.1", "the host header's value");
        assert_eq!(got["host"], Value::Null, "no host header beside :authority");
        assert_eq!(got["probe"], "p1");
        assert_eq!(got["contentLength"], "3");
        assert_eq!(got["body"], "abc");
        assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_post_without_a_body_says_length_0_and_a_get_says_none() {
        let server = server().await;
        let post = echo(server.addr, &HttpRequest::post("/echo")).await;
        assert_eq!(
            (&post["contentLength"], &post["length"]),
            (&json!("0"), &json!(0))
        );
        let get = echo(server.addr, &HttpRequest::get("/echo")).await;
        assert_eq!(
            (&get["method"], &get["contentLength"]),
            (&json!("GET"), &Value::Null)
        );
    }

    #[tokio::test]
    async fn a_chunked_body_goes_as_data_frames_without_a_length() {
        let server = server().await;
        let bytes: Vec<u8> = (0..200 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
        let request = HttpRequest::post("/echo").body(RequestBody::Chunked(bytes.clone()));
        let got = echo(server.addr, &request).await;
        assert_eq!(got["contentLength"], Value::Null);
        assert_eq!(got["length"], bytes.len());
        assert_eq!(got["body"].as_str().map(str::as_bytes), Some(&bytes[..]));
        assert!(got["frames"].as_u64() > Some(1), "{}", got["frames"]);
    }

    #[tokio::test]
    async fn a_length_set_by_hand_is_sent_as_it_is() {
        let server = server().await;
        let request = HttpRequest::post("/echo")
            .header("content-length", "3")
            .body(b"abc".to_vec());
        assert_eq!(echo(server.addr, &request).await["contentLength"], "3");
    }

    #[tokio::test]
    async fn an_answer_before_the_body_is_sent_is_read() {
        let server = server().await;
        let request = HttpRequest::post("/refuse").body(vec![b'x'; 4 * 1024 * 1024]);
        let answer = send(server.addr, &request).await.expect("an answer");
        assert_eq!(answer.status, 413);
        assert_eq!(answer.text(), r#"{"error":"Request body too large"}"#);
    }

    #[tokio::test]
    async fn several_streams_share_one_connection() {
        let server = server().await;
        let connection = H2Connection::open(server.addr).await.expect("open");
        let requests: Vec<HttpRequest> = (0..3)
            .map(|i| HttpRequest::post("/echo").body(format!("call {i}").into_bytes()))
            .collect();
        let outcomes =
            futures::future::join_all(requests.iter().map(|r| connection.exchange(r, SOON))).await;
        let bodies: Vec<Value> = outcomes
            .into_iter()
            .map(|o| o.expect_answer("echo").json().expect("JSON")["body"].clone())
            .collect();
        assert_eq!(bodies, [json!("call 0"), json!("call 1"), json!("call 2")]);
        assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
        assert!(!connection.is_closed());
    }

    #[tokio::test]
    async fn a_reset_ends_the_call_and_leaves_the_connection_open() {
        let mut server = server().await;
        let connection = send_then_reset(
            server.addr,
            &HttpRequest::post("/hang").body(b"{}".to_vec()),
            Duration::from_millis(100),
        )
        .await
        .expect("sent");
        tokio::time::timeout(SOON, server.dropped.recv())
            .await
            .expect("the server drops the call when its stream is reset");
        assert_eq!(
            server.ended.load(Ordering::SeqCst),
            0,
            "the connection is open"
        );
        assert!(!connection.is_closed());
        let again = connection
            .exchange(&HttpRequest::get("/echo"), SOON)
            .await
            .expect_answer("the same connection");
        assert_eq!(again.status, 200);
        assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
        drop(connection);
        let deadline = tokio::time::Instant::now() + SOON;
        while server.ended.load(Ordering::SeqCst) == 0 {
            assert!(tokio::time::Instant::now() < deadline, "dropped, it closes");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn an_answer_the_stream_never_gets_is_no_answer() {
        let server = server().await;
        let outcome = exchange(
            server.addr,
            &HttpRequest::get("/hang"),
            Duration::from_millis(200),
        )
        .await;
        assert!(
            matches!(&outcome, Outcome::NoAnswer(why) if why == "no answer within 200 ms"),
            "{outcome}"
        );
    }

    #[tokio::test]
    async fn what_http2_cannot_say_never_leaves() {
        let server = server().await;
        for (request, why) in [
            (
                HttpRequest::get("/echo").http10(),
                "HTTP/1.0 can't be sent over HTTP/2",
            ),
            (
                HttpRequest::post("/echo").header("transfer-encoding", "chunked"),
                "the header \"transfer-encoding\" is HTTP/1.1's own; HTTP/2 forbids it",
            ),
            (
                HttpRequest::get("/echo").header("Connection", "keep-alive"),
                "the header \"Connection\" is HTTP/1.1's own; HTTP/2 forbids it",
            ),
        ] {
            let outcome = exchange(server.addr, &request, SOON).await;
            assert!(
                matches!(&outcome, Outcome::NotConnected(e) if e.to_string() == why),
                "{outcome}"
            );
            assert_eq!(
                send(server.addr, &request).await,
                Err(format!("{} /echo: {why}", request.method()))
            );
        }
        assert_eq!(server.accepted.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_refused_connection_is_not_connected() {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            probe.local_addr().expect("addr").port()
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let outcome = exchange(addr, &HttpRequest::get("/"), SOON).await;
        assert!(matches!(outcome, Outcome::NotConnected(_)), "{outcome}");
        let err = send(addr, &HttpRequest::get("/x"))
            .await
            .expect_err("refused");
        assert!(
            err.starts_with(&format!("GET /x: cannot connect to {addr} (h2c): ")),
            "{err}"
        );
    }
}
