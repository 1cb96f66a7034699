//! The HTTP ceiling (target 3): a bare hyper server that answers every
//! request with the same bytes — a pack service's answer, captured by the
//! runner — reading the request body to its end but parsing none of it.
//!
//! It runs on the same tokio runtime and hyper server as the pack service
//! (hyper-util's auto builder: HTTP/1.1, and h2c told apart by its
//! preface), with the same socket options, so the gap between the two is
//! what the pack service does per call.
//!
//! ```text
//! PORT=0 bare-hyper --host 127.0.0.1 --body-file answer.json \
//!     --header 'content-type: application/json'
//! ```
//!
//! Once listening it writes `{"kind":"listening","port":N}` on stderr, like
//! a pack service. With `--record ID`, it also writes a `call` record line
//! for every answer to stderr, as a pack service must (the contract's
//! fields, its time read per call, `ID` the tool's id), through a bounded
//! queue and a writer thread as the SDK's log does: the honest ceiling of
//! a pack service, which bare hyper alone is not.

use std::convert::Infallible;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

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

/// The `call` records of the answers: the tool id they name, and the queue
/// to the thread that writes them.
#[derive(Debug)]
struct Records {
    id: String,
    queue: SyncSender<String>,
}

impl Records {
    /// Records naming tool `id`, written by a thread of their own.
    fn start(id: String) -> Self {
        let (queue, lines) = sync_channel(8192);
        std::thread::spawn(move || write_records(&lines));
        Self { id, queue }
    }

    /// Queues the record of a call answered now; dropped when the queue is
    /// full, as the SDK's log drops.
    fn call(&self) {
        let time = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let id = &self.id;
        let line = format!(
            r#"{{"time":"{time}","level":"info","severity":"INFO","subsystem":"pack","message":"tool {id} ok 0ms","tenantId":"t","runId":"r","toolId":"{id}","event":"call","kind":"call","id":"{id}","target":"tool","outcome":"ok","durationMs":0,"packId":"bench","artifactVersion":"1"}}"#
        );
        let _ = self.queue.try_send(line);
    }
}

/// Writes every queued line to stderr, flushing whenever the queue is
/// empty.
fn write_records(lines: &Receiver<String>) {
    let mut out = std::io::BufWriter::new(std::io::stderr());
    let Ok(mut line) = lines.recv() else {
        return;
    };
    loop {
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        line = match lines.try_recv() {
            Ok(next) => next,
            Err(TryRecvError::Empty) => {
                let _ = out.flush();
                match lines.recv() {
                    Ok(next) => next,
                    Err(_) => return,
                }
            }
            Err(TryRecvError::Disconnected) => return,
        };
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
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
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
