//! The per-call context a handler receives.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Secret;

/// Per-call context of an invoke (`ctx`), exactly as the runtime sent it:
/// what is absent on the wire stays `None`.
///
/// Its `Debug` output names secret and connection keys but never their
/// values, and hides the wait token and the tool-files grant entirely.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallContext {
    /// Tenant the call runs for.
    pub tenant_id: String,
    /// The kernel run the call belongs to.
    pub run_id: String,
    /// The project of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// The org of that project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org_id: Option<String>,
    /// The individual call, e.g. the model's tool-call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The call's idempotency key (protocol 2.6.0), see [`crate::idempotency`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The env values the tool declares (`needsSpec.env`), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Resolved secrets for the call (open). Never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Map<String, Value>>,
    /// The connections the tool declares, by the tool's name for each
    /// (protocol 2.9.0). Never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<BTreeMap<String, Connection>>,
    /// Reserved: no runtime sends it yet (open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    /// The settings blocks the calling agent version pins, by block id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Map<String, Value>>,
    /// The wait token a tool that declares `pauses` may answer with
    /// (protocol 2.8.0). Its URL is a credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_token: Option<WaitToken>,
    /// Where a tool that declares `storesFiles` / `readsFiles` stores and
    /// reads files (protocol 2.10.0). A pack service keeps it from the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_files: Option<ToolFilesGrant>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret_names = self
            .secrets
            .as_ref()
            .map(|s| s.keys().map(String::as_str).collect::<Vec<_>>());
        f.debug_struct("CallContext")
            .field("tenant_id", &self.tenant_id)
            .field("run_id", &self.run_id)
            .field("project_id", &self.project_id)
            .field("org_id", &self.org_id)
            .field("request_id", &self.request_id)
            .field("idempotency_key", &self.idempotency_key)
            .field("env", &self.env)
            .field("secrets", &secret_names.map(Redacted))
            .field("connections", &self.connections)
            .field("config", &self.config)
            .field("settings", &self.settings)
            .field("wait_token", &self.wait_token)
            .field("tool_files", &self.tool_files)
            .finish()
    }
}

/// Shows the keys of a secret map with every value hidden.
struct Redacted<'a>(Vec<&'a str>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|k| (k, "***")))
            .finish()
    }
}

/// One connection resolved for a call: an account at another app and a
/// short-lived token for it (protocol 2.9.0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The connection's id.
    pub connection_id: String,
    /// The app entry's id (`google`, `github`).
    pub app: String,
    /// The app's name as people know it (`Google`).
    pub app_name: String,
    /// The token the tool sends to the app's API. Never logged or returned.
    pub access_token: Secret,
    /// Whose account it is at the app.
    pub account: ConnectionAccount,
    /// When the token expires (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// Whose account a connection is at its app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionAccount {
    /// Its stable id at the app.
    pub id: String,
    /// What people see (`ana@acme.example`).
    pub label: String,
}

/// The wait token of a call to a tool that declares `pauses`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitToken {
    /// The token's id: the same every time this attempt of the call runs.
    pub id: String,
    /// Where the other system posts its answer. The link is the credential.
    pub url: Secret,
}

impl std::fmt::Debug for WaitToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitToken")
            .field("id", &self.id)
            .field("url", &self.url)
            .finish()
    }
}

/// Where a call's tool stores and reads files, and the call's token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFilesGrant {
    /// `POST` files here; `GET <url>/<artifactId>` reads one.
    pub url: String,
    /// The call's bearer token. Sent only to `url`, only in `Authorization`.
    pub token: Secret,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_secret_values_and_credentials() {
        let ctx: CallContext = serde_json::from_value(serde_json::json!({
            "tenantId": "t", "runId": "r",
            "secrets": {"API_KEY": "sentinel-secret"},
            "waitToken": {"id": "w1", "url": "http://x/sentinel-url"},
            "toolFiles": {"url": "http://x/files", "token": "sentinel-token"},
            "connections": {"gh": {"connectionId": "c", "app": "github", "appName": "GitHub",
                "accessToken": "sentinel-access", "account": {"id": "1", "label": "ana"}}}
        }))
        .expect("valid ctx");
        let shown = format!("{ctx:?}");
        assert!(shown.contains("API_KEY"));
        for sentinel in [
            "sentinel-secret",
            "sentinel-url",
            "sentinel-token",
            "sentinel-access",
        ] {
            assert!(!shown.contains(sentinel), "{sentinel} leaked in {shown}");
        }
    }

    #[test]
    fn absent_fields_stay_absent() {
        let ctx: CallContext =
            serde_json::from_str(r#"{"tenantId":"t","runId":"r"}"#).expect("valid ctx");
        assert_eq!(
            serde_json::to_string(&ctx).expect("serializes"),
            r#"{"tenantId":"t","runId":"r"}"#
        );
    }
}
