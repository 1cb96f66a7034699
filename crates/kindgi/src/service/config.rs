//! The service's configuration: [`ServiceConfig`], built by hand for
//! [`crate::serve`] or, by `<pack> serve`, from its arguments and
//! environment with every problem listed at once (`config-invalid`).

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use kindgi_protocol::headers::is_header_token;

use super::token::Token;

/// How strictly the index's required env is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvCheck {
    /// Not ready (503 `missing env`) while a required name is missing.
    Strict,
    /// Ready anyway; the names are only reported.
    Warn,
}

impl EnvCheck {
    /// The name `KINDGI_PACK_ENV_CHECK` and the `missing-env` record use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Warn => "warn",
        }
    }
}

/// What the pack service serves and how: the index, the token, the limits.
///
/// `<pack> serve` builds it from `--index`, `--module-root` and the
/// `KINDGI_PACK_*` variables; [`crate::serve`] takes one built by hand:
///
/// ```
/// use std::num::NonZeroUsize;
///
/// let token = kindgi::Token::new("4f1c0d9e2b7a").expect("a usable token");
/// let config = kindgi::ServiceConfig::new("/app/index.json", token)
///     .max_concurrency(NonZeroUsize::new(8).expect("not zero"))
///     .env_check(kindgi::EnvCheck::Warn);
/// # let _ = config;
/// ```
///
/// A service built this way leaves the process environment alone: only
/// `<pack> serve` drops the variables the pack doesn't declare
/// (`KINDGI_PACK_ENV_FILTER`), which is sound only before any thread runs.
#[derive(Debug, Clone)]
#[must_use = "a configuration does nothing until it is served"]
pub struct ServiceConfig {
    pub(crate) index: PathBuf,
    /// Where the index's `modulePath`s are resolved. A Rust pack's code is
    /// compiled into the binary, so it is only checked to be well-formed.
    #[allow(dead_code)]
    pub(crate) module_root: PathBuf,
    pub(crate) token: Token,
    pub(crate) max_concurrency: usize,
    /// `KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`, in bytes: the memory budget
    /// of request bodies and their parsed documents.
    pub(crate) body_memory: usize,
    pub(crate) env_check: EnvCheck,
    pub(crate) tenant_id: Option<String>,
    /// Whether boot drops the variables the index doesn't declare from the
    /// process environment. Only [`parse_config`] sets it, for `<pack>
    /// serve`, which boots before any thread starts: removing a variable
    /// while another thread may read the environment is unsound.
    pub(crate) env_filter: bool,
    /// How long a client may take to send a request's head.
    pub(crate) header_timeout: Duration,
}

/// How long a client may take to send a request's head, by default: from
/// the connection's opening, or from the last answer written on it.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);

impl ServiceConfig {
    /// Serves the pack index at `index` (written by `<pack> index`),
    /// checking `token` on every `/v1/*` request. The rest as `<pack>
    /// serve` defaults it: modules resolved from the index's folder, 32
    /// calls at once, a 256 MiB budget for request bodies, `strict` env
    /// check, no tenant pinned.
    pub fn new(index: impl Into<PathBuf>, token: Token) -> Self {
        let index = index.into();
        Self {
            module_root: folder_of(&index),
            index,
            token,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            body_memory: super::budget::DEFAULT_BUDGET_MIB << 20,
            env_check: EnvCheck::Strict,
            tenant_id: None,
            env_filter: false,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }

    /// Where the index's `modulePath`s are resolved (`--module-root`).
    pub fn module_root(mut self, folder: impl Into<PathBuf>) -> Self {
        self.module_root = folder.into();
        self
    }

    /// The most calls run at once; past it an invoke is answered 503
    /// `overloaded` (`KINDGI_PACK_SERVICE_MAX_CONCURRENCY`).
    pub fn max_concurrency(mut self, calls: NonZeroUsize) -> Self {
        self.max_concurrency = calls.get();
        self
    }

    /// The memory budget, in MiB, of request bodies being received and the
    /// documents parsed from them; a call past it is answered 503
    /// `overloaded` (`KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`).
    pub fn body_memory_mib(mut self, mib: NonZeroUsize) -> Self {
        self.body_memory = mib.get().saturating_mul(1 << 20);
        self
    }

    /// How strictly the index's `env.required` is enforced
    /// (`KINDGI_PACK_ENV_CHECK`).
    pub fn env_check(mut self, check: EnvCheck) -> Self {
        self.env_check = check;
        self
    }

    /// How long a client may take to send a request's head — from the
    /// connection's opening, or from the last answer written on it —
    /// before the connection is closed (default 30 s;
    /// `KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS`).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// Serves only `tenant` (`KINDGI_PACK_TENANT_ID`): a request for
    /// another is answered 421 `pack-tenant-mismatch`.
    ///
    /// # Errors
    ///
    /// [`InvalidTenantId`] if `tenant` is empty or holds a byte outside
    /// printable ASCII (it travels in an HTTP header).
    pub fn tenant_id(mut self, tenant: impl Into<String>) -> Result<Self, InvalidTenantId> {
        let tenant = tenant.into();
        if !is_header_token(&tenant) {
            return Err(InvalidTenantId);
        }
        self.tenant_id = Some(tenant);
        Ok(self)
    }
}

/// Why [`ServiceConfig::tenant_id`] refused a tenant id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidTenantId;

impl std::fmt::Display for InvalidTenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tenant id is one or more bytes of printable ASCII without spaces")
    }
}

