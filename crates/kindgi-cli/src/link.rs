//! The dev runtime a `kindgi call` opens its call on: one embedded in this
//! process, or a running `kindgi runtime` reached through its admin API.

use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use kindgi_runtime::{CallGrant, DevRuntime, OpenCall, RuntimeConfig, WaitRecord};
use serde_json::{Value, json};

use crate::data_dir::open_store;

/// A dev runtime to open calls on.
#[derive(Debug)]
pub(crate) enum RuntimeLink {
    /// Served by this process on 127.0.0.1, port picked by the system.
    Embedded(DevRuntime),
    /// A `kindgi runtime` elsewhere.
    Remote {
        url: String,
        admin_token: String,
        http: reqwest::Client,
    },
}

impl RuntimeLink {
    /// Starts an embedded runtime on `data_dir`.
    pub(crate) async fn embedded(data_dir: &std::path::Path) -> anyhow::Result<Self> {
        let runtime = open_store(RuntimeConfig::new(data_dir))?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("Cannot listen for the embedded runtime")?;
        tokio::spawn(runtime.clone().serve(listener, std::future::pending()));
        Ok(Self::Embedded(runtime))
    }

    async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let Self::Remote {
            url,
            admin_token,
            http,
        } = self
        else {
            bail!("not a remote runtime");
        };
        let mut req = http
            .request(method, format!("{url}{path}"))
            .bearer_auth(admin_token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.with_context(|| {
            format!("Could not reach the dev runtime at {url}; is `kindgi runtime` running?")
        })?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("The dev runtime answered {status}: {body}");
        }
        Ok(body)
    }

    /// Opens the call.
    pub(crate) async fn open_call(&self, req: OpenCall) -> anyhow::Result<CallGrant> {
        match self {
            Self::Embedded(rt) => rt
                .open_call(req)
                .await?
                .map_err(|refusal| anyhow!("The dev runtime refused the call: {refusal:?}")),
            Self::Remote { .. } => {
                let raw = serde_json::to_value(&req)?;
                let body = self
                    .admin(reqwest::Method::POST, "/v1/dev/calls", Some(raw))
                    .await?;
                let grant = CallGrantWire::from_value(&body)?;
                Ok(grant)
            }
        }
    }

    /// Records the pause; answers the wait.
    pub(crate) async fn pause(
        &self,
        call_id: &str,
        timeout_ms: Option<u64>,
        name: Option<String>,
    ) -> anyhow::Result<Value> {
        match self {
            Self::Embedded(rt) => {
                let wait = rt
                    .pause(call_id, timeout_ms, name)
                    .await?
                    .ok_or_else(|| anyhow!("the call has no wait"))?;
                Ok(serde_json::to_value(wait)?)
            }
            Self::Remote { .. } => {
                self.admin(
                    reqwest::Method::POST,
                    &format!("/v1/dev/calls/{call_id}/pause"),
                    Some(json!({"timeoutMs": timeout_ms, "name": name})),
                )
                .await
            }
        }
    }

    /// The wait after up to `poll`.
    pub(crate) async fn poll(&self, wait_id: &str, poll: Duration) -> anyhow::Result<Value> {
        match self {
            Self::Embedded(rt) => {
                let wait: WaitRecord = rt
                    .wait(wait_id, poll)
                    .await?
                    .ok_or_else(|| anyhow!("the wait is gone"))?;
                Ok(serde_json::to_value(wait)?)
            }
            Self::Remote { .. } => {
                let path = format!("/v1/dev/waits/{wait_id}?waitMs={}", poll.as_millis());
                self.admin(reqwest::Method::GET, &path, None).await
            }
        }
    }

    /// Records the call's answer (its files token closes).
    pub(crate) async fn answer(&self, call_id: &str) -> anyhow::Result<()> {
        match self {
            Self::Embedded(rt) => {
                rt.answer_call(call_id).await?;
                Ok(())
            }
            Self::Remote { .. } => self
                .admin(
                    reqwest::Method::POST,
                    &format!("/v1/dev/calls/{call_id}/answer"),
                    None,
                )
                .await
                .map(|_| ()),
        }
    }
}

/// Reads a [`CallGrant`] from the admin API's JSON.
struct CallGrantWire;

impl CallGrantWire {
    fn from_value(v: &Value) -> anyhow::Result<CallGrant> {
        Ok(CallGrant {
            call_id: v["callId"]
                .as_str()
                .ok_or_else(|| anyhow!("no callId in {v}"))?
                .to_owned(),
            rerun: v["rerun"].as_bool().unwrap_or(false),
            tool_files: v
                .get("toolFiles")
                .map(|g| serde_json::from_value(g.clone()))
                .transpose()?,
            wait_token: v
                .get("waitToken")
                .map(|w| serde_json::from_value(w.clone()))
                .transpose()?,
        })
    }
}
