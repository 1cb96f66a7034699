//! Log records (CONTRACT §2): their shape, `call` records, trace ids, and
//! the sentinels that must never appear.

use std::time::Duration;

use serde_json::{Value, json};

use super::{call_record, check, ctx, no_record, run_trace, tool};
use crate::case::{Case, Checked, Feature, ensure, eq, result};
use crate::http::shorten;
use crate::json::object_keys;
use crate::session::{Profile, Session};

const FIXED: [&str; 5] = ["time", "level", "severity", "subsystem", "message"];
const IDS: [&str; 8] = [
    "traceId",
    "spanId",
    "requestId",
    "tenantId",
    "projectId",
    "orgId",
    "runId",
    "toolId",
];

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Logs;
    vec![
        Case::new("logs.listening", Logs, "The listening record: level info, `Listening on port <port>`, port, packId, artifactVersion, event and kind.", listening),
        Case::new("logs.call-record.ok", Logs, "A tool call's call record: id, target tool, outcome ok, integer durationMs, packId, artifactVersion, the ids, `tool <id> ok <ms>ms`, `inMessage` naming the fields the message states, level info.", call_ok),
        Case::new("logs.call-record.error", Logs, "A failing call's record has outcome = the error code and level warn.", call_error),
        Case::new("logs.call-record.check", Logs, "A check call's record has target check and the check id, as `id` and as `checkId`.", call_check),
        Case::new("logs.call-record.kind", Logs, "A call record carries kind and event `call`, as CONTRACT section 2's table lists it.", call_kind),
        Case::new("logs.traceparent.valid", Logs, "A valid traceparent: the call record carries its traceId and a fresh 16-hex spanId.", traceparent_valid),
        Case::new("logs.traceparent.invalid", Logs, "An invalid traceparent (uppercase, version ff, zero ids): the record carries neither traceId nor spanId.", traceparent_invalid),
        Case::new("logs.parse-error.no-record", Logs, "A message that fails to parse gets no call record.", parse_error_no_record),
        Case::new("logs.record-shape", Logs, "Every JSON line on stderr: time (ISO, ms, Z), level, severity, subsystem pack, message first; ids in order; event = kind.", record_shape).last(),
        Case::new("secrets.never-logged", Logs, "No secret, connection token, wait URL, tool-files token, env value or pack token sent appears in any service's stdout or stderr.", never_logged).last(),
    ]
}

fn str_field<'a>(record: &'a Value, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

async fn listening(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let records = service.output().records();
    let record = records
        .iter()
        .find(|r| str_field(r, "kind") == Some("listening"))
        .ok_or("expected a listening record")?;
    let port = service.addr().port();
    let index = s.index().await?;
    eq("level", Some("info"), str_field(record, "level"))?;
    eq(
        "message",
        Some(format!("Listening on port {port}").as_str()),
        str_field(record, "message"),
    )?;
    eq("event", Some("listening"), str_field(record, "event"))?;
    eq("packId", Some("conformance"), str_field(record, "packId"))?;
    eq(
        "artifactVersion",
        index.json.get("artifactVersion"),
        record.get("artifactVersion"),
    )
}

/// The common fields of a call record.
fn call_fields(
    s_artifact: &Value,
    record: &Value,
    target: &str,
    id: &str,
    outcome: &str,
) -> Checked {
    eq("id", Some(id), str_field(record, "id"))?;
    eq("target", Some(target), str_field(record, "target"))?;
    eq("outcome", Some(outcome), str_field(record, "outcome"))?;
    eq("packId", Some("conformance"), str_field(record, "packId"))?;
    eq(
        "artifactVersion",
        Some(s_artifact),
        record.get("artifactVersion"),
    )?;
    let ms = record
        .get("durationMs")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("expected an integer durationMs in {record}"))?;
    eq(
        "message",
        Some(format!("{target} {id} {outcome} {ms}ms").as_str()),
        str_field(record, "message"),
    )?;
    eq(
        "inMessage",
        Some(&json!(["target", "id", "outcome", "durationMs"])),
        record.get("inMessage"),
    )?;
    eq(
        "level",
        Some(if outcome == "ok" { "info" } else { "warn" }),
        str_field(record, "level"),
    )
}

