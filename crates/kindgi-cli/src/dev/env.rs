//! The environment the pack process starts with: what a deployed pack
//! would have, not what `kindgi dev` inherited from the shell and cargo.
//!
//! From dev's own environment, only the variables the pack service's env
//! filter keeps (the contract's list, §5) and the ones the pack declares;
//! then the pack folder's `.env` for names not set already (as dotenv
//! does: the environment wins). The service's own variables (`PORT`,
//! `KINDGI_PACK_SERVICE_TOKEN`, …) are set by [`super::child`] on top.

use std::ffi::OsString;

/// Names the env filter keeps whatever the pack declares (CONTRACT §5).
const KEPT_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "HOSTNAME",
    "USER",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "PWD",
    "SHLVL",
    "_",
    "__CF_USER_TEXT_ENCODING",
    "NODE_ENV",
    "NODE_VERSION",
    "YARN_VERSION",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "JAVA_HOME",
    "JAVA_VERSION",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "VIRTUAL_ENV",
    "PORT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "K_SERVICE",
    "K_REVISION",
    "K_CONFIGURATION",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_EXECUTION_ENV",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "ECS_CONTAINER_METADATA_URI",
    "ECS_CONTAINER_METADATA_URI_V4",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "MSI_ENDPOINT",
    "MSI_SECRET",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
];

/// Prefixes the env filter keeps whatever the pack declares (CONTRACT §5).
const KEPT_PREFIXES: &[&str] = &[
    "KINDGI_",
    "LC_",
    "PYTHON",
    "OTEL_",
    "CLOUD_RUN_",
    "CONTAINER_APP_",
];

/// The `kindgi` command's own variables: its tokens and URLs are no
/// deployed pack's business.
const CLI_PREFIXES: &[&str] = &["KINDGI_DEV_", "KINDGI_SERVICE_", "KINDGI_RUNTIME_"];

/// Whether the pack process gets dev's variable `name`.
fn passed(name: &str, declared: &[String]) -> bool {
    if CLI_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    declared.iter().any(|d| d == name)
        || KEPT_NAMES.contains(&name)
        || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The pack process's environment: from `inherited` (dev's own) what a
/// deployed pack would see, then `dotenv` (the pack's `.env`) for the names
/// still unset.
pub(crate) fn pack_env(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &[String],
    dotenv: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(|n| passed(n, declared)))
        .collect();
    for (name, value) in dotenv {
        if !env.iter().any(|(set, _)| set == name.as_str()) {
            env.push((name.into(), value.into()));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    #[test]
    fn keeps_what_a_deployed_pack_sees() {
        let inherited = vars(&[
            ("PATH", "/bin"),
            ("CARGO_PKG_NAME", "kindgi-cli"),
            ("RUSTFLAGS", "-x"),
            ("DATABASE_URL", "sqlite://from-shell"),
            ("KINDGI_LOG_LEVEL", "debug"),
            ("KINDGI_DEV_TOKEN", "front-token"),
            ("KINDGI_SERVICE_TOKEN", "t"),
            ("LC_ALL", "C"),
        ]);
        let dotenv = vec![
            ("DATABASE_URL".to_owned(), "sqlite://from-dotenv".to_owned()),
            ("REGION".to_owned(), "eu".to_owned()),
        ];
        let env = pack_env(inherited, &["DATABASE_URL".to_owned()], &dotenv);
        assert_eq!(
            env,
            vars(&[
                ("PATH", "/bin"),
                ("DATABASE_URL", "sqlite://from-shell"),
                ("KINDGI_LOG_LEVEL", "debug"),
                ("LC_ALL", "C"),
                ("REGION", "eu"),
            ])
        );
    }
}
