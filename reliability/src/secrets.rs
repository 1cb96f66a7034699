//! Sentinel secrets: unique values put in every secret-bearing place of a
//! call, then looked for everywhere they must never appear.

use serde_json::{Value, json};

/// One set of sentinels, each unique to this set.
#[derive(Debug, Clone)]
pub struct Sentinels {
    /// A value in `ctx.secrets`.
    pub secret: String,
    /// A nested value in `ctx.secrets`.
    pub nested_secret: String,
    /// A connection's `accessToken`.
    pub access_token: String,
    /// `ctx.toolFiles.token`.
    pub files_token: String,
    /// `ctx.waitToken.url`.
    pub wait_url: String,
    /// A value in `ctx.env` (not a secret by the protocol, but never
    /// logged either).
    pub env_value: String,
}

impl Sentinels {
    /// Sentinels tagged with `tag` (unique per test).
    pub fn new(tag: &str) -> Self {
        let make = |what: &str| format!("SENTINEL-{what}-{tag}-{:08x}", rand_u32());
        Self {
            secret: make("secret"),
            nested_secret: make("nested"),
            access_token: make("access"),
            files_token: format!("kgi_tf_{}", make("files")),
            wait_url: format!("http://127.0.0.1:9/v1/waits/kgi_wl_{}", make("wait")),
            env_value: make("env"),
        }
    }

    /// Every sentinel value.
    pub fn all(&self) -> Vec<&str> {
        vec![
            &self.secret,
            &self.nested_secret,
            &self.access_token,
            &self.files_token,
            &self.wait_url,
            &self.env_value,
        ]
    }

    /// A call context carrying every sentinel, in run `run` of tenant `t1`,
    /// with the files URL `files_url`.
    pub fn ctx(&self, run: &str, files_url: &str) -> Value {
        json!({
            "tenantId": "t1",
            "runId": run,
            "idempotencyKey": "00000000-0000-5000-8000-000000000001",
            "env": {"STRESS_DECLARED": self.env_value},
            "secrets": {"API_KEY": self.secret, "nested": {"deep": [self.nested_secret]}},
            "connections": {"crm": {
                "connectionId": "conn-1",
                "app": "acme-crm",
                "appName": "Acme CRM",
                "accessToken": self.access_token,
                "account": {"id": "acc-1", "label": "ana@acme.example"}
            }},
            "toolFiles": {"url": files_url, "token": self.files_token},
            "waitToken": {"id": "wait-1", "url": self.wait_url}
        })
    }

    /// The sentinels found in `text` (none, when all is well).
    pub fn found_in(&self, text: &str) -> Vec<String> {
        self.all()
            .into_iter()
            .filter(|s| text.contains(*s))
            .map(str::to_owned)
            .collect()
    }
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish() as u32
}
