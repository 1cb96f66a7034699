//! `<pack> serve`: the pack service as a process. It reads its arguments
//! and environment, makes the changes to the whole process that only its
//! owner may make, and serves with the same two halves as
//! [`crate::serve`] — boot, then the server — with the process-wide steps
//! that must come between them:
//!
//! 1. no other thread may run yet (a `#[tokio::main]` is refused): steps
//!    two and four change the process environment;
//! 2. the log's settings, then the configuration and the collector's
//!    (`config-invalid`), then the token and the collector's headers leave
//!    the process environment;
//! 3. the open-files limit is raised, malloc told to give large blocks back;
//! 4. boot (`boot-failed`), which with `KINDGI_PACK_ENV_FILTER` on drops
//!    the variables the pack doesn't declare — still single-threaded;
//! 5. then the threads: the log writer, the `tracing` subscriber, the
//!    panic hook, the telemetry's exporters, the async runtime;
//! 6. listen on `--host`/`PORT` (`boot-failed`), serve until SIGTERM.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};

use super::boot::{self, boot};
use super::config::{ListenOn, ProcessEnv, parse_config};
use super::connections::MAX_CONNECTIONS;
use super::{limits, process_env, server};
use crate::Pack;
use crate::log::{Level, Logger, Record};
use crate::telemetry::{OtelSettings, PackFacts, Telemetry, is_credential_var, is_otel_var};

/// Runs `serve` with the arguments after it.
pub(crate) fn run(pack: Pack, args: &[String]) -> ExitCode {
    if let Some(problem) = process_env::threads_problem() {
        eprintln!("error: {problem}");
        return ExitCode::from(2);
    }
    let logger = match Logger::from_env() {
        Ok(logger) => Arc::new(logger),
        Err((problem, logger)) => {
            log_config_invalid(&logger, &problem, vec![problem.clone()]);
            return ExitCode::FAILURE;
        }
    };
    let (config, listen_on) = match parse_config(args, &ProcessEnv) {
        Ok(parsed) => parsed,
        Err(problems) => {
            log_config_invalid(
                &logger,
                "The pack service configuration is invalid",
                problems,
            );
            return ExitCode::FAILURE;
        }
    };
    // The collector's settings, read now; its headers are credentials the
    // pack's code has no use for, taken out of the environment as the
    // token is (the other `OTEL_*` variables stay: the env filter keeps
    // them for the pack's code).
    let otel_vars = otel_vars();
    let otel = match OtelSettings::from_vars(&otel_vars) {
        Ok(otel) => otel,
        Err(problems) => {
            log_config_invalid(
                &logger,
                "The pack service configuration is invalid",
                problems,
            );
            return ExitCode::FAILURE;
        }
    };
    process_env::remove_vars(["KINDGI_PACK_SERVICE_TOKEN"]);
    process_env::remove_vars(
        otel_vars
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(|name| is_credential_var(name)),
    );
    let open_files = limits::raise_open_files();
    // One malloc arena per async worker (tokio starts one per core).
    let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    process_env::return_large_blocks(workers);
    let state = match boot(&pack, &config, &logger) {
        Ok(state) => state,
        Err(problems) => {
            boot::log_failed(&logger, problems);
            return ExitCode::FAILURE;
        }
    };
    logger.start_writer();
    let mut state = state;
    let pack = PackFacts {
        pack_id: &state.invoker.index.pack_id,
        artifact_version: &state.invoker.index.artifact_version,
    };
    match Telemetry::start(otel.as_ref(), pack, &logger) {
        Ok(telemetry) => state.invoker.telemetry = telemetry,
        Err(problem) => {
            boot::log_failed(&logger, vec![problem]);
            logger.flush();
            return ExitCode::FAILURE;
        }
    }
    crate::log_events::install(
        Arc::clone(&logger),
        &state.invoker.index.pack_id,
        &state.invoker.index.artifact_version,
        state.invoker.telemetry.tracing_layer(),
    );
    install_panic_hook(Arc::clone(&logger));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("kindgi-worker")
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            boot::log_failed(
                &logger,
                vec![format!("Cannot start the async runtime: {e}")],
            );
            logger.flush();
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        let listener = match listen(&listen_on).await {
            Ok(listener) => listener,
            Err(problem) => {
                boot::log_failed(&logger, vec![problem]);
                return ExitCode::FAILURE;
            }
        };
        server::run(
            Arc::new(state),
            listener,
            open_files,
            super::shutdown_signal(),
        )
        .await;
        ExitCode::SUCCESS
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
    logger.flush();
    code
}

/// The `config-invalid` record: `message` (the log's own setting, named,
/// when that is what is wrong, as the reference services say it), with
/// every problem.
fn log_config_invalid(logger: &Logger, message: &str, problems: Vec<String>) {
    logger.log(
        Record::lifecycle(Level::Error, "config-invalid", message).field("problems", problems),
    );
}

/// The standard OpenTelemetry variables of the process ([`OtelSettings`]).
fn otel_vars() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| is_otel_var(name))
        .collect()
}

/// Listens where `--host` and `PORT` say (all interfaces by default).
async fn listen(on: &ListenOn) -> Result<TcpListener, String> {
    let host = on.host.clone().unwrap_or_else(|| "0.0.0.0".to_owned());
    bind(&host, on.port)
        .await
        .map_err(|e| format!("Cannot listen on {host}:{}: {e}", on.port))
}

/// Listens on `host:port` with a listen backlog as deep as the connection
/// cap, so a burst of new connections waits in the kernel rather than for
/// a SYN retransmit.
async fn bind(host: &str, port: u16) -> std::io::Result<TcpListener> {
    let mut last_error = None;
    for address in tokio::net::lookup_host((host, port)).await? {
        let socket = if address.is_ipv4() {
            TcpSocket::new_v4()
        } else {
            TcpSocket::new_v6()
        };
        let listening = socket.and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(address)?;
            socket.listen(MAX_CONNECTIONS as u32)
        });
        match listening {
            Ok(listener) => return Ok(listener),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "no address to listen on",
        )
    }))
}

/// Logs every panic as a record instead of the default message: a pack
/// handler's panic also becomes its call's `handler-throw`, and a panic in
/// the service itself a 500.
fn install_panic_hook(logger: Arc<Logger>) {
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_owned());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        logger.log(
            Record::lifecycle(Level::Error, "panic", format!("Panicked: {message}"))
                .field("location", location)
                .field(
                    "thread",
                    std::thread::current()
                        .name()
                        .unwrap_or("unnamed")
                        .to_owned(),
                ),
        );
    }));
}
