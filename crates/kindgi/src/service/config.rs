//! The service's configuration: its arguments and environment, with every
//! problem listed at once (`config-invalid`).

use std::path::PathBuf;

use kindgi_protocol::headers::is_header_token;

/// How strictly the index's required env is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvCheck {
    /// Not ready (503 `missing env`) while a required name is missing.
    Strict,
    /// Ready anyway; the names are only reported.
    Warn,
}

impl EnvCheck {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Warn => "warn",
        }
    }
}

/// Everything `serve` reads from its command line and environment.
#[derive(Debug, Clone)]
pub(crate) struct ServiceConfig {
    pub(crate) index: PathBuf,
    /// Where the index's `modulePath`s are resolved. A Rust pack's code is
    /// compiled into the binary, so it is only checked to be well-formed.
    #[allow(dead_code)]
    pub(crate) module_root: PathBuf,
    pub(crate) host: Option<String>,
    pub(crate) token: String,
    pub(crate) port: u16,
    pub(crate) max_concurrency: usize,
    /// `KINDGI_PACK_SERVICE_BODY_MEMORY_MIB`, in bytes: the memory budget
    /// of request bodies and their parsed documents.
    pub(crate) body_memory: usize,
    pub(crate) env_check: EnvCheck,
    pub(crate) env_filter: bool,
    pub(crate) tenant_id: Option<String>,
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

/// Parses `serve`'s arguments and environment.
///
/// # Errors
///
/// Every problem, each in the contract's words.
pub(crate) fn parse_config(
    args: &[String],
    env: &impl EnvSource,
) -> Result<ServiceConfig, Vec<String>> {
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
    let module_root = module_root.unwrap_or_else(|| {
        index
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
    });

    let token = env
        .get("KINDGI_PACK_SERVICE_TOKEN")
        .map(|t| t.trim().to_owned())
        .unwrap_or_default();
    if token.is_empty() {
        problems.push("KINDGI_PACK_SERVICE_TOKEN is required".to_owned());
    } else if !is_header_token(&token) {
        problems.push("KINDGI_PACK_SERVICE_TOKEN may hold only printable ASCII without spaces (it travels in an HTTP header). Use a random value such as `openssl rand -hex 32`.".to_owned());
    }

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
        None => 32,
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

    if problems.is_empty() {
        Ok(ServiceConfig {
            index,
            module_root,
            host,
            token,
            port,
            max_concurrency,
            body_memory,
            env_check,
            env_filter,
            tenant_id,
        })
    } else {
        Err(problems)
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
        let config = parse_config(&[], &env).expect("valid");
        assert_eq!(config.token, "tok");
        assert_eq!(config.port, 8080);
        assert_eq!(config.max_concurrency, 32);
        assert_eq!(config.body_memory, 256 << 20);
        assert_eq!(config.index, PathBuf::from("/app/index.json"));
        assert_eq!(config.module_root, PathBuf::from("/app"));
        assert_eq!(config.env_check, EnvCheck::Strict);
        assert!(config.env_filter);
        assert_eq!(config.tenant_id, None);
    }

    #[test]
    fn every_problem_listed() {
        let env = Env(HashMap::from([
            ("KINDGI_PACK_SERVICE_TOKEN", "has space"),
            ("PORT", "http"),
            ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "0"),
            ("KINDGI_PACK_SERVICE_BODY_MEMORY_MIB", "-5"),
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
