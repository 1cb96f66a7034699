//! The process contract: configuration, boot failures, the token, SIGTERM
//! draining and the concurrency cap. Each case starts a service of its own.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{SOON, ctx, tool};
use crate::case::{Case, Checked, Feature, answer, ensure, eq, json_eq, result, unavailable};
use crate::harness::{Output, Service, StartOptions, random_token};
use crate::http::{self, HttpRequest};
use crate::session::{Profile, Session};

const TOKEN_TEXT: &str = "KINDGI_PACK_SERVICE_TOKEN may hold only printable ASCII without spaces (it travels in an HTTP header). Use a random value such as `openssl rand -hex 32`.";
const EXIT_WAIT: Duration = Duration::from_secs(15);

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Process;
    vec![
        Case::new(
            "process.config-invalid.token-missing",
            Process,
            "No KINDGI_PACK_SERVICE_TOKEN: exit 1 with a config-invalid record, problem `KINDGI_PACK_SERVICE_TOKEN is required`.",
            token_missing,
        ),
        Case::new(
            "process.config-invalid.token-space",
            Process,
            "A token with a space: exit 1 with a config-invalid record naming the printable-ASCII rule.",
            token_space,
        ),
        Case::new(
            "process.config-invalid.port",
            Process,
            "PORT=http: exit 1, config-invalid `PORT must be a port number, got \"http\"`.",
            bad_port,
        ),
        Case::new(
            "process.config-invalid.max-concurrency",
            Process,
            "KINDGI_PACK_SERVICE_MAX_CONCURRENCY=0: exit 1, config-invalid `KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer`.",
            bad_cap,
        ),
        Case::new(
            "process.config-invalid.env-check",
            Process,
            "KINDGI_PACK_ENV_CHECK=loose: exit 1, config-invalid with the contract's text.",
            bad_env_check,
        ),
        Case::new(
            "process.config-invalid.env-filter",
            Process,
            "KINDGI_PACK_ENV_FILTER=maybe: exit 1, config-invalid with the contract's text.",
            bad_env_filter,
        ),
        Case::new(
            "process.token-trimmed",
            Process,
            "A token with a trailing newline is trimmed: the service starts and takes the trimmed token.",
            token_trimmed,
        ),
        Case::new(
            "process.token-hidden",
            Process,
            "KINDGI_PACK_SERVICE_TOKEN is not in the process environment pack code sees.",
            token_hidden,
        ),
        Case::new(
            "process.boot-failed.unreadable-index",
            Process,
            "An index that can't be read: exit 1 with a boot-failed record, `Cannot read the pack index: ...`.",
            unreadable_index,
        ),
        Case::new(
            "process.boot-failed.envelope",
            Process,
            "An index with v 2: exit 1, boot-failed `Index envelope v2 is not v1`.",
            bad_envelope,
        ),
        Case::new(
            "process.boot-failed.missing-module",
            Process,
            "An index naming tools/does-not-exist.rs: exit 1 with a boot-failed record, `Missing module: tools/does-not-exist.rs`.",
            missing_module,
        ),
        Case::new(
            "process.sigterm.drain",
            Process,
            "SIGTERM with a hold call in flight: draining record, readyz and new invokes 503 draining, the held call answered, stopped record, exit 0.",
            sigterm_drain,
        ),
        Case::new(
            "process.cap.overloaded",
            Process,
            "At KINDGI_PACK_SERVICE_MAX_CONCURRENCY=1 with a held call, a second invoke is 503 overloaded and provably never runs.",
            overloaded,
        ),
    ]
}

/// The lifecycle record `kind`.
fn lifecycle<'a>(records: &'a [Value], kind: &str) -> Result<&'a Value, String> {
    records
        .iter()
        .find(|r| r.get("kind").and_then(Value::as_str) == Some(kind))
        .ok_or_else(|| {
            format!(
                "expected a {kind} record on stderr, got {}",
                http::shorten(&format!("{records:?}"), 600)
            )
        })
}

