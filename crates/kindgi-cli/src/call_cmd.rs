//! `kindgi call` and `kindgi info`: one call through the pack client and the
//! dev runtime, and a pack service's info.
//!
//! The tool's index entry (does it pause, store or read files, what is its
//! output schema) comes from a local index file: `--index P`, else
//! `KINDGI_PACK_INDEX`, else `./index.json` when it exists. The service's
//! `GET /v1/info` confirms it runs the tool, and when it reports an
//! `indexHash` the local file's hash is checked against it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;
use kindgi_protocol::{CallContext, PackIndex, Response, Secret, ToolEntry};
use kindgi_runtime::OpenCall;
use kindgi_runtime::client::{CallError, PackClient, ToolCall};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::call_ctx::ContextFlags;
use crate::data_dir::DataDirArg;
use crate::link::RuntimeLink;
use crate::out::{counted, say};

/// Where the pack service is.
#[derive(Debug, Args)]
pub(crate) struct ServiceArgs {
    /// The pack service's base URL.
    #[arg(long, env = "KINDGI_SERVICE_URL")]
    service: Option<String>,
    /// The pack service's token (`kindgi-pack-token`).
    #[arg(long, env = "KINDGI_SERVICE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The tenant the call is for (`kindgi-tenant-id`).
    #[arg(long, default_value = "dev-tenant")]
    tenant: String,
    /// Speak HTTP/2 over cleartext with prior knowledge (h2c), as a
    /// runtime behind Cloud Run's end-to-end HTTP/2 does.
    #[arg(long)]
    http2: bool,
}

impl ServiceArgs {
    fn client(&self) -> Result<PackClient, UsageError> {
        let url = self.service.clone().ok_or_else(|| {
            UsageError("no pack service: pass --service URL or set KINDGI_SERVICE_URL".into())
        })?;
        let token = self.token.clone().ok_or_else(|| {
            UsageError("no pack token: pass --token T or set KINDGI_SERVICE_TOKEN".into())
        })?;
        let client = PackClient::new(url, Secret::new(token));
        Ok(if self.http2 {
            client.with_http2()
        } else {
            client
        })
    }

    fn url(&self) -> &str {
        self.service.as_deref().unwrap_or_default()
    }
}

/// A usage error: exit 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

/// Options of `kindgi call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's id.
    tool_id: String,
    /// The tool's input, as JSON.
    #[arg(long)]
    input: String,
    #[command(flatten)]
    service: ServiceArgs,
    /// The pack index file to read the tool's entry from.
    #[arg(long, env = "KINDGI_PACK_INDEX")]
    index: Option<PathBuf>,
    /// The run the call belongs to (default: a new one).
    #[arg(long)]
    run: Option<String>,
    /// The project of the run.
    #[arg(long, default_value = "dev-project")]
    project: String,
    /// The step that makes the call (names its idempotency key).
    #[arg(long, default_value = "cli")]
    step: String,
    /// The model's id for this call (a tool-call id): it goes into the
    /// idempotency key, as for a call a model asked for, and is the call's
    /// `requestId`.
    #[arg(long, value_name = "ID")]
    model_call_id: Option<String>,
    /// A secret in the call's context (`ctx.secrets`); repeatable. Never
    /// printed.
    #[arg(long = "secret", value_name = "NAME=VALUE")]
    secrets: Vec<String>,
    /// An env value in the call's context (`ctx.env`), as the tool declares
    /// it in `needsSpec.env`; repeatable.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// A connection in the call's context (`ctx.connections`): the tool's
    /// name for it, the app's id and the access token; repeatable. Never
    /// printed.
    #[arg(long = "connection", value_name = "NAME=APP:TOKEN")]
    connections: Vec<String>,
    /// A settings block in the call's context (`ctx.settings`): its id and
    /// its values as a JSON object; repeatable.
    #[arg(long = "settings", value_name = "ID=JSON")]
    settings: Vec<String>,
    /// The call's deadline in milliseconds.
    #[arg(long, default_value_t = 120_000)]
    timeout_ms: u64,
    /// A running `kindgi runtime` to open the call on (default: one
    /// embedded in this process).
    #[arg(long, env = "KINDGI_RUNTIME_URL")]
    runtime: Option<String>,
    /// The admin token of `--runtime`.
    #[arg(long, env = "KINDGI_RUNTIME_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    #[command(flatten)]
    data_dir: DataDirArg,
}

/// Options of `kindgi info`.
#[derive(Debug, Args)]
pub(crate) struct InfoArgs {
    #[command(flatten)]
    service: ServiceArgs,
}

