//! The HTTP ceiling (target 3): a bare hyper server that answers every
//! request with the same bytes — a pack service's answer, captured by the
//! runner — reading the request body to its end but parsing none of it.
//!
//! It runs on the same tokio runtime and hyper server as the pack service
//! (hyper-util's auto builder: HTTP/1.1, and h2c told apart by its
//! preface; an HTTP/1.1 answer written in one buffer), with the same
//! socket options, so the gap between the two is what the pack service
//! does per call.
//!
//! ```text
//! PORT=0 bare-hyper --host 127.0.0.1 --body-file answer.json \
//!     --header 'content-type: application/json'
//! ```
//!
//! Once listening it writes `{"kind":"listening","port":N}` on stderr, like
//! a pack service. With `--record ID`, it also writes a `call` record line
//! for every answer to stderr, as a pack service must (the contract's
//! fields, its time read per call, `ID` the tool's id), as the SDK's log
//! writes it: into a bounded buffer that a writer thread empties every
//! millisecond, the time's text made once a millisecond. That is the
//! honest ceiling of a pack service, which bare hyper alone is not.

use std::cell::RefCell;
use std::convert::Infallible;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

/// The fixed answer: its headers (hyper adds `content-length` and `date`)
/// and body, and where its `call` records go (`--record`).
#[derive(Debug)]
struct Answer {
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    records: Option<Records>,
}

/// The `call` records of the answers: the tool id they name, and the lines
/// waiting for the thread that writes them.
#[derive(Debug)]
struct Records {
    id: String,
    lines: Arc<Mutex<Vec<u8>>>,
}

/// The most bytes of lines waiting: past it a record is dropped, as the
/// SDK's log drops rather than grows while stderr takes nothing.
const MAX_QUEUED_BYTES: usize = 4 * 1024 * 1024;
/// The writer's pause after each write, as the SDK's: under load a write
/// takes every line of the last millisecond.
const WRITE_PACE: Duration = Duration::from_millis(1);

impl Records {
    /// Records naming tool `id`, written by a thread of their own.
    fn start(id: String) -> Self {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let taken = Arc::clone(&lines);
        std::thread::spawn(move || write_records(&taken));
        Self { id, lines }
    }

    /// Queues the record of a call answered now: its time read and
    /// formatted as the SDK formats it (the text made once a millisecond),
    /// the line written straight into the queue.
    fn call(&self) {
        let id = &self.id;
        with_now_text(|time| {
            let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
            if lines.len() < MAX_QUEUED_BYTES {
                let _ = write!(
                    lines,
                    r#"{{"time":"{time}","level":"info","severity":"INFO","subsystem":"pack","message":"tool {id} ok 0ms","tenantId":"t","runId":"r","toolId":"{id}","event":"call","kind":"call","id":"{id}","target":"tool","outcome":"ok","durationMs":0,"packId":"bench","artifactVersion":"1"}}"#
                );
                lines.push(b'\n');
            }
        });
    }
}

/// Calls `write` with the wall clock's time now as a record writes it,
/// formatted again only when its millisecond changes (per thread).
fn with_now_text(write: impl FnOnce(&str)) {
    thread_local! {
        static TEXT: RefCell<(Duration, String)> = const { RefCell::new((Duration::MAX, String::new())) };
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let millisecond = Duration::new(now.as_secs(), now.subsec_millis() * 1_000_000);
    TEXT.with(|text| {
        let mut text = text.borrow_mut();
        if text.0 != millisecond {
            text.1 = (time::OffsetDateTime::UNIX_EPOCH + millisecond)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            text.0 = millisecond;
        }
        write(&text.1);
    });
}

/// Writes the queued lines to stderr every [`WRITE_PACE`], all that
/// waited in one write.
fn write_records(lines: &Mutex<Vec<u8>>) {
    let mut batch = Vec::new();
    let mut stderr = std::io::stderr();
    loop {
        std::mem::swap(
            &mut batch,
            &mut lines.lock().unwrap_or_else(PoisonError::into_inner),
        );
        if !batch.is_empty() {
            let _ = stderr.write_all(&batch);
            batch.clear();
        }
        std::thread::sleep(WRITE_PACE);
    }
}

/// Reads `--host H`, `--body-file F`, every `--header 'name: value'` and
/// `--record ID`.
fn parse_args(args: &[String]) -> Result<(String, Answer)> {
    let mut host = "127.0.0.1".to_owned();
    let mut body = None;
    let mut headers = Vec::new();
    let mut records = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--host" => host.clone_from(value),
            "--body-file" => {
                let bytes = std::fs::read(value).with_context(|| format!("reading {value}"))?;
                body = Some(Bytes::from(bytes));
            }
            "--header" => {
                let (name, val) = value
                    .split_once(':')
                    .with_context(|| format!("--header {value}: expected 'name: value'"))?;
                headers.push((
                    HeaderName::from_bytes(name.trim().as_bytes())?,
                    HeaderValue::from_str(val.trim())?,
                ));
            }
            "--record" => records = Some(value.clone()),
            other => bail!("unknown argument {other}"),
        }
    }
    let body = body.context("--body-file is required")?;
    let records = records.map(Records::start);
    Ok((
        host,
        Answer {
            headers,
            body,
            records,
        },
    ))
}

/// Reads the request body to its end, unparsed, and answers the fixed bytes.
async fn answer(
    answer: &'static Answer,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut body = request.into_body();
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            break;
        }
    }
    if let Some(records) = &answer.records {
        records.call();
    }
    let mut response = Response::new(Full::new(answer.body.clone()));
    for (name, value) in &answer.headers {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    Ok(response)
}

async fn serve(host: String, port: u16, answer_with: &'static Answer) -> Result<()> {
    let listener = TcpListener::bind((host.as_str(), port)).await?;
    let port = listener.local_addr()?.port();
    eprintln!(r#"{{"kind":"listening","port":{port}}}"#);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(answer_with, request));
            // As the pack service writes an HTTP/1.1 answer: in one buffer.
            let mut server = auto::Builder::new(TokioExecutor::new());
            server.http1().writev(false);
            let _ = server.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (host, answer_with) = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("bare-hyper: {e:#}");
            return ExitCode::from(2);
        }
    };
    let port = match std::env::var("PORT").ok().map(|p| p.parse::<u16>()) {
        None => 0,
        Some(Ok(port)) => port,
        Some(Err(e)) => {
            eprintln!("bare-hyper: PORT: {e}");
            return ExitCode::from(2);
        }
    };
    // Lives as long as the process; every connection borrows it.
    let answer_with: &'static Answer = Box::leak(Box::new(answer_with));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bare-hyper: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(host, port, answer_with)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bare-hyper: {e:#}");
            ExitCode::FAILURE
        }
    }
}
