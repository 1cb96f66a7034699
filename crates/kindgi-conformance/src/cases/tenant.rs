//! Protocol 2.7: a service pinned to one tenant (`KINDGI_PACK_TENANT_ID`),
//! and `indexHash` in `/v1/info`.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{check, ctx, run_trace, tool};
use crate::case::{Case, Checked, Feature, answer, eq, result, status};
use crate::harness::StartOptions;
use crate::http::HttpRequest;
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::{IndexHash, Tenant};
    vec![
        Case::new(
            "tenant.421.header-missing",
            Tenant,
            "Pinned to t1: an invoke without kindgi-tenant-id answers 421 {\"code\":\"pack-tenant-mismatch\"}.",
            invoke_header_missing,
        ),
        Case::new(
            "tenant.421.header-other",
            Tenant,
            "Pinned to t1: an invoke with kindgi-tenant-id t2 answers 421.",
            invoke_header_other,
        ),
        Case::new(
            "tenant.421.ctx-other",
            Tenant,
            "Pinned to t1: header t1 but ctx.tenantId t2 answers 421.",
            ctx_other,
        ),
        Case::new(
            "tenant.421.info-header-missing",
            Tenant,
            "Pinned to t1: /v1/info without kindgi-tenant-id answers 421.",
            info_header_missing,
        ),
        Case::new(
            "tenant.421.info-header-other",
            Tenant,
            "Pinned to t1: /v1/info with kindgi-tenant-id t2 answers 421.",
            info_header_other,
        ),
        Case::new(
            "tenant.421.check-header-missing",
            Tenant,
            "Pinned to t1: a check-invoke without kindgi-tenant-id answers 421.",
            check_header_missing,
        ),
        Case::new(
            "tenant.421.record",
            Tenant,
            "A call refused 421 is logged: a `tenant-mismatch` warn record, `via` header or context, with no id of the call.",
            refusal_record,
        ),
        Case::new(
            "tenant.200.match",
            Tenant,
            "Pinned to t1: header t1 and ctx.tenantId t1 run the call; /v1/info with header t1 answers 200.",
            matching,
        ),
        Case::new(
            "tenant.order.401-before-421",
            Tenant,
            "Pinned to t1: a bad token is refused (401) before the tenant (421).",
            order_401,
        ),
        Case::new(
            "tenant.unpinned",
            Tenant,
            "Not pinned: any kindgi-tenant-id header, or none, runs the call.",
            unpinned,
        ),
        Case::new(
            "index-hash.info",
            IndexHash,
            "/v1/info indexHash is sha256: and the hex SHA-256 of the index file's bytes.",
            index_hash,
        ),
        Case::new(
            "index-hash.follows-file",
            IndexHash,
            "A service on another index file reports that file's hash.",
            index_hash_other,
        ),
    ]
}

fn mismatch() -> Value {
    json!({"code": "pack-tenant-mismatch"})
}

fn echo(s: &Session, tenant: &str) -> Value {
    tool(
        "conformance.echo",
        json!({"message": "hi"}),
        json!({"tenantId": tenant, "runId": s.unique("tenant")}),
    )
}

async fn invoke_as(
    s: &Session,
    header: Option<&str>,
    ctx_tenant: &str,
) -> Result<crate::http::HttpResponse, String> {
    let service = s.service(Profile::Tenant).await?;
    let mut request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .json(&echo(s, ctx_tenant));
    if let Some(tenant) = header {
        request = request.header("kindgi-tenant-id", tenant);
    }
    s.send(&service, request).await
}

async fn info_as(s: &Session, header: Option<&str>) -> Result<crate::http::HttpResponse, String> {
    let service = s.service(Profile::Tenant).await?;
    let mut request = service.authed(HttpRequest::get("/v1/info"));
    if let Some(tenant) = header {
        request = request.header("kindgi-tenant-id", tenant);
    }
    s.send(&service, request).await
}

async fn invoke_header_missing(s: Session) -> Checked {
    answer(&invoke_as(&s, None, "t1").await?, 421, &mismatch())
}

async fn invoke_header_other(s: Session) -> Checked {
    answer(&invoke_as(&s, Some("t2"), "t1").await?, 421, &mismatch())
}

async fn ctx_other(s: Session) -> Checked {
    answer(&invoke_as(&s, Some("t1"), "t2").await?, 421, &mismatch())
}

async fn info_header_missing(s: Session) -> Checked {
    answer(&info_as(&s, None).await?, 421, &mismatch())
}