/// Explains a call error in a sentence. For a service that kept answering
/// 503, its `/readyz` says why (the same reasons, in the same words, as its
/// 503 to an invoke): draining, missing env, not ready; ready means every
/// call slot was taken.
async fn explain(err: &CallError, url: &str) -> String {
    match err {
        CallError::Unavailable { last, .. } if last.contains("refused") => format!(
            "Could not connect to the pack service at {url}: the connection was refused. Is it running, and is the URL right?"
        ),
        CallError::Unavailable { attempts, last } if last.starts_with("503") => format!(
            "The pack service at {url} refused the call (503, {}): {}. The call did not run.",
            counted(*attempts, "attempt"),
            why_unavailable(url).await
        ),
        CallError::Unavailable { attempts, last } => format!(
            "The pack service at {url} was unavailable after {} ({last}). The call did not run.",
            counted(*attempts, "attempt")
        ),
        other => format!("The call to {url} failed: {other}"),
    }
}

/// Why the service at `url` answers 503, from its `/readyz`.
async fn why_unavailable(url: &str) -> String {
    let answer = async {
        let response = reqwest::Client::new()
            .get(format!("{}/readyz", url.trim_end_matches('/')))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        Some((
            status,
            response.json::<Value>().await.unwrap_or(Value::Null),
        ))
    };
    match answer.await {
        Some((200, _)) => "every call slot was taken (overloaded)".to_owned(),
        Some((503, body)) => unavailable_reason(&body),
        _ => "it gave no reason".to_owned(),
    }
}

