//! The pack service: `<pack> serve` runs the pack's code for a Kindgi
//! runtime over pack protocol v2.

mod budget;
mod config;
mod connections;
mod env_filter;
mod http;
pub(crate) mod invoke;
mod limits;
mod process_env;
pub(crate) mod state;
mod traceparent;

use std::collections::{BTreeSet, HashMap};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kindgi_protocol::PackIndex;
use kindgi_validate::Validator;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Semaphore;

use self::config::{ProcessEnv, ServiceConfig, parse_config};
use self::connections::{Connections, MAX_CONNECTIONS};
use self::state::{CheckRuntime, ServiceState, ToolRuntime, info_body};
use crate::Pack;
use crate::log::{Level, Logger, Record};

/// How long SIGTERM waits for the calls in flight.
const DRAIN_WINDOW: Duration = Duration::from_secs(8);
/// When, after SIGTERM, the `stopped` record is written at the latest: the
/// drain window, then the answers of the calls it cut short, the backlog,
/// the settle and close windows, all within this. The process exits a
/// moment later (the runtime's shutdown, the log's flush): within 8.5 s.
const STOPPED_BY: Duration = Duration::from_millis(8_300);
/// How long, once the drain window closed, the calls it cut short get to
/// be answered `cancelled`.
const CANCEL_WINDOW: Duration = Duration::from_millis(150);
/// How long, after the drain, connections taken while draining get to read
/// their request and answer it before idle ones are closed.
const SETTLE_WINDOW: Duration = Duration::from_millis(250);
/// How long, after the drain, connections get to write their last answers.
const CLOSE_WINDOW: Duration = Duration::from_secs(1);

/// Runs `serve` with the arguments after it.
pub(crate) fn run(pack: Pack, args: &[String]) -> ExitCode {
    if let Some(problem) = process_env::threads_problem() {
        eprintln!("error: {problem}");
        return ExitCode::from(2);
    }
    let logger = Arc::new(Logger::from_env());
    let config = match parse_config(args, &ProcessEnv) {
        Ok(config) => config,
        Err(problems) => {
            logger.log(
                Record::lifecycle(
                    Level::Error,
                    "config-invalid",
                    "The pack service configuration is invalid",
                )
                .field("problems", problems),
            );
            return ExitCode::FAILURE;
        }
    };
    process_env::remove_vars(["KINDGI_PACK_SERVICE_TOKEN"]);
    let open_files = limits::raise_open_files();
    budget::return_large_blocks();
    let state = match boot(&pack, &config, &logger) {
        Ok(state) => state,
        Err(problems) => {
            logger.log(
                Record::lifecycle(
                    Level::Error,
                    "boot-failed",
                    "The pack service failed to boot",
                )
                .field("problems", problems),
            );
            return ExitCode::FAILURE;
        }
    };
    logger.start_writer();
    crate::log_events::install(
        Arc::clone(&logger),
        &state.index.pack_id,
        &state.index.artifact_version,
    );
    install_panic_hook(Arc::clone(&logger));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("kindgi-worker")
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            logger.log(
                Record::lifecycle(
                    Level::Error,
                    "boot-failed",
                    "The pack service failed to boot",
                )
                .field(
                    "problems",
                    vec![format!("Cannot start the async runtime: {e}")],
                ),
            );
            logger.flush();
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(serve(Arc::new(state), &config, open_files));
    runtime.shutdown_timeout(Duration::from_millis(100));
    logger.flush();
    code
}

