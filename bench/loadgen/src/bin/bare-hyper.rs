//! The HTTP ceiling (target 3): a bare hyper server that answers every
//! request with the same bytes — a pack service's answer, captured by the
//! runner — reading the request body to its end but parsing none of it.
//!
//! It runs on the same tokio runtime and hyper HTTP/1.1 server as the pack
//! service, with the same socket options, so the gap between the two is
//! what the pack service does per call.
//!
//! ```text
//! PORT=0 bare-hyper --host 127.0.0.1 --body-file answer.json \
//!     --header 'content-type: application/json'
//! ```
//!
//! Once listening it writes `{"kind":"listening","port":N}` on stderr, like
//! a pack service.

use std::convert::Infallible;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The fixed answer: its headers (hyper adds `content-length` and `date`)
/// and body.
#[derive(Debug)]
struct Answer {
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

/// Reads `--host H`, `--body-file F` and every `--header 'name: value'`.
fn parse_args(args: &[String]) -> Result<(String, Answer)> {
    let mut host = "127.0.0.1".to_owned();
    let mut body = None;
    let mut headers = Vec::new();
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
            other => bail!("unknown argument {other}"),
        }
    }
    let body = body.context("--body-file is required")?;
    Ok((host, Answer { headers, body }))
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
            let _ = http1::Builder::new()
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