/// A 503 body in words.
fn unavailable_reason(body: &Value) -> String {
    match body["error"].as_str() {
        Some("draining") => "it is draining (stopping after the calls in flight)".to_owned(),
        Some("missing env") => {
            let names: Vec<&str> = body["missingEnv"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let (noun, verb) = if names.len() == 1 {
                ("name", "has")
            } else {
                ("names", "have")
            };
            format!(
                "the pack's env.required {noun} {verb} no value: {}",
                names.join(", ")
            )
        }
        Some("not ready") => "it is not ready yet".to_owned(),
        Some("overloaded") => "every call slot was taken (overloaded)".to_owned(),
        Some(other) => format!("it says {other:?}"),
        None => "it gave no reason".to_owned(),
    }
}

/// `kindgi info`.
pub(crate) async fn info(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let client = match args.service.client() {
        Ok(c) => c,
        Err(UsageError(msg)) => return Ok(usage(&msg)),
    };
    match client.info(Some(&args.service.tenant)).await {
        Ok(info) => {
            say(&serde_json::to_string_pretty(&info)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("kindgi: {}", explain(&e, args.service.url()).await);
            Ok(ExitCode::FAILURE)
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n\nFor more information, try '--help'.");
    ExitCode::from(2)
}

/// The local index file, and the tool's entry in it.
fn index_entry(path: Option<&Path>, tool_id: &str) -> anyhow::Result<Option<(ToolEntry, String)>> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None if Path::new("index.json").exists() => PathBuf::from("index.json"),
        None => return Ok(None),
    };
    let bytes = std::fs::read(&path)
        .with_context(|| format!("Cannot read the pack index {}", path.display()))?;
    let index: PackIndex = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a pack index", path.display()))?;
    let hash = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    let hint = crate::suggest::did_you_mean(tool_id, index.tools.iter().map(|t| t.id.as_str()));
    let entry = index
        .tools
        .into_iter()
        .find(|t| t.id == tool_id)
        .ok_or_else(|| {
            anyhow!(
                "The pack index {} has no tool \"{tool_id}\"{hint}",
                path.display()
            )
        })?;
    Ok(Some((entry, hash)))
}

/// `kindgi call`.
pub(crate) async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    let Ok(input) = serde_json::from_str::<Value>(&args.input) else {
        return Ok(usage("--input is not valid JSON"));
    };
    let run_id = args
        .run
        .clone()
        .unwrap_or_else(|| format!("run_{}", uuid_like()));
    let mut ctx = CallContext {
        tenant_id: args.service.tenant.clone(),
        run_id: run_id.clone(),
        project_id: Some(args.project.clone()),
        ..CallContext::default()
    };
    let flags = ContextFlags {
        secrets: &args.secrets,
        env: &args.env,
        connections: &args.connections,
        settings: &args.settings,
    };
    if let Err(msg) = flags.apply(&mut ctx) {
        return Ok(usage(&msg));
    }
    let client = match args.service.client() {
        Ok(c) => c,
        Err(UsageError(msg)) => return Ok(usage(&msg)),
    };
    let url = args.service.url().to_owned();
    let found = index_entry(args.index.as_deref(), &args.tool_id)?;
    match client.info(Some(&args.service.tenant)).await {
        Ok(info) => {
            if !info.tools.iter().any(|t| t.id == args.tool_id) {
                let hint = crate::suggest::did_you_mean(
                    &args.tool_id,
                    info.tools.iter().map(|t| t.id.as_str()),
                );
                eprintln!(
                    "kindgi: warning: the pack service at {url} doesn't list tool \"{}\"{hint}",
                    args.tool_id
                );
            }
            if let (Some(served), Some((_, local))) = (&info.index_hash, &found)
                && served != local
            {
                eprintln!(
                    "kindgi: warning: the local index ({local}) is not the one the service serves ({served})"
                );
            }
        }
        Err(e) => {
            eprintln!("kindgi: {}", explain(&e, &url).await);
            return Ok(ExitCode::FAILURE);
        }
    }
    let entry = match found {
        Some((entry, _)) => entry,
        None => {
            eprintln!(
                "kindgi: no pack index (--index, KINDGI_PACK_INDEX or ./index.json): the call gets no files token or wait link"
            );
            ToolEntry {
                id: args.tool_id.clone(),
                ..ToolEntry::default()
            }
        }
    };
    let call = ToolCall::new(&args.tool_id, input, ctx.clone())
        .for_step(&args.step, args.model_call_id.as_deref());
    ctx.idempotency_key.clone_from(&call.ctx.idempotency_key);

    let needs_runtime = entry.pauses || entry.stores_files || entry.reads_files;
    let link = if !needs_runtime {
        None
    } else if let Some(runtime) = &args.runtime {
        let admin_token = args.admin_token.clone().ok_or(anyhow!(
            "--runtime needs --admin-token (or KINDGI_RUNTIME_ADMIN_TOKEN)"
        ))?;
        Some(RuntimeLink::Remote {
            url: runtime.trim_end_matches('/').to_owned(),
            admin_token,
            http: reqwest::Client::new(),
        })
    } else {
        Some(RuntimeLink::embedded(&args.data_dir.path).await?)
    };
    let mut call = call;
    call.timeout = Duration::from_millis(args.timeout_ms.max(1));
    let mut call_id = None;
    if let Some(link) = &link {
        let grant = link
            .open_call(OpenCall {
                run_id,
                tenant_id: ctx.tenant_id.clone(),
                project_id: ctx.project_id.clone(),
                tool_id: args.tool_id.clone(),
                idempotency_key: ctx.idempotency_key.clone(),
                store: entry.stores_files,
                read: entry.reads_files,
                pauses: entry.pauses,
                deadline_ms: Some(args.timeout_ms),
                output_schema: Some(entry.output.clone()).filter(|s| !s.is_null()),
            })
            .await?;
        call.ctx.tool_files = grant.tool_files;
        call.ctx.wait_token = grant.wait_token;
        call_id = Some(grant.call_id);
    }
    let outcome = client.invoke(&call).await;
    let code = match outcome {
        Ok(Response::Result(result)) => {
            say(&serde_json::to_string_pretty(&result.output)?);
            ExitCode::SUCCESS
        }
        Ok(Response::Pause(pause)) => match (&link, &call_id, &call.ctx.wait_token) {
            (Some(link), Some(id), Some(token)) => {
                wait_out(
                    link,
                    id,
                    &token.id,
                    token.url.expose(),
                    pause.timeout_ms,
                    pause.name,
                )
                .await?
            }
            _ => {
                eprintln!("kindgi: the tool paused, but the call carried no wait token");
                ExitCode::FAILURE
            }
        },
        Ok(other) => {
            say(&serde_json::to_string_pretty(&other)?);
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("kindgi: {}", explain(&e, &url).await);
            ExitCode::FAILURE
        }
    };
    if let (Some(link), Some(id)) = (&link, &call_id) {
        link.answer(id).await?;
    }
    Ok(code)
}

/// Waits out a pause, a progress line on stderr every 10 s.
async fn wait_out(
    link: &RuntimeLink,
    call_id: &str,
    wait_id: &str,
    url: &str,
    timeout_ms: Option<u64>,
    name: Option<String>,
) -> anyhow::Result<ExitCode> {
    let what = name.clone().unwrap_or_else(|| "an answer".to_owned());
    link.pause(call_id, timeout_ms, name).await?;
    eprintln!("kindgi: waiting for {what}: POST the output as JSON to {url}");
    let started = std::time::Instant::now();
    loop {
        let wait = link.poll(wait_id, Duration::from_secs(10)).await?;
        match wait["state"].as_str() {
            Some("completed") => {
                say(&serde_json::to_string_pretty(&wait["output"])?);
                return Ok(ExitCode::SUCCESS);
            }
            Some("timed-out") => {
                eprintln!("kindgi: the wait for {what} timed out");
                return Ok(ExitCode::FAILURE);
            }
            _ => eprintln!(
                "kindgi: still waiting for {what} ({} s)",
                started.elapsed().as_secs()
            ),
        }
    }
}

/// A random id for a new run.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}{:x}", std::process::id())
}