/// Exit 1 and one `kind` record (level error, `message`) whose problems
/// satisfy `problems`.
fn failed_boot(
    code: Option<i32>,
    output: &Output,
    kind: &str,
    message: &str,
    problems: impl FnOnce(&[String]) -> Checked,
) -> Checked {
    let records = output.records();
    let record = lifecycle(&records, kind)?;
    eq("exit code", Some(1), code)?;
    eq(
        &format!("{kind} level"),
        Some("error"),
        record.get("level").and_then(Value::as_str),
    )?;
    eq(
        &format!("{kind} message"),
        Some(message),
        record.get("message").and_then(Value::as_str),
    )?;
    eq(
        &format!("{kind} event"),
        Some(kind),
        record.get("event").and_then(Value::as_str),
    )?;
    let list: Vec<String> = record
        .get("problems")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| format!("expected problems in {record}"))?;
    problems(&list)
}

async fn config_invalid(s: &Session, options: StartOptions, want: &str) -> Checked {
    let (code, output) = s.run_to_exit(&options, EXIT_WAIT).await?;
    failed_boot(
        code,
        &output,
        "config-invalid",
        "The pack service configuration is invalid",
        |problems| eq("problems", vec![want.to_owned()], problems.to_vec()),
    )
}

async fn token_missing(s: Session) -> Checked {
    let index = s.index().await?.path.clone();
    config_invalid(
        &s,
        StartOptions::new(index).token(None),
        "KINDGI_PACK_SERVICE_TOKEN is required",
    )
    .await
}

async fn token_space(s: Session) -> Checked {
    let index = s.index().await?.path.clone();
    let token = format!("{} {}", random_token(), random_token());
    config_invalid(&s, StartOptions::new(index).token(Some(token)), TOKEN_TEXT).await
}

/// A config-invalid boot with one bad variable `name=value`.
async fn bad_variable(s: &Session, name: &str, value: &str, want: &str) -> Checked {
    let index = s.index().await?.path.clone();
    config_invalid(s, StartOptions::new(index).env(name, value), want).await
}

async fn bad_port(s: Session) -> Checked {
    bad_variable(
        &s,
        "PORT",
        "http",
        "PORT must be a port number, got \"http\"",
    )
    .await
}

async fn bad_cap(s: Session) -> Checked {
    bad_variable(
        &s,
        "KINDGI_PACK_SERVICE_MAX_CONCURRENCY",
        "0",
        "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer",
    )
    .await
}

async fn bad_env_check(s: Session) -> Checked {
    bad_variable(
        &s,
        "KINDGI_PACK_ENV_CHECK",
        "loose",
        "KINDGI_PACK_ENV_CHECK must be `strict` or `warn`, not \"loose\"",
    )
    .await
}

async fn bad_env_filter(s: Session) -> Checked {
    bad_variable(
        &s,
        "KINDGI_PACK_ENV_FILTER",
        "maybe",
        "KINDGI_PACK_ENV_FILTER must be `on` or `off`, not \"maybe\"",
    )
    .await
}

async fn bad_envelope(s: Session) -> Checked {
    let index = s
        .index_variant("index-v2.json", |json| json["v"] = json!(2))
        .await?;
    let (code, output) = s.run_to_exit(&StartOptions::new(index), EXIT_WAIT).await?;
    failed_boot(
        code,
        &output,
        "boot-failed",
        "The pack service failed to boot",
        |problems| {
            eq(
                "problems",
                vec!["Index envelope v2 is not v1".to_owned()],
                problems.to_vec(),
            )
        },
    )
}

async fn token_trimmed(s: Session) -> Checked {
    let index = s.index().await?.path.clone();
    let token = random_token();
    let service = s
        .start(&StartOptions::new(index).token(Some(format!("{token}\n"))))
        .await?;
    let run = s.unique("trimmed");
    let request = HttpRequest::post("/v1/invoke")
        .header("kindgi-pack-token", &token)
        .json(&tool(
            "conformance.echo",
            json!({"message": "hi"}),
            ctx(&run),
        ));
    let response = s.send(&service, request).await;
    service.stop(Duration::from_secs(5)).await;
    let response = response?;
    crate::case::status(&response, 200)?;
    result(&response.json()?, &json!({"message": "hi"}))
}

