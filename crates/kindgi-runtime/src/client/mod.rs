//! The pack client: sends `invoke` / `check-invoke` to a pack service with
//! the protocol's headers and classifies every outcome.
//!
//! | outcome | what the client does |
//! |---|---|
//! | 200 with a response message | returns it |
//! | 503 (not ready, draining, at its cap) | waits `Retry-After`, sends again (after `draining`, on a new connection: see `pool`): the call provably did not run |
//! | connection refused | backs off, sends again |
//! | 421 `pack-tenant-mismatch` | [`CallError::TenantMismatch`], not retried |
//! | timeout, or the connection dropped after the request went out | [`CallError::MayHaveRun`], not retried |
//! | `connection-rejected` | renews that connection once ([`RenewConnection`]) and runs the call again |
//!
//! Retries are bounded ([`RetryPolicy::max_attempts`]) and all within the
//! call's deadline, which each attempt sends as `kindgi-timeout-ms` (the
//! time left).

mod error;
mod pool;
mod retry;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kindgi_protocol::{
    CallContext, Connection, ErrorCode, Info, Response, SCHEMA_VERSION, Secret, headers,
};
use serde_json::{Value, json};
use tokio::time::Instant;

pub use error::{CallError, RenewError};
pub use retry::RetryPolicy;

/// Renews a connection's token when the app refused it
/// (`connection-rejected`): the hook the client calls, once per call.
pub trait RenewConnection: Send + Sync + std::fmt::Debug {
    /// A fresh [`Connection`] for the tool's connection `name`.
    fn renew<'a>(
        &'a self,
        name: &'a str,
        current: &'a Connection,
    ) -> BoxFuture<'a, Result<Connection, RenewError>>;
}

/// One tool call to send.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's id.
    pub tool_id: String,
    /// The tool's version, when pinned.
    pub tool_version: Option<String>,
    /// Its input.
    pub input: Value,
    /// Its context (`tenantId` and `runId` at least).
    pub ctx: CallContext,
    /// Its deadline, relative.
    pub timeout: Duration,
    /// The run's W3C trace context.
    pub traceparent: Option<String>,
}

impl ToolCall {
    /// A call of `tool_id` with `input` in `ctx`, with the default deadline.
    pub fn new(tool_id: impl Into<String>, input: Value, ctx: CallContext) -> Self {
        Self {
            tool_id: tool_id.into(),
            tool_version: None,
            input,
            ctx,
            timeout: Duration::from_millis(headers::DEFAULT_TIMEOUT_MS),
            traceparent: None,
        }
    }

    /// Sets `ctx.idempotencyKey` for the step that makes this call: the same
    /// key every time this call runs (see [`kindgi_protocol::idempotency`]).
    ///
    /// ```
    /// use kindgi_protocol::CallContext;
    /// use kindgi_runtime::client::ToolCall;
    /// let ctx = CallContext { tenant_id: "t".into(), run_id: "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13".into(), ..Default::default() };
    /// let call = ToolCall::new("acme.payments.charge", serde_json::json!({}), ctx).for_step("charge-card", None);
    /// assert_eq!(call.ctx.idempotency_key.as_deref(), Some("f6c8a374-b63c-5453-8320-1ca9c067447a"));
    /// ```
    #[must_use]
    pub fn for_step(mut self, step_scope: &str, model_call_id: Option<&str>) -> Self {
        let key = kindgi_protocol::idempotency::idempotency_key(
            &self.ctx.run_id,
            step_scope,
            &self.tool_id,
            model_call_id,
        );
        self.ctx.idempotency_key = Some(key.to_string());
        if self.ctx.request_id.is_none() {
            self.ctx.request_id = model_call_id.map(str::to_owned);
        }
        self
    }

    fn body(&self) -> Value {
        let mut tool = json!({ "id": self.tool_id });
        if let Some(v) = &self.tool_version {
            tool["version"] = json!(v);
        }
        json!({"v": 2, "kind": "invoke", "tool": tool, "input": self.input, "ctx": self.ctx})
    }
}

