//! The pack service: it runs the pack's code for a Kindgi runtime over pack
//! protocol v2, as `<pack> serve` ([`command`]) or through [`serve`].
//!
//! The path of a call, module by module, each entered once and in this
//! order; each step decides, and only the last answers (a refusal is a
//! [`refusal::Refusal`] until then):
//!
//! 1. connection — [`server`] accepts connections; [`connections`] gives
//!    each a slot (at most 4096, fewer under a low open-files limit:
//!    [`limits`]), closes the slowest silent one to make room, and serves
//!    it with hyper ([`transport`]), whose header read timeout closes a
//!    late head;
//! 2. [`routes`] — health, readiness, info or invoke, else 404 or 405;
//! 3. [`admission`] — token, tenant, draining, missing env, the
//!    concurrency cap, content type, then the body within its size limit,
//!    time and memory budget ([`budget`]); where its work runs is decided
//!    here, once ([`placement`]); then the body decoded, and a call for
//!    another tenant refused;
//! 4. [`decode`] — the one seam from bytes to a call;
//! 5. [`tool`] or [`check`] — the call run, its `call` record logged
//!    ([`call`]);
//! 6. [`answer`] — the HTTP answer, made once.
//!
//! [`drain`] is what the calls and the stopping server share. Before any
//! of it, [`boot`] reads the index and readies every tool and check;
//! [`config`] is what it was told, [`token`] the secret callers send.

mod admission;
mod answer;
mod boot;
mod budget;
pub(crate) mod call;
mod call_headers;
pub(crate) mod check;
mod command;
mod config;
mod connections;
pub(crate) mod decode;
mod drain;
mod env_filter;
mod half_close;
mod healthcheck;
mod idle_memory;
pub(crate) mod invoker;
mod limits;
#[cfg_attr(not(feature = "dev-front"), allow(dead_code, unreachable_pub))]
pub mod pack_http;
pub(crate) mod placement;
mod process_env;
mod refusal;
mod routes;
mod server;
mod stalls;
pub(crate) mod state;
mod token;
pub(crate) mod tool;
mod traceparent;
mod transport;

use std::fmt;
use std::sync::Arc;

use tokio::net::TcpListener;

pub(crate) use self::boot::in_memory;
pub(crate) use self::command::run;
pub use self::config::{EnvCheck, InvalidTenantId, ServiceConfig};
pub(crate) use self::healthcheck::run as healthcheck;
pub use self::token::{InvalidToken, Token};
use crate::Pack;
use crate::log::Logger;

/// Serves `pack` on `listener` as configured, until `shutdown` resolves;
/// then drains (the calls in flight get up to 8 s) and returns.
///
/// This is the pack service `<pack> serve` runs ([`Pack::run`]), for a
/// program that owns its async runtime and its listener: boot (the index,
/// every module it names, the required env, every tool and check readied),
/// then `listening`, the calls, `draining` and `stopped`. Records go to
/// stderr as `KINDGI_LOG_FORMAT` and `KINDGI_LOG_LEVEL` say; handlers'
/// `tracing` events become records too, if no global `tracing` subscriber
/// is set yet.
///
/// What only the owner of a process may do, `Pack::run` does and `serve`
/// does not: remove the token and the variables the pack doesn't declare
/// from the process environment, raise the open-files limit, tune malloc,
/// install a panic hook that logs panics as records. A handler's panic is
/// still its call's `handler-throw`.
///
/// ```no_run
/// use std::num::NonZeroUsize;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let token = kindgi::Token::new(std::env::var("PACK_TOKEN")?)?;
/// let config = kindgi::ServiceConfig::new("index.json", token)
///     .max_concurrency(NonZeroUsize::new(8).expect("not zero"));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let shutdown = async {
///     let _ = tokio::signal::ctrl_c().await;
/// };
/// kindgi::serve(kindgi::Pack::new(), config, listener, shutdown).await?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`ServeError`] when the log's settings (`KINDGI_LOG_*`) can't be
/// honoured (logged as `config-invalid`) or boot fails (logged as
/// `boot-failed`): nothing was served.
pub async fn serve(
    pack: Pack,
    config: ServiceConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let logger = match Logger::from_env() {
        Ok(logger) => Arc::new(logger),
        Err((problem, logger)) => {
            logger.log(
                crate::log::Record::lifecycle(
                    crate::log::Level::Error,
                    "config-invalid",
                    problem.clone(),
                )
                .field("problems", vec![problem.clone()]),
            );
            return Err(ServeError {
                problems: vec![problem],
            });
        }
    };
    let otel_vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| crate::telemetry::is_otel_var(name))
        .collect();
    let otel = match crate::telemetry::OtelSettings::from_vars(&otel_vars) {
        Ok(otel) => otel,
        Err(problems) => {
            logger.log(
                crate::log::Record::lifecycle(
                    crate::log::Level::Error,
                    "config-invalid",
                    "The pack service configuration is invalid",
                )
                .field("problems", problems.clone()),
            );
            return Err(ServeError { problems });
        }
    };
    let mut state = match boot::boot(&pack, &config, &logger) {
        Ok(state) => state,
        Err(problems) => {
            boot::log_failed(&logger, problems.clone());
            return Err(ServeError { problems });
        }
    };
    // Its code is in the state now.
    drop(pack);
    logger.start_writer();
    let pack = crate::telemetry::PackFacts {
        pack_id: &state.invoker.index.pack_id,
        artifact_version: &state.invoker.index.artifact_version,
    };
    match crate::telemetry::Telemetry::start(otel.as_ref(), pack, &logger) {
        Ok(telemetry) => state.invoker.telemetry = telemetry,
        Err(problem) => {
            boot::log_failed(&logger, vec![problem.clone()]);
            logger.flush();
            return Err(ServeError {
                problems: vec![problem],
            });
        }
    }
    crate::log_events::install(
        Arc::clone(&logger),
        &state.invoker.index.pack_id,
        &state.invoker.index.artifact_version,
        state.invoker.telemetry.tracing_layer(),
    );
    server::run(Arc::new(state), listener, limits::open_files(), shutdown).await;
    logger.flush();
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C (Ctrl-C alone where SIGTERM can't be
/// watched): what `<pack> serve` stops on, for [`serve`]'s `shutdown`.
///
/// ```no_run
/// # async fn example(pack: kindgi::Pack, config: kindgi::ServiceConfig) -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// kindgi::serve(pack, config, listener, kindgi::shutdown_signal()).await?;
/// # Ok(())
/// # }
/// ```
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Why [`serve`] served nothing: the problems boot found, each in the words
/// of the `boot-failed` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeError {
    problems: Vec<String>,
}

impl ServeError {
    /// Every problem of the first boot step that had any.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "The pack service failed to boot: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for ServeError {}