async fn token_hidden(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let names = process_env_names(&s, &service).await?;
    ensure(
        !names.iter().any(|n| n == "KINDGI_PACK_SERVICE_TOKEN"),
        || "expected no KINDGI_PACK_SERVICE_TOKEN among the process-env names, got it".to_owned(),
    )
}

/// What `conformance.process-env` lists.
pub(crate) async fn process_env_names(
    s: &Session,
    service: &Service,
) -> Result<Vec<String>, String> {
    let answer = s
        .invoke(
            service,
            &tool("conformance.process-env", json!({}), ctx(&s.unique("env"))),
        )
        .await?;
    answer
        .pointer("/output/names")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| format!("expected a result with output.names, got {answer}"))
}

async fn unreadable_index(s: Session) -> Checked {
    let missing = s.path("no-such-index.json");
    let (code, output) = s
        .run_to_exit(&StartOptions::new(missing), EXIT_WAIT)
        .await?;
    failed_boot(
        code,
        &output,
        "boot-failed",
        "The pack service failed to boot",
        |problems| {
            ensure(
                problems.len() == 1 && problems[0].starts_with("Cannot read the pack index: "),
                || {
                    format!(
                        "problems: expected [\"Cannot read the pack index: ...\"], got {problems:?}"
                    )
                },
            )
        },
    )
}

async fn missing_module(s: Session) -> Checked {
    let index = s
        .index_variant("index-missing-module.json", |json| {
            if let Some(tool) = json
                .get_mut("tools")
                .and_then(Value::as_array_mut)
                .and_then(|t| t.first_mut())
            {
                tool["modulePath"] = json!("tools/does-not-exist.rs");
            }
        })
        .await?;
    let (code, output) = s.run_to_exit(&StartOptions::new(index), EXIT_WAIT).await?;
    failed_boot(
        code,
        &output,
        "boot-failed",
        "The pack service failed to boot",
        |problems| {
            let want = "Missing module: tools/does-not-exist.rs";
            let n = problems.iter().filter(|p| *p == want).count();
            ensure(n == 1, || {
                format!("problems: expected {want:?} once, got {problems:?}")
            })
        },
    )
}

/// Starts a `conformance.hold` call in the background; resolves once the
/// tool has printed `hold: <release>`.
async fn hold(
    s: &Session,
    service: &Service,
    release: &str,
) -> Result<tokio::task::JoinHandle<Result<http::HttpResponse, String>>, String> {
    let request = service
        .authed(HttpRequest::post("/v1/invoke"))
        .json(&tool(
            "conformance.hold",
            json!({"release": release}),
            ctx(&s.unique("hold")),
        ))
        .timeout(Duration::from_secs(30));
    let (addr, transport) = (service.addr(), s.transport());
    let call = tokio::spawn(async move { transport.send(addr, &request).await });
    let line = format!("hold: {release}");
    service
        .output()
        .wait_for_stdout(|l| l.trim() == line, SOON)
        .await
        .ok_or_else(|| format!("expected {line:?} on stdout, got none"))?;
    Ok(call)
}

async fn released(
    s: &Session,
    call: tokio::task::JoinHandle<Result<http::HttpResponse, String>>,
) -> Checked {
    let response = call
        .await
        .map_err(|e| format!("the held call's task failed: {e}"))??;
    crate::case::status(&response, 200)?;
    let answer = response.json()?;
    s.schemas()?.check_response(&answer)?;
    result(&answer, &json!({"released": true}))
}

async fn sigterm_drain(s: Session) -> Checked {
    let index = s.index().await?.path.clone();
    let service = s.start(&StartOptions::new(index)).await?;
    let checked = drain_steps(&s, &service).await;
    service.stop(Duration::from_secs(2)).await;
    checked
}