/// Where a message goes and what it carries besides its body.
#[derive(Debug)]
struct Envelope<'a> {
    body: Value,
    run_id: Option<&'a str>,
    tenant_id: Option<&'a str>,
    request_id: Option<&'a str>,
    traceparent: Option<&'a str>,
    deadline: Instant,
}

/// A client of one pack service.
#[derive(Debug, Clone)]
pub struct PackClient {
    http: Arc<pool::Pool>,
    base_url: String,
    token: Secret,
    retry: RetryPolicy,
    renewer: Option<Arc<dyn RenewConnection>>,
}

impl PackClient {
    /// A client of the pack service at `base_url` (`http://host:port`) with
    /// its pack token.
    pub fn new(base_url: impl Into<String>, token: Secret) -> Self {
        Self {
            http: Arc::new(pool::Pool::new()),
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            token,
            retry: RetryPolicy::default(),
            renewer: None,
        }
    }

    /// Speaks HTTP/2 over cleartext with prior knowledge (h2c): every call
    /// a stream of one connection, as a runtime behind Cloud Run's
    /// end-to-end HTTP/2 talks to a container.
    #[must_use]
    pub fn with_http2(mut self) -> Self {
        self.http = Arc::new(pool::Pool::http2());
        self
    }

    /// Uses `policy` for retries.
    #[must_use]
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Renews connections with `renewer` on `connection-rejected`.
    #[must_use]
    pub fn with_renewer(mut self, renewer: Arc<dyn RenewConnection>) -> Self {
        self.renewer = Some(renewer);
        self
    }

    /// Runs a tool call: the service's response message, or why there is none.
    ///
    /// # Errors
    ///
    /// [`CallError`]: see the module's table.
    pub async fn invoke(&self, call: &ToolCall) -> Result<Response, CallError> {
        let deadline = Instant::now() + call.timeout;
        let mut call = call.clone();
        let mut renewed = false;
        loop {
            let envelope = Envelope {
                body: call.body(),
                run_id: Some(&call.ctx.run_id),
                tenant_id: Some(&call.ctx.tenant_id),
                request_id: call.ctx.request_id.as_deref(),
                traceparent: call.traceparent.as_deref(),
                deadline,
            };
            let response = self.send(&envelope).await?;
            let rejected = match &response {
                Response::Error(e) if e.code == ErrorCode::ConnectionRejected => {
                    e.connection.clone()
                }
                _ => None,
            };
            let (Some(name), Some(renewer), false) = (rejected, &self.renewer, renewed) else {
                return Ok(response);
            };
            let Some(current) = call.ctx.connections.as_ref().and_then(|c| c.get(&name)) else {
                return Ok(response);
            };
            let fresh = renewer
                .renew(&name, current)
                .await
                .map_err(|source| CallError::Renew {
                    connection: name.clone(),
                    source,
                })?;
            if let Some(connections) = call.ctx.connections.as_mut() {
                connections.insert(name, fresh);
            }
            renewed = true;
        }
    }

    /// Runs a guardrail check.
    ///
    /// # Errors
    ///
    /// [`CallError`]: see the module's table.
    pub async fn check_invoke(
        &self,
        check_id: &str,
        config: Value,
        trace: Value,
        run_id: Option<&str>,
        tenant_id: Option<&str>,
        timeout: Duration,
    ) -> Result<Response, CallError> {
        let envelope = Envelope {
            body: json!({"v": 2, "kind": "check-invoke", "check": {"id": check_id}, "config": config, "trace": trace}),
            run_id,
            tenant_id,
            request_id: None,
            traceparent: None,
            deadline: Instant::now() + timeout,
        };
        self.send(&envelope).await
    }

    /// The service's `GET /v1/info`.
    ///
    /// # Errors
    ///
    /// [`CallError`] as for an invoke, without retries.
    pub async fn info(&self, tenant_id: Option<&str>) -> Result<Info, CallError> {
        let (_, http) = self.http.current();
        let mut req = http
            .get(format!("{}/v1/info", self.base_url))
            .header(headers::PACK_TOKEN, self.token.expose())
            .timeout(Duration::from_secs(10));
        if let Some(t) = tenant_id {
            req = req.header(headers::TENANT_ID, t);
        }
        let resp = req.send().await.map_err(|e| classify_send_error(&e, 1))?;
        let resp = check_status(resp, 1).await?;
        resp.json()
            .await
            .map_err(|e| CallError::InvalidAnswer(e.to_string()))
    }

