//! The env filter (CONTRACT §5): which process variables a pack's code
//! may see. A pack service drops the others before pack code runs; `kindgi
//! dev` starts a pack with only these, as a deployment would.

/// Names kept whatever the pack declares.
pub const KEPT_NAMES: &[&str] = &[
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
pub const KEPT_PREFIXES: &[&str] = &[
    "KINDGI_",
    "LC_",
    "PYTHON",
    "OTEL_",
    "CLOUD_RUN_",
    "CONTAINER_APP_",
];

/// Whether the filter keeps `name` for a pack that declares `declared`.
///
/// ```
/// use kindgi_protocol::env_filter::keeps;
/// let declared = vec!["DATABASE_URL".to_owned()];
/// assert!(keeps("DATABASE_URL", &declared));
/// assert!(keeps("PATH", &declared));
/// assert!(keeps("OTEL_EXPORTER_OTLP_ENDPOINT", &declared));
/// assert!(!keeps("AWS_SECRET_ACCESS_KEY", &declared));
/// ```
pub fn keeps(name: &str, declared: &[String]) -> bool {
    declared.iter().any(|d| d == name)
        || KEPT_NAMES.contains(&name)
        || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
}