/// Reads the index and readies every tool and check, in the contract's
/// boot order; returns every problem of the first step that has any.
fn boot(
    pack: &Pack,
    config: &ServiceConfig,
    logger: &Arc<Logger>,
) -> Result<ServiceState, Vec<String>> {
    let path = config.index.display();
    let bytes = std::fs::read(&config.index).map_err(|e| {
        vec![format!(
            "Cannot read the pack index: {path}: {e}. Pass its path with --index PATH (or KINDGI_PACK_INDEX); `<pack> index --output PATH` writes it"
        )]
    })?;
    let raw: Value = serde_json::from_slice(&bytes)
        .map_err(|e| vec![format!("Cannot read the pack index: {path}: {e}")])?;
    if raw.get("v") != Some(&Value::from(1)) {
        let v = raw
            .get("v")
            .map_or_else(|| "undefined".to_owned(), Value::to_string);
        return Err(vec![format!("Index envelope v{v} is not v1")]);
    }
    let index: PackIndex = serde_json::from_value(raw)
        .map_err(|e| vec![format!("Cannot read the pack index: {path}: {e}")])?;
    let index_hash = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));

    check_modules(pack, &index)?;

    let declared: Vec<String> = index
        .env
        .iter()
        .flat_map(|env| env.required.iter().chain(env.optional.iter()).cloned())
        .collect();
    if config.env_filter {
        let names = process_env::names();
        let dropped = env_filter::dropped(names.iter().map(String::as_str), &declared);
        if !dropped.is_empty() {
            process_env::remove_vars(dropped.iter().map(String::as_str));
            logger.log(
                Record::lifecycle(
                    Level::Warn,
                    "env-dropped",
                    env_filter::dropped_message(&dropped),
                )
                .field("names", dropped),
            );
        }
    }
    let missing_env: Vec<String> = index
        .env
        .iter()
        .flat_map(|env| env.required.iter())
        .filter(|name| std::env::var_os(name.as_str()).is_none_or(|v| v.is_empty()))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !missing_env.is_empty() {
        let message = if missing_env.len() == 1 {
            format!(
                "The pack's env.required name has no value: {}",
                missing_env[0]
            )
        } else {
            format!(
                "The pack's env.required names have no value: {}",
                missing_env.join(", ")
            )
        };
        logger.log(
            Record::lifecycle(Level::Warn, "missing-env", message)
                .field("check", config.env_check.as_str())
                .field("names", missing_env.clone()),
        );
    }

    let (tools, checks) = load(pack, &index)?;
    let info_body = info_body(&index, &missing_env, &index_hash);
    let mut state = ServiceState::new(index, tools, checks, info_body, Arc::clone(logger));
    state.token = config.token.clone();
    state.tenant_id = config.tenant_id.clone();
    state.env_check = config.env_check;
    state.missing_env = missing_env;
    state.capacity = Arc::new(Semaphore::new(config.max_concurrency));
    state.budget = budget::MemoryBudget::new(config.body_memory);
    state.blocking = Arc::new(Semaphore::new(
        config.max_concurrency.min(invoke::MAX_BLOCKING_HANDLERS),
    ));
    Ok(state)
}

/// Every `modulePath` / `checkModulePath` the index names must be code
/// this binary has.
fn check_modules(pack: &Pack, index: &PackIndex) -> Result<(), Vec<String>> {
    let have: BTreeSet<String> = pack
        .tools
        .iter()
        .map(|t| t.source.module_path())
        .chain(pack.guardrails.iter().map(|g| g.source.module_path()))
        .collect();
    let mut missing = Vec::new();
    let named = index
        .tools
        .iter()
        .map(|t| &t.module_path)
        .chain(index.guardrails.iter().map(|g| &g.check_module_path));
    for path in named {
        if !have.contains(path) && !missing.contains(path) {
            missing.push(path.clone());
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing
            .into_iter()
            .map(|path| format!("Missing module: {path}"))
            .collect())
    }
}

/// A service state for `index`, in memory, without a process around it:
/// what [`crate::testing`] calls tools and checks through.
pub(crate) fn in_memory_state(
    pack: &Pack,
    index: PackIndex,
    logger: Arc<Logger>,
) -> Result<ServiceState, Vec<String>> {
    let (tools, checks) = load(pack, &index)?;
    let info_body = info_body(&index, &[], "sha256:");
    Ok(ServiceState::new(index, tools, checks, info_body, logger))
}