    /// Sends one message, retrying what provably did not run.
    async fn send(&self, env: &Envelope<'_>) -> Result<Response, CallError> {
        let request_id = env
            .request_id
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
        let mut backoff = self.retry.initial_backoff;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let left = env.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CallError::Unavailable {
                    attempts: attempts - 1,
                    last: "the deadline passed before an attempt could be sent".into(),
                });
            }
            let (pool, http) = self.http.current();
            let mut req = http
                .post(format!("{}/v1/invoke", self.base_url))
                .timeout(left + self.retry.answer_grace)
                .header(headers::PACK_TOKEN, self.token.expose())
                .header(headers::TIMEOUT_MS, left.as_millis().max(1).to_string())
                .header(headers::REQUEST_ID, &request_id)
                .header(headers::PROTOCOL, SCHEMA_VERSION)
                .json(&env.body);
            for (name, value) in [
                (headers::RUN_ID, env.run_id),
                (headers::TENANT_ID, env.tenant_id),
                (headers::TRACEPARENT, env.traceparent),
            ] {
                if let Some(value) = value {
                    req = req.header(name, value);
                }
            }
            let wait = match req.send().await {
                Ok(resp) if resp.status().as_u16() == 503 => {
                    let after = retry::retry_after(
                        resp.headers()
                            .get(reqwest::header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok()),
                    );
                    let body = resp.bytes().await.unwrap_or_default();
                    if pool::says_draining(&body) {
                        // It closes every connection it holds, the idle
                        // ones too: none is sent on again.
                        self.http.renew(pool);
                    }
                    tracing::debug!(attempts, ?after, "pack service unavailable (503)");
                    (after, "503 Service Unavailable".to_owned())
                }
                Ok(resp) => {
                    let resp = check_status(resp, attempts).await?;
                    let bytes = resp.bytes().await.map_err(|e| CallError::MayHaveRun {
                        reason: format!("the answer was cut off ({e})"),
                    })?;
                    return serde_json::from_slice(&bytes)
                        .map_err(|e| CallError::InvalidAnswer(e.to_string()));
                }
                Err(e) if e.is_connect() => {
                    let wait = backoff;
                    backoff = (backoff * 2).min(self.retry.max_backoff);
                    (wait, "connection refused".to_owned())
                }
                Err(e) => return Err(classify_send_error(&e, attempts)),
            };
            let (after, last) = wait;
            if attempts >= self.retry.max_attempts || Instant::now() + after >= env.deadline {
                return Err(CallError::Unavailable { attempts, last });
            }
            tokio::time::sleep(after).await;
        }
    }
}

/// A send that failed: refused connections never ran; anything after the
/// request went out may have.
fn classify_send_error(e: &reqwest::Error, attempts: u32) -> CallError {
    if e.is_connect() {
        CallError::Unavailable {
            attempts,
            last: "connection refused".into(),
        }
    } else if e.is_timeout() {
        CallError::MayHaveRun {
            reason: "no answer came before the deadline".into(),
        }
    } else {
        CallError::MayHaveRun {
            reason: format!(
                "the connection dropped after the request went out ({})",
                cause_chain(e)
            ),
        }
    }
}

/// `e` and its sources, innermost last: reqwest's own message alone
/// ("error sending request") does not say what the connection met.
fn cause_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Maps transport-level statuses other than 200 and 503 to errors.
async fn check_status(
    resp: reqwest::Response,
    attempts: u32,
) -> Result<reqwest::Response, CallError> {
    match resp.status().as_u16() {
        200 => Ok(resp),
        401 => Err(CallError::Unauthorized),
        421 => Err(CallError::TenantMismatch),
        503 => Err(CallError::Unavailable {
            attempts,
            last: "503 Service Unavailable".into(),
        }),
        status => Err(CallError::Status {
            status,
            body: resp.text().await.unwrap_or_default(),
        }),
    }
}