async fn info_header_other(s: Session) -> Checked {
    answer(&info_as(&s, Some("t2")).await?, 421, &mismatch())
}

async fn check_header_missing(s: Session) -> Checked {
    let service = s.service(Profile::Tenant).await?;
    let message = check(
        "conformance.checks.min-length",
        json!({}),
        run_trace(&s.unique("check"), "x"),
    );
    answer(
        &s.send(
            &service,
            service
                .authed(HttpRequest::post("/v1/invoke"))
                .json(&message),
        )
        .await?,
        421,
        &mismatch(),
    )
}

/// Refuses an invoke named for t2 by its header, then one named for t2 by
/// its context, on a service of its own; each leaves its record.
async fn refusal_record(s: Session) -> Checked {
    let index = s.index().await?;
    let service = s
        .start(&StartOptions::new(&index.path).env("KINDGI_PACK_TENANT_ID", "t1"))
        .await?;
    for (header, ctx_tenant, via) in [("t2", "t1", "header"), ("t1", "t2", "context")] {
        let request = service
            .authed(HttpRequest::post("/v1/invoke"))
            .header("kindgi-tenant-id", header)
            .json(&echo(&s, ctx_tenant));
        answer(&s.send(&service, request).await?, 421, &mismatch())?;
        let record = service
            .output()
            .wait_for_record(
                |r| {
                    r.get("kind") == Some(&Value::from("tenant-mismatch"))
                        && r.get("via") == Some(&Value::from(via))
                },
                super::SOON,
            )
            .await
            .ok_or_else(|| format!("expected a tenant-mismatch record with via {via}, got none"))?;
        eq(
            "level",
            Some("warn"),
            record.get("level").and_then(Value::as_str),
        )?;
        eq(
            "message",
            Some("A call for another tenant was refused"),
            record.get("message").and_then(Value::as_str),
        )?;
        eq(
            "event",
            Some("tenant-mismatch"),
            record.get("event").and_then(Value::as_str),
        )?;
        eq(
            "packId",
            Some("conformance"),
            record.get("packId").and_then(Value::as_str),
        )?;
        for id in ["tenantId", "runId", "toolId"] {
            eq(&format!("{id} (the other tenant's)"), None, record.get(id))?;
        }
    }
    service.stop(std::time::Duration::from_secs(10)).await;
    Ok(())
}

async fn matching(s: Session) -> Checked {
    let response = invoke_as(&s, Some("t1"), "t1").await?;
    status(&response, 200)?;
    result(&response.json()?, &json!({"message": "hi"}))?;
    status(&info_as(&s, Some("t1")).await?, 200).map_err(|e| format!("/v1/info: {e}"))
}

async fn order_401(s: Session) -> Checked {
    let service = s.service(Profile::Tenant).await?;
    let request = HttpRequest::post("/v1/invoke")
        .header("kindgi-pack-token", "nope")
        .json(&echo(&s, "t1"));
    answer(
        &s.send(&service, request).await?,
        401,
        &json!({"error": "Bad pack token"}),
    )
}

async fn unpinned(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    for header in [Some("t9"), None] {
        let mut request = service.authed(HttpRequest::post("/v1/invoke")).json(&tool(
            "conformance.echo",
            json!({"message": "hi"}),
            ctx(&s.unique("tenant")),
        ));
        if let Some(tenant) = header {
            request = request.header("kindgi-tenant-id", tenant);
        }
        let response = s.send(&service, request).await?;
        status(&response, 200).map_err(|e| format!("header {header:?}: {e}"))?;
        result(&response.json()?, &json!({"message": "hi"}))?;
    }
    Ok(())
}

fn hash_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

async fn index_hash(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let info = s.info(&service).await?;
    let index = s.index().await?;
    eq(
        "indexHash",
        Some(hash_of(&index.bytes).as_str()),
        info.get("indexHash").and_then(Value::as_str),
    )
}

async fn index_hash_other(s: Session) -> Checked {
    let service = s.service(Profile::EnvWarn).await?;
    let info = s.info(&service).await?;
    let main = s.index().await?;
    let hash = info
        .get("indexHash")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    eq(
        "indexHash differs from the main index's",
        true,
        hash != hash_of(&main.bytes),
    )?;
    let path = s
        .profile_index(Profile::EnvWarn)
        .ok_or("the env-warn service's index is unknown")?;
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    eq("indexHash", hash_of(&bytes), hash)
}