impl std::error::Error for InvalidTenantId {}

/// Calls at once unless configured otherwise.
const DEFAULT_MAX_CONCURRENCY: usize = 32;

/// The folder of `index`, where modules are resolved by default.
fn folder_of(index: &std::path::Path) -> PathBuf {
    index
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Where `<pack> serve` listens: `--host` (all interfaces when `None`) and
/// `PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListenOn {
    pub(crate) host: Option<String>,
    pub(crate) port: u16,
}

/// The environment variables `serve` reads, by name.
pub(crate) trait EnvSource {
    fn get(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub(crate) struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
}

/// Parses `serve`'s arguments and environment: what to serve, and where.
///
/// # Errors
///
/// Every problem, each in the contract's words.
pub(crate) fn parse_config(
    args: &[String],
    env: &impl EnvSource,
) -> Result<(ServiceConfig, ListenOn), Vec<String>> {
    let mut problems = Vec::new();
    let (mut index, mut module_root, mut host) = (None, None, None);
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--index" => match iter.next() {
                Some(v) => index = Some(PathBuf::from(v)),
                None => problems.push("--index needs a path".to_owned()),
            },
            "--module-root" => match iter.next() {
                Some(v) => module_root = Some(PathBuf::from(v)),
                None => problems.push("--module-root needs a folder".to_owned()),
            },
            "--host" => match iter.next().filter(|v| !v.trim().is_empty()) {
                Some(v) => host = Some(v.clone()),
                None => problems.push("--host needs an address".to_owned()),
            },
            other => problems.push(format!("Unknown argument {other}")),
        }
    }
    let index = index
        .or_else(|| {
            env.get("KINDGI_PACK_INDEX")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from("/app/index.json"));
    let module_root = module_root.unwrap_or_else(|| folder_of(&index));

    let token = env
        .get("KINDGI_PACK_SERVICE_TOKEN")
        .map(|t| t.trim().to_owned())
        .unwrap_or_default();
    let token = if token.is_empty() {
        problems.push("KINDGI_PACK_SERVICE_TOKEN is required".to_owned());
        None
    } else if let Ok(token) = Token::new(token) {
        Some(token)
    } else {
        problems.push("KINDGI_PACK_SERVICE_TOKEN may hold only printable ASCII without spaces (it travels in an HTTP header). Use a random value such as `openssl rand -hex 32`.".to_owned());
        None
    };

    let port = match env.get("PORT") {
        None => 8080,
        Some(raw) => match raw.trim().parse::<u16>() {
            Ok(port) if raw.trim().bytes().all(|b| b.is_ascii_digit()) => port,
            _ => {
                problems.push(format!("PORT must be a port number, got \"{raw}\""));
                0
            }
        },
    };

    let max_concurrency = match env.get("KINDGI_PACK_SERVICE_MAX_CONCURRENCY") {
        None => DEFAULT_MAX_CONCURRENCY,
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if n > 0 && raw.trim().bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                problems.push(
                    "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer".to_owned(),
                );
                1
            }
        },
    };

    let body_memory = match env.get("KINDGI_PACK_SERVICE_BODY_MEMORY_MIB") {
        None => super::budget::DEFAULT_BUDGET_MIB << 20,
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if n > 0 && raw.trim().bytes().all(|b| b.is_ascii_digit()) => {
                n.saturating_mul(1 << 20)
            }
            _ => {
                problems.push(
                    "KINDGI_PACK_SERVICE_BODY_MEMORY_MIB must be a positive integer (MiB)"
                        .to_owned(),
                );
                1
            }
        },
    };

    let header_timeout = match env.get("KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS") {
        None => DEFAULT_HEADER_TIMEOUT,
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(ms) if ms > 0 && raw.trim().bytes().all(|b| b.is_ascii_digit()) => {
                Duration::from_millis(ms)
            }
            _ => {
                problems.push(
                    "KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS must be a positive integer (ms)"
                        .to_owned(),
                );
                DEFAULT_HEADER_TIMEOUT
            }
        },
    };

    let env_check = match env.get("KINDGI_PACK_ENV_CHECK").as_deref() {
        None | Some("strict") => EnvCheck::Strict,
        Some("warn") => EnvCheck::Warn,
        Some(raw) => {
            problems.push(format!(
                "KINDGI_PACK_ENV_CHECK must be `strict` or `warn`, not \"{raw}\""
            ));
            EnvCheck::Strict
        }
    };

    let env_filter = match env.get("KINDGI_PACK_ENV_FILTER").as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(raw) => {
            problems.push(format!(
                "KINDGI_PACK_ENV_FILTER must be `on` or `off`, not \"{raw}\""
            ));
            true
        }
    };

    let tenant_id = match env.get("KINDGI_PACK_TENANT_ID") {
        None => None,
        Some(raw) if is_header_token(&raw) => Some(raw),
        Some(raw) => {
            problems.push(format!(
                "KINDGI_PACK_TENANT_ID must be a tenant id (printable ASCII without spaces), got \"{}\"",
                raw.escape_debug()
            ));
            None
        }
    };

    match token {
        Some(token) if problems.is_empty() => Ok((
            ServiceConfig {
                index,
                module_root,
                token,
                max_concurrency,
                body_memory,
                env_check,
                tenant_id,
                env_filter,
                header_timeout,
            },
            ListenOn { host, port },
        )),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Env(HashMap<&'static str, &'static str>);
    impl EnvSource for Env {
        fn get(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| (*v).to_owned())
        }
    }

    #[test]
    fn defaults() {
        let env = Env(HashMap::from([("KINDGI_PACK_SERVICE_TOKEN", " tok\n")]));
        let (config, listen) = parse_config(&[], &env).expect("valid");
        assert_eq!(config.token.expose(), "tok");
        assert_eq!(listen.port, 8080);
        assert_eq!(config.max_concurrency, 32);
        assert_eq!(config.body_memory, 256 << 20);
        assert_eq!(config.index, PathBuf::from("/app/index.json"));
        assert_eq!(config.module_root, PathBuf::from("/app"));
        assert_eq!(config.env_check, EnvCheck::Strict);
        assert!(config.env_filter);
        assert_eq!(config.header_timeout, DEFAULT_HEADER_TIMEOUT);
        assert_eq!(config.tenant_id, None);
        assert_eq!(listen.host, None);
    }

    #[test]
    fn every_problem_listed() {
        let env = Env(HashMap::from([
            ("KINDGI_PACK_SERVICE_TOKEN", "has space"),
            ("PORT", "http"),
            ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "0"),
            ("KINDGI_PACK_SERVICE_BODY_MEMORY_MIB", "-5"),
            ("KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS", "soon"),
            ("KINDGI_PACK_ENV_CHECK", "loose"),
            ("KINDGI_PACK_ENV_FILTER", "maybe"),
            ("KINDGI_PACK_TENANT_ID", ""),
        ]));
        let problems = parse_config(&["--host".to_owned()], &env).expect_err("invalid");
        assert_eq!(
            problems,
            [
                "--host needs an address",
                "KINDGI_PACK_SERVICE_TOKEN may hold only printable ASCII without spaces (it travels in an HTTP header). Use a random value such as `openssl rand -hex 32`.",
                "PORT must be a port number, got \"http\"",
                "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer",
                "KINDGI_PACK_SERVICE_BODY_MEMORY_MIB must be a positive integer (MiB)",
                "KINDGI_PACK_SERVICE_HEADER_TIMEOUT_MS must be a positive integer (ms)",
                "KINDGI_PACK_ENV_CHECK must be `strict` or `warn`, not \"loose\"",
                "KINDGI_PACK_ENV_FILTER must be `on` or `off`, not \"maybe\"",
                "KINDGI_PACK_TENANT_ID must be a tenant id (printable ASCII without spaces), got \"\"",
            ]
        );
    }

    #[test]
    fn missing_token() {
        let problems = parse_config(&[], &Env(HashMap::new())).expect_err("invalid");
        assert_eq!(problems, ["KINDGI_PACK_SERVICE_TOKEN is required"]);
    }
}
