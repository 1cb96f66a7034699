//! The env check (`missing env`, strict and warn) and the env filter
//! (CONTRACT §1, §3, §5).

use serde_json::{Value, json};

use super::process::process_env_names;
use super::{SOON, ctx, tool};
use crate::case::{Case, Checked, Feature, answer, ensure, eq, result, unavailable};
use crate::harness::Service;
use crate::http::HttpRequest;
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Env;
    vec![
        Case::new(
            "env.strict.readyz",
            Env,
            "env.required NEEDED_VAR unset, strict: /readyz answers 503 {\"error\":\"missing env\",\"missingEnv\":[\"NEEDED_VAR\"]} with Retry-After 1.",
            strict_readyz,
        ),
        Case::new(
            "env.strict.invoke",
            Env,
            "... and an invoke answers the same 503.",
            strict_invoke,
        ),
        Case::new(
            "env.strict.healthz",
            Env,
            "... while /healthz answers 200 {\"status\":\"ok\"}.",
            strict_healthz,
        ),
        Case::new(
            "env.strict.info",
            Env,
            "... and /v1/info answers 200 with missingEnv [\"NEEDED_VAR\"].",
            strict_info,
        ),
        Case::new(
            "env.strict.record",
            Env,
            "... and stderr has a missing-env record: level warn, check strict, names [\"NEEDED_VAR\"], its message.",
            strict_record,
        ),
        Case::new(
            "env.warn.ready",
            Env,
            "KINDGI_PACK_ENV_CHECK=warn with NEEDED_VAR unset: /readyz 200 and invokes run.",
            warn_ready,
        ),
        Case::new(
            "env.warn.record",
            Env,
            "... with a missing-env record whose check is warn.",
            warn_record,
        ),
        Case::new(
            "env.warn.info",
            Env,
            "... and /v1/info still lists missingEnv [\"NEEDED_VAR\"].",
            warn_info,
        ),
        Case::new(
            "env.filter.drops-secret",
            Env,
            "AWS_SECRET_ACCESS_KEY (and an undeclared CONFORMANCE_DROPPED_PROBE) are not in the environment pack code sees.",
            drops_secret,
        ),
        Case::new(
            "env.filter.record",
            Env,
            "An env-dropped record names the dropped variables, sorted, with the contract's message; never a value.",
            dropped_record,
        ),
        Case::new(
            "env.filter.keeps",
            Env,
            "KINDGI_-prefixed, OTEL_-prefixed and listed variables (PATH) are kept.",
            keeps,
        ),
        Case::new(
            "env.filter.keeps-declared",
            Env,
            "A variable the index declares (env.optional OPTIONAL_VAR) is kept.",
            keeps_declared,
        ),
        Case::new(
            "env.filter.off",
            Env,
            "KINDGI_PACK_ENV_FILTER=off: AWS_SECRET_ACCESS_KEY is kept, and no env-dropped record is written.",
            filter_off,
        ),
    ]
}

fn missing_env() -> Value {
    json!({"error": "missing env", "missingEnv": ["NEEDED_VAR"]})
}

async fn strict_readyz(s: Session) -> Checked {
    let service = s.service(Profile::EnvStrict).await?;
    unavailable(
        &s.send(&service, HttpRequest::get("/readyz")).await?,
        &missing_env(),
    )
}

async fn strict_invoke(s: Session) -> Checked {
    let service = s.service(Profile::EnvStrict).await?;
    let message = tool(
        "conformance.echo",
        json!({"message": "hi"}),
        ctx(&s.unique("env")),
    );
    unavailable(
        &s.send(
            &service,
            service
                .authed(HttpRequest::post("/v1/invoke"))
                .json(&message),
        )
        .await?,
        &missing_env(),
    )
}

async fn strict_healthz(s: Session) -> Checked {
    let service = s.service(Profile::EnvStrict).await?;
    answer(
        &s.send(&service, HttpRequest::get("/healthz")).await?,
        200,
        &json!({"status": "ok"}),
    )
}

async fn strict_info(s: Session) -> Checked {
    let service = s.service(Profile::EnvStrict).await?;
    let info = s.info(&service).await?;
    eq(
        "missingEnv",
        Some(&json!(["NEEDED_VAR"])),
        info.get("missingEnv"),
    )
}