async fn drain_steps(s: &Session, service: &Service) -> Checked {
    let release = s.path("release-drain");
    let release_text = release.to_string_lossy().into_owned();
    let call = hold(s, service, &release_text).await?;
    service.terminate().await?;
    let output = service.output();
    if output
        .wait_for_record(|r| r.get("kind") == Some(&json!("draining")), SOON)
        .await
        .is_none()
    {
        let exit = service.wait_exit(Duration::from_millis(100)).await;
        return Err(format!(
            "expected a draining record after SIGTERM, got none (exit: {exit:?}); stderr: {}",
            http::shorten(&output.stderr_lines().join("\n"), 1500)
        ));
    }
    let ready = s.send(service, HttpRequest::get("/readyz")).await?;
    unavailable(&ready, &json!({"error": "draining"}))
        .map_err(|e| format!("/readyz while draining: {e}"))?;
    let fresh = s
        .send(
            service,
            service.authed(HttpRequest::post("/v1/invoke")).json(&tool(
                "conformance.echo",
                json!({"message": "late"}),
                ctx(&s.unique("late")),
            )),
        )
        .await?;
    unavailable(&fresh, &json!({"error": "draining"}))
        .map_err(|e| format!("an invoke while draining: {e}"))?;
    std::fs::write(&release, b"go").map_err(|e| format!("cannot write {release_text}: {e}"))?;
    released(s, call)
        .await
        .map_err(|e| format!("the held call: {e}"))?;
    let code = service.wait_exit(Duration::from_secs(10)).await;
    eq("exit code after draining", Some(Some(0)), code)?;
    let stopped = output
        .wait_for_record(|r| r.get("kind") == Some(&json!("stopped")), SOON)
        .await
        .ok_or("expected a stopped record, got none")?;
    let kinds: Vec<String> = output
        .records()
        .iter()
        .filter_map(|r| r.get("kind").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let at = |k: &str| kinds.iter().position(|x| x == k);
    ensure(at("draining") < at("stopped"), || {
        format!("expected draining before stopped, got {kinds:?}")
    })?;
    eq(
        "stopped message",
        Some("Stopped"),
        stopped.get("message").and_then(Value::as_str),
    )
}

async fn overloaded(s: Session) -> Checked {
    let index = s.index().await?.path.clone();
    let service = s
        .start(&StartOptions::new(index).env("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "1"))
        .await?;
    let checked = overloaded_steps(&s, &service).await;
    service.stop(Duration::from_secs(2)).await;
    checked
}

async fn overloaded_steps(s: &Session, service: &Service) -> Checked {
    let first = s.path("release-first");
    let second = s.path("release-second");
    let (first_text, second_text) = (
        first.to_string_lossy().into_owned(),
        second.to_string_lossy().into_owned(),
    );
    let call = hold(s, service, &first_text).await?;
    // Released before it is sent: were the refused call run after all, it
    // would end at once (and still print its line) instead of hanging.
    std::fs::write(&second, b"go").map_err(|e| format!("cannot write {second_text}: {e}"))?;
    let refused = s
        .send(
            service,
            service.authed(HttpRequest::post("/v1/invoke")).json(&tool(
                "conformance.hold",
                json!({"release": second_text}),
                ctx(&s.unique("second")),
            )),
        )
        .await?;
    unavailable(&refused, &json!({"error": "overloaded"}))
        .map_err(|e| format!("the second invoke: {e}"))?;
    let ready = s.send(service, HttpRequest::get("/readyz")).await?;
    answer(&ready, 200, &json!({"status": "ready"}))
        .map_err(|e| format!("/readyz at the cap: {e}"))?;
    std::fs::write(&first, b"go").map_err(|e| format!("cannot write {first_text}: {e}"))?;
    released(s, call)
        .await
        .map_err(|e| format!("the held call: {e}"))?;
    let after = s
        .invoke(
            service,
            &tool(
                "conformance.echo",
                json!({"message": "after"}),
                ctx(&s.unique("after")),
            ),
        )
        .await?;
    result(&after, &json!({"message": "after"}))
        .map_err(|e| format!("an invoke once the cap freed: {e}"))?;
    let started = Instant::now();
    let line = format!("hold: {second_text}");
    let ran = service
        .output()
        .wait_for_stdout(|l| l.trim() == line, Duration::from_millis(300))
        .await;
    json_eq(
        "the refused call's stdout line",
        &Value::Null,
        &ran.map_or(Value::Null, Value::from),
    )
    .map_err(|e| format!("{e} ({} ms after)", started.elapsed().as_millis()))
}