type Loaded = (HashMap<String, ToolRuntime>, HashMap<String, CheckRuntime>);

/// Pairs each index entry with its code and compiles its schemas.
fn load(pack: &Pack, index: &PackIndex) -> Result<Loaded, Vec<String>> {
    let mut problems = Vec::new();
    let mut tools = HashMap::new();
    for entry in &index.tools {
        let handler = pack
            .tools
            .iter()
            .find(|t| t.id == entry.id)
            .and_then(|t| t.handler.clone());
        let Some(handler) = handler else {
            problems.push(format!(
                "{}: this pack binary has no handler for it",
                entry.id
            ));
            continue;
        };
        let compiled = Validator::new(&entry.input)
            .map_err(|e| format!("{}: its input schema doesn't compile: {e}", entry.id))
            .and_then(|input| {
                Validator::new(&entry.output)
                    .map(|output| (input, output))
                    .map_err(|e| format!("{}: its output schema doesn't compile: {e}", entry.id))
            });
        match compiled {
            Ok((input, output)) => {
                tools.insert(
                    entry.id.clone(),
                    ToolRuntime {
                        entry: entry.clone(),
                        handler,
                        input,
                        output,
                    },
                );
            }
            Err(problem) => problems.push(problem),
        }
    }
    let mut checks = HashMap::new();
    for entry in &index.guardrails {
        let check_id = entry.effective_check_id().to_owned();
        let evaluate = pack
            .guardrails
            .iter()
            .find(|g| g.resolved_check_id() == check_id)
            .and_then(|g| g.evaluate.clone());
        let Some(evaluate) = evaluate else {
            problems.push(format!("{check_id}: this pack binary has no check for it"));
            continue;
        };
        let config = match entry.config_schema.as_ref().map(Validator::new).transpose() {
            Ok(config) => config,
            Err(e) => {
                problems.push(format!(
                    "{check_id}: its config schema doesn't compile: {e}"
                ));
                continue;
            }
        };
        checks.insert(check_id, CheckRuntime { config, evaluate });
    }
    if problems.is_empty() {
        Ok((tools, checks))
    } else {
        Err(problems)
    }
}