async fn missing_env_record(service: &Service, check: &str) -> Checked {
    let record = service
        .output()
        .wait_for_record(|r| r.get("kind") == Some(&json!("missing-env")), SOON)
        .await
        .ok_or("expected a missing-env record, got none")?;
    eq(
        "level",
        Some("warn"),
        record.get("level").and_then(Value::as_str),
    )?;
    eq(
        "check",
        Some(check),
        record.get("check").and_then(Value::as_str),
    )?;
    eq("names", Some(&json!(["NEEDED_VAR"])), record.get("names"))?;
    eq(
        "message",
        Some("The pack's env.required name has no value: NEEDED_VAR"),
        record.get("message").and_then(Value::as_str),
    )
}

async fn strict_record(s: Session) -> Checked {
    let service = s.service(Profile::EnvStrict).await?;
    missing_env_record(&service, "strict").await
}

async fn warn_ready(s: Session) -> Checked {
    let service = s.service(Profile::EnvWarn).await?;
    answer(
        &s.send(&service, HttpRequest::get("/readyz")).await?,
        200,
        &json!({"status": "ready"}),
    )?;
    let message = tool(
        "conformance.echo",
        json!({"message": "hi"}),
        ctx(&s.unique("env")),
    );
    result(
        &s.invoke(&service, &message).await?,
        &json!({"message": "hi"}),
    )
}

async fn warn_record(s: Session) -> Checked {
    let service = s.service(Profile::EnvWarn).await?;
    missing_env_record(&service, "warn").await
}

async fn warn_info(s: Session) -> Checked {
    let service = s.service(Profile::EnvWarn).await?;
    let info = s.info(&service).await?;
    eq(
        "missingEnv",
        Some(&json!(["NEEDED_VAR"])),
        info.get("missingEnv"),
    )
}

async fn drops_secret(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let names = process_env_names(&s, &service).await?;
    for name in ["AWS_SECRET_ACCESS_KEY", "CONFORMANCE_DROPPED_PROBE"] {
        ensure(!names.iter().any(|n| n == name), || {
            format!("expected {name} dropped, got it among the process-env names")
        })?;
    }
    Ok(())
}

async fn dropped_record(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let record = service
        .output()
        .wait_for_record(|r| r.get("kind") == Some(&json!("env-dropped")), SOON)
        .await
        .ok_or("expected an env-dropped record, got none")?;
    eq(
        "level",
        Some("warn"),
        record.get("level").and_then(Value::as_str),
    )?;
    let names: Vec<String> = record
        .get("names")
        .and_then(Value::as_array)
        .map(|n| {
            n.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| format!("expected names in {record}"))?;
    for name in ["AWS_SECRET_ACCESS_KEY", "CONFORMANCE_DROPPED_PROBE"] {
        ensure(names.iter().any(|n| n == name), || {
            format!("names: expected {name} among them, got {names:?}")
        })?;
    }
    let mut sorted = names.clone();
    sorted.sort();
    eq("names order", &sorted, &names)?;
    let what = if names.len() == 1 {
        "a variable".to_owned()
    } else {
        format!("{} variables", names.len())
    };
    let message = format!(
        "Dropped {what} the pack doesn't declare: {} (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)",
        names.join(", ")
    );
    eq(
        "message",
        Some(message.as_str()),
        record.get("message").and_then(Value::as_str),
    )?;
    ensure(!record.to_string().contains("sentinel-"), || {
        format!("expected no values in the record, got {record}")
    })
}

async fn keeps(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let names = process_env_names(&s, &service).await?;
    let mut want = vec!["KINDGI_CONFORMANCE_PROBE", "OTEL_CONFORMANCE_PROBE"];
    if std::env::var_os("PATH").is_some() {
        want.push("PATH");
    }
    for name in want {
        ensure(names.iter().any(|n| n == name), || {
            format!("expected {name} kept, got it missing from the process-env names")
        })?;
    }
    Ok(())
}

async fn keeps_declared(s: Session) -> Checked {
    let service = s.service(Profile::EnvWarn).await?;
    let names = process_env_names(&s, &service).await?;
    ensure(names.iter().any(|n| n == "OPTIONAL_VAR"), || {
        "expected OPTIONAL_VAR (declared) kept, got it missing".to_owned()
    })
}

async fn filter_off(s: Session) -> Checked {
    let service = s.service(Profile::FilterOff).await?;
    let names = process_env_names(&s, &service).await?;
    ensure(names.iter().any(|n| n == "AWS_SECRET_ACCESS_KEY"), || {
        "expected AWS_SECRET_ACCESS_KEY kept with the filter off, got it missing".to_owned()
    })?;
    let dropped = service
        .output()
        .records()
        .into_iter()
        .find(|r| r.get("kind") == Some(&json!("env-dropped")));
    ensure(dropped.is_none(), || {
        format!("expected no env-dropped record with the filter off, got {dropped:?}")
    })
}