async fn call_ok(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let run = s.unique("log");
    let context = json!({"tenantId": "t1", "runId": run, "projectId": "p1", "orgId": "o1", "requestId": "call_7"});
    let answer = s
        .invoke(
            &service,
            &tool("conformance.echo", json!({"message": "hi"}), context),
        )
        .await?;
    result(&answer, &json!({"message": "hi"}))?;
    let record = call_record(&service, &run).await?;
    let index = s.index().await?;
    call_fields(
        index.json.get("artifactVersion").unwrap_or(&Value::Null),
        &record,
        "tool",
        "conformance.echo",
        "ok",
    )?;
    for (key, want) in [
        ("tenantId", "t1"),
        ("projectId", "p1"),
        ("orgId", "o1"),
        ("requestId", "call_7"),
        ("toolId", "conformance.echo"),
    ] {
        eq(key, Some(want), str_field(&record, key))?;
    }
    Ok(())
}

async fn call_error(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let run = s.unique("log");
    s.invoke(&service, &tool("conformance.throws", json!({}), ctx(&run)))
        .await?;
    let record = call_record(&service, &run).await?;
    let index = s.index().await?;
    call_fields(
        index.json.get("artifactVersion").unwrap_or(&Value::Null),
        &record,
        "tool",
        "conformance.throws",
        "handler-throw",
    )
}

/// A valid traceparent with a fresh trace id; returns (header, trace id).
fn traceparent() -> (String, String) {
    let trace = hex::encode(rand::random::<[u8; 16]>());
    (format!("00-{trace}-00f067aa0ba902b7-01"), trace)
}

async fn call_check(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let (header, trace) = traceparent();
    let message = check(
        "conformance.checks.min-length",
        json!({"minLength": 1}),
        run_trace(&s.unique("check"), "ok"),
    );
    s.invoke_with(&service, &message, &[("traceparent", &header)])
        .await?;
    let record = service
        .output()
        .wait_for_record(
            |r| str_field(r, "traceId") == Some(trace.as_str()) && r.get("outcome").is_some(),
            super::SOON,
        )
        .await
        .ok_or_else(|| format!("expected a call record with traceId {trace}, got none"))?;
    let index = s.index().await?;
    call_fields(
        index.json.get("artifactVersion").unwrap_or(&Value::Null),
        &record,
        "check",
        "conformance.checks.min-length",
        "ok",
    )?;
    eq(
        "checkId",
        Some("conformance.checks.min-length"),
        str_field(&record, "checkId"),
    )
}

async fn call_kind(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let run = s.unique("log");
    s.invoke(
        &service,
        &tool("conformance.echo", json!({"message": "k"}), ctx(&run)),
    )
    .await?;
    let record = call_record(&service, &run).await?;
    eq("kind", Some("call"), str_field(&record, "kind"))?;
    eq("event", Some("call"), str_field(&record, "event"))
}

async fn traceparent_valid(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let (header, trace) = traceparent();
    let run = s.unique("trace");
    s.invoke_with(
        &service,
        &tool("conformance.echo", json!({"message": "t"}), ctx(&run)),
        &[("traceparent", &format!(" {header} "))],
    )
    .await?;
    let record = call_record(&service, &run).await?;
    eq(
        "traceId",
        Some(trace.as_str()),
        str_field(&record, "traceId"),
    )?;
    let span = str_field(&record, "spanId").unwrap_or_default();
    ensure(
        span.len() == 16
            && span
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        || format!("expected a spanId of 16 lowercase hex digits, got {span:?}"),
    )?;
    ensure(span != "00f067aa0ba902b7", || {
        "expected a fresh spanId, got the caller's parent id".to_owned()
    })
}

async fn traceparent_invalid(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let trace = hex::encode(rand::random::<[u8; 16]>());
    let invalid = [
        format!("00-{}-00f067aa0ba902b7-01", trace.to_uppercase()),
        format!("ff-{trace}-00f067aa0ba902b7-01"),
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01".to_owned(),
        format!("00-{trace}-0000000000000000-01"),
        format!("00-{trace}-00f067aa0ba902b7-01x"),
        "garbage".to_owned(),
    ];
    for header in invalid {
        let run = s.unique("trace");
        s.invoke_with(
            &service,
            &tool("conformance.echo", json!({"message": "t"}), ctx(&run)),
            &[("traceparent", &header)],
        )
        .await?;
        let record = call_record(&service, &run).await?;
        ensure(
            record.get("traceId").is_none() && record.get("spanId").is_none(),
            || format!("traceparent {header:?}: expected no traceId or spanId, got {record}"),
        )?;
    }
    Ok(())
}