async fn serve(
    state: Arc<ServiceState>,
    config: &ServiceConfig,
    open_files: Option<u64>,
) -> ExitCode {
    let host = config.host.clone().unwrap_or_else(|| "0.0.0.0".to_owned());
    let listener = match bind(&host, config.port).await {
        Ok(listener) => listener,
        Err(e) => {
            state.logger.log(
                Record::lifecycle(
                    Level::Error,
                    "boot-failed",
                    "The pack service failed to boot",
                )
                .field(
                    "problems",
                    vec![format!("Cannot listen on {host}:{}: {e}", config.port)],
                ),
            );
            return ExitCode::FAILURE;
        }
    };
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or(config.port);
    state.logger.log(
        Record::lifecycle(
            Level::Info,
            "listening",
            format!("Listening on port {port}"),
        )
        .field("port", port)
        .field("packId", state.index.pack_id.as_str())
        .field("artifactVersion", state.index.artifact_version.as_str()),
    );
    let cap = limits::connection_cap(open_files);
    if cap < MAX_CONNECTIONS {
        state.logger.log(
            Record::lifecycle(
                Level::Warn,
                "connections-capped",
                format!(
                    "Serving at most {cap} connections at once: the open-files limit is {} (raise it to {} or more for all {MAX_CONNECTIONS})",
                    open_files.unwrap_or_default(),
                    MAX_CONNECTIONS + MAX_CONNECTIONS / 3 + 1
                ),
            )
            .field("connections", cap)
            .field("openFiles", open_files.unwrap_or_default()),
        );
    }
    let connections = Connections::new(cap);
    let signal = shutdown_signal();
    tokio::pin!(signal);
    let mut drain_until: Option<tokio::time::Instant> = None;
    let mut stopped_by = tokio::time::Instant::now() + STOPPED_BY;
    // A connection taken from the listener, waiting for a slot. Kept here
    // rather than in a future of the select, so that no other branch
    // firing ever drops it.
    let mut arrived: Option<TcpStream> = None;
    loop {
        let draining = drain_until.is_some();
        let until = drain_until.unwrap_or_else(tokio::time::Instant::now);
        tokio::select! {
            () = &mut signal, if !draining => {
                state.draining.store(true, Ordering::SeqCst);
                state.logger.log(Record::lifecycle(
                    Level::Info,
                    "draining",
                    "Draining: finishing the calls in flight",
                ));
                let now = tokio::time::Instant::now();
                drain_until = Some(now + DRAIN_WINDOW);
                stopped_by = now + STOPPED_BY;
            }
            () = state.in_flight.wait_idle(), if draining => break,
            () = tokio::time::sleep_until(until), if draining => {
                // Calls still running are answered `cancelled` (reason
                // `shutdown`) before their connections close.
                state.window_closed.cancel();
                let answered = state.in_flight.wait_idle();
                let _ = tokio::time::timeout(CANCEL_WINDOW, answered).await;
                break;
            }
            accepted = listener.accept(), if arrived.is_none() => match accepted {
                Ok((stream, _)) => arrived = Some(stream),
                // Out of file descriptors, or a connection reset before it
                // was taken: back off a little.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            slot = connections.slot(), if arrived.is_some() => {
                if let (Some(stream), Some(slot)) = (arrived.take(), slot) {
                    connections.serve(stream, slot, &state);
                }
            }
        }
    }
    // Every step from here on fits in what is left before `stopped_by`.
    let left = |most: Duration| {
        most.min(stopped_by.saturating_duration_since(tokio::time::Instant::now()))
    };
    take_backlog(listener, arrived, &connections, &state, left).await;
    // Connections taken while draining close after their one answer: give
    // them a moment to read their request and answer it, so that none is
    // closed with its request unread.
    connections.settle(left(SETTLE_WINDOW)).await;
    // Connections that still have not sent a byte just close; every answer
    // is written before the process goes: connections finish the request
    // they are on, idle ones close.
    connections.close(left(CLOSE_WINDOW)).await;
    state
        .logger
        .log(Record::lifecycle(Level::Info, "stopped", "Stopped"));
    // `stopped` is the last record: what a handler still running logs from
    // here on (a blocking one's `handler-finished-late`) is not written.
    state.logger.close();
    ExitCode::SUCCESS
}

/// After the drain: serves the connection taken but not yet served and
/// those still waiting in the backlog (they get 503 `draining` and close),
/// then stops listening, so that a connection made after this is refused —
/// which a client knows never ran — instead of being reset after it sent
/// its request. The listener leaves the reactor first, so that every accept
/// asks the kernel rather than trusting a readiness the reactor may not have
/// seen yet.
async fn take_backlog(
    listener: TcpListener,
    arrived: Option<TcpStream>,
    connections: &Connections,
    state: &Arc<ServiceState>,
    left: impl Fn(Duration) -> Duration,
) {
    let listener = listener.into_std().ok();
    // Non-blocking (as tokio left it): an empty backlog ends the loop.
    let accept_now = || {
        let (stream, _) = listener.as_ref()?.accept().ok()?;
        stream
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(stream))
            .ok()
    };
    let mut next = arrived;
    for _ in 0..=connections.cap() {
        let Some(stream) = next.take().or_else(accept_now) else {
            break;
        };
        let Ok(Some(slot)) = tokio::time::timeout(left(SETTLE_WINDOW), connections.slot()).await
        else {
            break;
        };
        connections.serve(stream, slot, state);
    }
    // The listener closes here.
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

/// Resolves on SIGTERM (or Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
