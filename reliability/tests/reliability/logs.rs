//! The log records: what a caller sends can't forge a record or reach the
//! terminal as a command, in either format.

use std::time::Duration;

use kindgi_reliability::http;
use kindgi_reliability::{PackService, ServiceOptions, invoke};
use serde_json::{Value, json};

use crate::common::start;

const WAIT: Duration = Duration::from_secs(30);

/// A tool id and context ids a caller chose: a forged line (CR LF, then a
/// record's start), terminal commands (ESC, CSI as C1, BEL), DEL and the
/// Unicode line separators.
const FORGED: &str = "evil\r\n2026-01-01T00:00:00.000Z INFO  forged record\u{1b}[2J\u{1b}]0;title\u{7}\u{7f}\u{9b}31m\u{2028}\u{2029}";

/// Whether a character may appear raw in a record.
fn forbidden(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// Calls an unknown tool named [`FORGED`] with every context id forged,
/// and a check named the same; waits for both `call` records.
async fn forge(service: &PackService) {
    let mut message = invoke::tool_message(FORGED, json!({}));
    message["ctx"] = json!({
        "tenantId": FORGED, "runId": FORGED, "requestId": FORGED,
        "projectId": FORGED, "orgId": FORGED
    });
    let request = invoke::invoke(service.token(), &message).header("kindgi-request-id", "r\tq");
    let answer = http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("the forged call");
    assert_eq!(
        invoke::error_code(&answer.json_or_null()),
        Some("tool-not-in-pack"),
        "{}",
        answer.text()
    );
    let check =
        json!({"v": 2, "kind": "check-invoke", "check": {"id": FORGED}, "config": {}, "trace": {}});
    let answer = http::exchange(
        service.addr(),
        &invoke::invoke(service.token(), &check),
        WAIT,
    )
    .await
    .expect_answer("the forged check");
    assert_eq!(
        invoke::error_code(&answer.json_or_null()),
        Some("check-not-in-pack")
    );
    // The `call` records are written by the log writer a moment later.
    let started = std::time::Instant::now();
    while service
        .stderr_lines()
        .iter()
        .filter(|l| l.contains("not-in-pack"))
        .count()
        < 2
    {
        assert!(
            started.elapsed() < WAIT,
            "no call records: {}",
            service.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_ids_write_no_line_and_no_escape_in_pretty_logs() {
    let service = start(&ServiceOptions::default().env("KINDGI_LOG_FORMAT", "pretty"));
    forge(&service).await;
    let lines = service.stderr_lines();
    for line in &lines {
        let raw: Vec<char> = line.chars().filter(|&c| forbidden(c)).collect();
        assert!(raw.is_empty(), "raw {raw:?} in the line {line:?}");
        assert!(
            line.starts_with("20") && line.as_bytes().get(4) == Some(&b'-'),
            "a line that isn't a record: {line:?}"
        );
        assert!(
            !line.starts_with("2026-01-01T00:00:00.000Z INFO  forged"),
            "a forged line: {line:?}"
        );
    }
    let calls: Vec<&String> = lines.iter().filter(|l| l.contains("not-in-pack")).collect();
    assert_eq!(calls.len(), 2, "{lines:#?}");
    for line in calls {
        assert!(
            line.contains(r"evil\r\n2026-01-01T00:00:00.000Z INFO  forged record\u{1b}[2J\u{1b}]0;title\u{7}\u{7f}\u{9b}31m\u{2028}\u{2029}"),
            "{line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_ids_are_escaped_in_json_logs_and_read_back_unchanged() {
    let service = start(&ServiceOptions::default());
    forge(&service).await;
    let lines = service.stderr_lines();
    for line in &lines {
        let raw: Vec<char> = line.chars().filter(|&c| forbidden(c)).collect();
        assert!(raw.is_empty(), "raw {raw:?} in the line {line:?}");
        let record: Value = serde_json::from_str(line).expect("every line is a JSON record");
        if record["kind"] == "call" && record["target"] == "tool" {
            for field in [
                "id",
                "toolId",
                "tenantId",
                "runId",
                "requestId",
                "projectId",
                "orgId",
            ] {
                assert_eq!(record[field], FORGED, "{field}: {line}");
            }
        }
    }
}

/// A stderr that nobody reads (a log collector that stalled) costs bounded
/// memory: records past the writer's queue are dropped, calls go on being
/// answered, and once stderr drains one `log-dropped` record says how many
/// were lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stalled_stderr_costs_bounded_memory_and_says_what_it_dropped() {
    let _heavy = crate::common::heavy().await;
    let service = start(&ServiceOptions::default());
    service.stop_reading_stderr();
    // Let the reader take what it had: from here on the pipe fills.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = service.peak_rss_kib();
    // 24 calls × 160 records × 64 KiB: 240 MiB of records.
    let (calls, count, bytes): (u32, u32, u32) = (24, 160, 64 * 1024);
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..calls {
        let request = invoke::call(
            service.token(),
            "stress.log",
            json!({"count": count, "bytes": bytes}),
        );
        let addr = service.addr();
        tasks.push(tokio::spawn(async move {
            http::exchange(addr, &request, WAIT).await
        }));
    }
    for task in tasks {
        let answer = task.await.expect("task").expect_answer("a logging call");
        assert_eq!(answer.json_or_null()["kind"], "result", "{}", answer.text());
    }
    let healthz = http::exchange(service.addr(), &http::Request::get("/healthz"), WAIT).await;
    assert_eq!(healthz.status(), Some(200), "{healthz}");
    let elapsed = started.elapsed();
    let grew_mib = service.peak_rss_kib().saturating_sub(before) / 1024;
    println!(
        "{} MiB of records with stderr unread: every call answered in {elapsed:?}; peak RSS +{grew_mib} MiB",
        calls * count * bytes / (1024 * 1024)
    );
    assert!(grew_mib < 64, "peak RSS grew {grew_mib} MiB");

    service.resume_reading_stderr();
    let dropped = service
        .wait_record("log-dropped", WAIT)
        .unwrap_or_else(|| panic!("no log-dropped record"));
    println!("{dropped}");
    let n = dropped["dropped"].as_u64().expect("a count");
    assert!(n > 0 && n <= u64::from(calls * count), "{dropped}");
    assert_eq!(dropped["level"], "warn", "{dropped}");
    assert_eq!(
        dropped["message"],
        format!("Dropped {n} log records: stderr was not taking them"),
        "{dropped}"
    );
    assert_eq!(service.records_of("log-dropped").len(), 1);
    // Logging goes on after.
    let answer = http::exchange(
        service.addr(),
        &invoke::call(
            service.token(),
            "stress.log",
            json!({"count": 1, "bytes": 1}),
        ),
        WAIT,
    )
    .await
    .expect_answer("a call after");
    assert_eq!(answer.json_or_null()["kind"], "result");
}

/// A tool's `call` record carries every id of its call: the context's,
/// and the transport's trace and request id (the context's request id
/// first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_record_carries_every_id_of_its_call() {
    let service = start(&ServiceOptions::default());
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    for (in_ctx, expected) in [(None, "from-header"), (Some("from-ctx"), "from-ctx")] {
        let mut message = invoke::tool_message("stress.log", json!({"count": 1, "bytes": 1}));
        message["ctx"] = json!({
            "tenantId": "tenant-1", "runId": "run-1", "projectId": "project-1", "orgId": "org-1"
        });
        if let Some(id) = in_ctx {
            message["ctx"]["requestId"] = json!(id);
        }
        let request = invoke::invoke(service.token(), &message)
            .header("kindgi-request-id", "from-header")
            .header("traceparent", traceparent);
        let answer = http::exchange(service.addr(), &request, WAIT)
            .await
            .expect_answer("a logged call");
        assert_eq!(answer.json_or_null()["kind"], "result", "{}", answer.text());
        let record = service
            .wait_record_where(|r| r["kind"] == "call" && r["requestId"] == expected, WAIT)
            .unwrap_or_else(|| panic!("no call record with requestId {expected}"));
        for (field, value) in [
            ("traceId", "0af7651916cd43dd8448eb211c80319c"),
            ("tenantId", "tenant-1"),
            ("projectId", "project-1"),
            ("orgId", "org-1"),
            ("runId", "run-1"),
            ("toolId", "stress.log"),
            ("id", "stress.log"),
            ("target", "tool"),
            ("outcome", "ok"),
        ] {
            assert_eq!(record[field], value, "{field}: {record}");
        }
        // The service's own span in the caller's trace.
        let span = record["spanId"].as_str().unwrap_or_default();
        assert!(
            span.len() == 16
                && span.bytes().all(|b| b.is_ascii_hexdigit())
                && span != "b7ad6b7169203331",
            "{record}"
        );
        // The handler's own `tracing` event carries the same ids.
        let event = service
            .wait_record_where(
                |r| r["message"] == "stress.log record" && r["requestId"] == expected,
                WAIT,
            )
            .unwrap_or_else(|| panic!("no event of the handler with requestId {expected}"));
        for field in [
            "traceId",
            "spanId",
            "tenantId",
            "projectId",
            "orgId",
            "runId",
            "toolId",
        ] {
            assert_eq!(event[field], record[field], "{field}: {event}");
        }
    }
}

/// What a handler logs is redacted as the reference services redact it
/// (secret-looking keys, secret shapes in any string), under the subsystem
/// `pack.tool` with its own level in `KINDGI_LOG_LEVELS`; the service's
/// own records under `pack`, whose level hides an ok call's record but
/// never `listening`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_records_are_redacted_and_leveled_by_subsystem() {
    let service =
        start(&ServiceOptions::default().env("KINDGI_LOG_LEVELS", "pack=warn, pack.tool=debug"));
    let input = json!({
        "message": "calling the CRM with Bearer SENTINEL-ONE",
        "secret": "SENTINEL-TWO",
        "note": "db at postgres://app:SENTINEL-THREE@db:5432/crm, key kgi_tf_SENTINELFOURabcdefWXYZ",
    });
    let answer = http::exchange(
        service.addr(),
        &invoke::call(service.token(), "stress.log-careless", input),
        WAIT,
    )
    .await
    .expect_answer("log-careless");
    assert_eq!(
        answer.json_or_null()["output"],
        json!({"logged": 2}),
        "{}",
        answer.text()
    );
    let debug = service
        .wait_record_where(|r| r["message"] == "stress.log-careless detail", WAIT)
        .expect("the debug record, at pack.tool=debug");
    assert_eq!(debug["subsystem"], "pack.tool", "{debug}");
    assert_eq!(debug["level"], "debug", "{debug}");
    let info = service
        .wait_record_where(
            |r| r["subsystem"] == "pack.tool" && r["level"] == "info",
            WAIT,
        )
        .expect("the info record");
    assert_eq!(
        info["message"], "calling the CRM with Bearer [redacted]",
        "{info}"
    );
    assert_eq!(info["api_key"], "[redacted]", "{info}");
    assert_eq!(
        info["note"], "db at postgres://app:***@db:5432/crm, key kgi_tf_…WXYZ",
        "{info}"
    );
    assert_eq!(info["toolId"], "stress.log-careless", "{info}");
    // pack=warn: a failed call's `call` record (warn) is written, the ok
    // call's (info, written before it if at all) is not; `listening` is,
    // whatever the level (the service could not have started without it).
    let failed = http::exchange(
        service.addr(),
        &invoke::call(service.token(), "stress.throws", json!({})),
        WAIT,
    )
    .await
    .expect_answer("throws");
    assert_eq!(
        failed.json_or_null()["code"],
        "handler-throw",
        "{}",
        failed.text()
    );
    let call = service
        .wait_record("call", WAIT)
        .expect("the failed call's record");
    assert_eq!(call["id"], "stress.throws", "{call}");
    assert_eq!(service.records_of("call").len(), 1, "{}", service.output());
    assert_eq!(service.records_of("listening").len(), 1);
    let output = service.output();
    for sentinel in [
        "SENTINEL-ONE",
        "SENTINEL-TWO",
        "SENTINEL-THREE",
        "SENTINELFOUR",
    ] {
        assert!(!output.contains(sentinel), "{sentinel} in {output}");
    }
}

/// A log setting the service can't honour stops it before anything else,
/// naming the setting as the reference services do: `config-invalid`, exit 1.
#[test]
fn a_log_setting_that_cannot_be_honoured_is_config_invalid() {
    let cases = [
        (
            "KINDGI_LOG_LEVEL",
            "loud",
            "KINDGI_LOG_LEVEL must be one of error, warn, info, debug, trace, got \"loud\".",
        ),
        (
            "KINDGI_LOG_LEVELS",
            "pack=debug,tool",
            "KINDGI_LOG_LEVELS: \"tool\" isn't subsystem=level (levels: error, warn, info, debug, trace).",
        ),
        (
            "KINDGI_LOG_FORMAT",
            "yaml",
            "KINDGI_LOG_FORMAT must be auto, json or pretty, got \"yaml\".",
        ),
    ];
    for (name, value, message) in cases {
        let ran = std::process::Command::new(crate::common::pack_bin())
            .args(["serve", "--index", "/nonexistent/index.json"])
            .env_clear()
            .env("KINDGI_PACK_SERVICE_TOKEN", "tok")
            .env(name, value)
            .output()
            .expect("the pack binary runs");
        assert_eq!(ran.status.code(), Some(1), "{name}={value}");
        let stderr = String::from_utf8_lossy(&ran.stderr);
        let records: Vec<Value> = stderr
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert_eq!(records.len(), 1, "{stderr}");
        let record = &records[0];
        assert_eq!(record["kind"], "config-invalid", "{record}");
        assert_eq!(record["message"], message, "{record}");
        assert_eq!(record["problems"], json!([message]), "{record}");
    }
}
