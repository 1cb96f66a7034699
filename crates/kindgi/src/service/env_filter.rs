//! The env filter (CONTRACT §5): which process variables pack code may see.

/// Names kept whatever the pack declares.
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

/// Prefixes kept whatever the pack declares.
const KEPT_PREFIXES: &[&str] = &[
    "KINDGI_",
    "LC_",
    "PYTHON",
    "OTEL_",
    "CLOUD_RUN_",
    "CONTAINER_APP_",
];

/// Whether the filter keeps `name` for a pack that declares `declared`.
pub(crate) fn keeps(name: &str, declared: &[String]) -> bool {
    declared.iter().any(|d| d == name)
        || KEPT_NAMES.contains(&name)
        || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The names the filter drops from `names`, sorted.
pub(crate) fn dropped<'a>(
    names: impl Iterator<Item = &'a str>,
    declared: &[String],
) -> Vec<String> {
    let mut dropped: Vec<String> = names
        .filter(|name| !keeps(name, declared))
        .map(str::to_owned)
        .collect();
    dropped.sort();
    dropped.dedup();
    dropped
}

/// The `env-dropped` record's message.
pub(crate) fn dropped_message(names: &[String]) -> String {
    let what = if names.len() == 1 {
        "a variable".to_owned()
    } else {
        format!("{} variables", names.len())
    };
    format!(
        "Dropped {what} the pack doesn't declare: {} (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_declared_listed_and_prefixed() {
        let declared = vec!["DATABASE_URL".to_owned()];
        let names = [
            "DATABASE_URL",
            "PATH",
            "LC_ALL",
            "KINDGI_LOG_LEVEL",
            "AWS_SECRET_ACCESS_KEY",
            "OTEL_X",
            "B_SECRET",
        ];
        assert_eq!(
            dropped(names.into_iter(), &declared),
            ["AWS_SECRET_ACCESS_KEY", "B_SECRET"]
        );
    }

    #[test]
    fn messages() {
        assert_eq!(
            dropped_message(&["A".to_owned()]),
            "Dropped a variable the pack doesn't declare: A (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)"
        );
        assert_eq!(
            dropped_message(&["A".to_owned(), "B".to_owned()]),
            "Dropped 2 variables the pack doesn't declare: A, B (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)"
        );
    }
}
