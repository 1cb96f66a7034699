//! The probes that need a service of their own: the transport statuses a
//! service gives only in some state — `503` for a missing env name, at its
//! concurrency cap and while draining, `421` when pinned to another tenant.
//! Each scenario starts a fresh pair, runs its steps on both, stops both,
//! and observes the records each wrote after `listening` as the probe
//! `<scenario>.records`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::observe::{self, Observation};
use crate::harness::{Service, StartOptions, Target};
use crate::http::{self, HttpRequest};
use crate::json::canonical_pretty;

/// The header that names the tenant a call is for (protocol 2.7).
const TENANT: &str = "kindgi-tenant-id";
/// The tenant the scenario's service is pinned to (a UUID, as a runtime's
/// tenant ids are).
const PINNED: &str = "7c3e1a52-4f0b-4d8e-9a6c-2b1d0e9f8a71";
/// Another tenant.
const OTHER: &str = "0b9d4c1e-8a27-4f65-b3e0-5d6c7a8f9e12";

/// How long a step's answer or record may take.
const SOON: Duration = Duration::from_secs(10);

/// A scenario: its id, and how its services are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scenario {
    /// The index requires `NEEDED_VAR`, which is unset (strict check).
    MissingEnv,
    /// `KINDGI_PACK_SERVICE_MAX_CONCURRENCY=1`, one call held, then SIGTERM.
    CapAndDrain,
    /// `KINDGI_PACK_TENANT_ID` set to a UUID, called for another tenant.
    Tenant,
}

impl Scenario {
    /// Every scenario, in report order.
    pub(crate) const ALL: [Scenario; 3] = [Self::MissingEnv, Self::CapAndDrain, Self::Tenant];

    /// Its id, the prefix of its probes' ids.
    pub(crate) fn id(self) -> &'static str {
        match self {
            Self::MissingEnv => "env.missing",
            Self::CapAndDrain => "process.cap",
            Self::Tenant => "tenant",
        }
    }

    /// The ids of its probes, in report order.
    pub(crate) fn probe_ids(self) -> Vec<String> {
        let steps: &[&str] = match self {
            Self::MissingEnv => &["readyz", "invoke", "info"],
            Self::CapAndDrain => &["overloaded", "draining", "readyz-draining", "held"],
            Self::Tenant => &[
                "same",
                "other",
                "no-header",
                "ctx-other",
                "info",
                "info-other",
            ],
        };
        steps
            .iter()
            .map(|step| format!("{}.{step}", self.id()))
            .chain([format!("{}.records", self.id())])
            .collect()
    }

    /// Starts `target` as this scenario needs; `index` is the index the
    /// corpus's service serves, `work` a folder of its own.
    pub(crate) async fn start(
        self,
        target: &Target,
        index: &Path,
        work: &Path,
    ) -> Result<Service, String> {
        let options = match self {
            Self::MissingEnv => {
                let variant = work.join("index-env-required.json");
                let mut json: Value = std::fs::read(index)
                    .ok()
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                    .ok_or_else(|| format!("cannot read the index {}", index.display()))?;
                json["env"] = json!({"required": ["NEEDED_VAR"], "optional": []});
                std::fs::write(&variant, canonical_pretty(&json))
                    .map_err(|e| format!("cannot write {}: {e}", variant.display()))?;
                StartOptions::new(variant).remove_env("NEEDED_VAR")
            }
            Self::CapAndDrain => {
                StartOptions::new(index).env("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "1")
            }
            Self::Tenant => StartOptions::new(index).env("KINDGI_PACK_TENANT_ID", PINNED),
        };
        target
            .start(&options)
            .await
            .map_err(|e| format!("{}: {e}", self.id()))
    }

    /// Runs the steps against `service`, stops it, and returns one
    /// observation per probe, in [`Scenario::probe_ids`] order.
    pub(crate) async fn run(
        self,
        service: &Service,
        work: &Path,
    ) -> Result<Vec<Observation>, String> {
        let mut seen = match self {
            Self::MissingEnv => vec![
                send(service, HttpRequest::get("/readyz")).await,
                send(service, invoke(service, "invoke")).await,
                send(service, service.authed(HttpRequest::get("/v1/info"))).await,
            ],
            Self::CapAndDrain => cap_and_drain(service, work).await?,
            Self::Tenant => {
                let info = || service.authed(HttpRequest::get("/v1/info"));
                vec![
                    send(
                        service,
                        invoke_as(service, "same", PINNED).header(TENANT, PINNED),
                    )
                    .await,
                    send(
                        service,
                        invoke_as(service, "other", PINNED).header(TENANT, OTHER),
                    )
                    .await,
                    send(service, invoke_as(service, "no-header", PINNED)).await,
                    send(
                        service,
                        invoke_as(service, "ctx-other", OTHER).header(TENANT, PINNED),
                    )
                    .await,
                    send(service, info().header(TENANT, PINNED)).await,
                    send(service, info().header(TENANT, OTHER)).await,
                ]
            }
        };
        let records = observe::stopped(service, SOON).await;
        seen.push(Observation::records_only(
            records[observe::after_listening(&records)..]
                .iter()
                .map(|r| observe::normalize_record(r.clone()))
                .collect(),
        ));
        Ok(seen)
    }
}