async fn parse_error_no_record(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let marker = s.unique("conformance.unparsed");
    let broken = json!({"v": 2, "kind": "invoke", "tool": {"id": marker}, "input": {}, "ctx": {"tenantId": "t1"}});
    let answer = s.invoke(&service, &broken).await?;
    crate::case::error_code(&answer, "malformed-message")?;
    // A call after it, whose record shows the service has logged what it will.
    let run = s.unique("barrier");
    s.invoke(
        &service,
        &tool("conformance.echo", json!({"message": "b"}), ctx(&run)),
    )
    .await?;
    call_record(&service, &run).await?;
    no_record(&service, Duration::from_millis(100), |r| {
        r.to_string().contains(&marker)
    })
    .await
}

/// `text` is `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn is_iso_millis(text: &str) -> bool {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

fn record_problem(line: &str, record: &Value) -> Option<String> {
    let keys = object_keys(line)?;
    if keys.len() < FIXED.len() || keys[..FIXED.len()] != FIXED {
        return Some(format!("expected keys to start {FIXED:?}, got {keys:?}"));
    }
    let time = str_field(record, "time").unwrap_or_default();
    if !is_iso_millis(time) {
        return Some(format!(
            "time: expected ISO 8601 UTC with milliseconds, got {time:?}"
        ));
    }
    let level = str_field(record, "level").unwrap_or_default();
    let severity = match level {
        "error" => "ERROR",
        "warn" => "WARNING",
        "info" => "INFO",
        "debug" | "trace" => "DEBUG",
        other => {
            return Some(format!(
                "level: expected error|warn|info|debug|trace, got {other:?}"
            ));
        }
    };
    if str_field(record, "severity") != Some(severity) {
        return Some(format!("severity: expected {severity:?} for level {level}"));
    }
    if str_field(record, "subsystem") != Some("pack") {
        return Some("subsystem: expected \"pack\"".to_owned());
    }
    let ids: Vec<&String> = keys[FIXED.len()..]
        .iter()
        .take_while(|k| IDS.contains(&k.as_str()))
        .collect();
    let order: Vec<usize> = ids
        .iter()
        .filter_map(|k| IDS.iter().position(|i| *i == k.as_str()))
        .collect();
    if order.windows(2).any(|w| w[0] >= w[1]) {
        return Some(format!(
            "ids: expected them in the order {IDS:?}, got {ids:?}"
        ));
    }
    if let Some(stray) = keys[FIXED.len() + ids.len()..]
        .iter()
        .find(|k| IDS.contains(&k.as_str()))
    {
        return Some(format!("id {stray} comes after the record's own fields"));
    }
    if record.get("kind").is_some()
        && record.get("event").is_some()
        && record.get("kind") != record.get("event")
    {
        return Some("event: expected it equal to kind".to_owned());
    }
    None
}

async fn record_shape(s: Session) -> Checked {
    let mut problems = Vec::new();
    let mut seen = 0;
    for output in s.outputs() {
        for line in output.stderr() {
            let Some(record) = &line.record else { continue };
            seen += 1;
            if let Some(problem) = record_problem(&line.raw, record) {
                problems.push(format!("{problem} in {}", shorten(&line.raw, 300)));
            }
        }
    }
    ensure(seen > 0, || {
        "expected JSON records on stderr, got none".to_owned()
    })?;
    ensure(problems.is_empty(), || {
        format!("{} bad records; first: {}", problems.len(), problems[0])
    })
}

async fn never_logged(s: Session) -> Checked {
    let sentinels = s.sentinels();
    ensure(!sentinels.is_empty(), || {
        "expected sentinels to have been sent, got none".to_owned()
    })?;
    for output in s.outputs() {
        for sentinel in &sentinels {
            for (stream, lines) in [
                ("stdout", output.stdout_lines()),
                ("stderr", output.stderr_lines()),
            ] {
                if let Some(line) = lines.iter().find(|l| l.contains(sentinel.as_str())) {
                    return Err(format!(
                        "expected {sentinel:?} never logged, got it on {stream}: {}",
                        shorten(line, 400)
                    ));
                }
            }
        }
    }
    Ok(())
}