/// One hold at the cap of one, a call refused for it, SIGTERM, a call and
/// a readiness check refused while draining, and the held call's answer
/// once released.
async fn cap_and_drain(service: &Service, work: &Path) -> Result<Vec<Observation>, String> {
    let release = work.join(format!("release-cap-{}", service.addr().port()));
    let release_text = release.to_string_lossy().into_owned();
    let hold = service.authed(
        HttpRequest::post("/v1/invoke")
            .header("content-type", "application/json")
            .json(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.hold"},
                "input": {"release": release_text},
                "ctx": {"tenantId": "t1", "runId": "diff-process.cap.held"}}),
            )
            .timeout(Duration::from_secs(30)),
    );
    let addr = service.addr();
    let held = tokio::spawn(async move { http::exchange(addr, &hold, hold.time_limit()).await });
    let line = format!("hold: {release_text}");
    if service
        .output()
        .wait_for_stdout(|l| l.contains(&line), SOON)
        .await
        .is_none()
    {
        let _ = std::fs::write(&release, b"");
        return Err(format!("process.cap: the handler never printed {line:?}"));
    }
    let overloaded = send(service, invoke(service, "overloaded")).await;
    let draining = async {
        service.terminate().await?;
        service
            .output()
            .wait_for_record(|r| r.get("kind") == Some(&Value::from("draining")), SOON)
            .await
            .ok_or("process.cap: no draining record after SIGTERM")?;
        Ok::<_, String>((
            send(service, invoke(service, "draining")).await,
            send(service, HttpRequest::get("/readyz")).await,
        ))
    }
    .await;
    let _ = std::fs::write(&release, b"");
    let (draining, readyz) = draining?;
    let held = held
        .await
        .map_err(|e| format!("process.cap: the held call: {e}"))?;
    Ok(vec![overloaded, draining, readyz, observe::answered(&held)])
}

/// An echo invoke for step `step`, tenant `t1`.
fn invoke(service: &Service, step: &str) -> HttpRequest {
    invoke_as(service, step, "t1")
}

/// An echo invoke for step `step` as tenant `tenant`.
fn invoke_as(service: &Service, step: &str, tenant: &str) -> HttpRequest {
    service.authed(
        HttpRequest::post("/v1/invoke")
            .header("content-type", "application/json")
            .json(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo"},
                "input": {"message": "hi"},
                "ctx": {"tenantId": tenant, "runId": format!("diff-step-{step}")}}),
            ),
    )
}

/// Sends `request` and observes its answer (or that none came).
async fn send(service: &Service, request: HttpRequest) -> Observation {
    let request = request.timeout(SOON);
    observe::answered(&http::exchange(service.addr(), &request, request.time_limit()).await)
}
