//! OpenTelemetry against a real OTLP/HTTP receiver (`reliability/otlp`: a
//! Python server decoding the protobuf with the `opentelemetry-proto`
//! package): each call a server span in the caller's trace with the
//! call's ids, the calls' metrics, nothing secret in anything exported;
//! and a collector that stalls or dies costs the calls nothing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use kindgi_reliability::secrets::Sentinels;
use kindgi_reliability::{PackService, ServiceOptions, http, invoke};
use serde_json::{Value, json};

use crate::common::start;

const WAIT: Duration = Duration::from_secs(30);
/// The receiver's first start may install its Python package.
const RECEIVER_START: Duration = Duration::from_secs(240);

/// A running OTLP receiver: what it decoded, a line each, and every body
/// it was sent, raw.
struct Receiver {
    child: Child,
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
    raw: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("a folder");
        let raw = dir.path().join("raw.bin");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("otlp/receiver");
        let mut child = Command::new(script)
            .arg(&raw)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("the OTLP receiver could not start ({e}): python3 with venv (scripts/install-test-deps)"));
        let stdout = child.stdout.take().expect("stdout");
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&lines);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let _ = port_tx.send(first);
            for line in reader.lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    kept.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(value);
                }
            }
        });
        let first = port_rx
            .recv_timeout(RECEIVER_START)
            .expect("the receiver says where it listens");
        let port = first
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("not a port: {first:?}"));
        Self {
            child,
            port,
            lines,
            raw,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until what was received holds `holds`; what was received.
    fn wait(&self, what: &str, holds: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let lines = self
                .lines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if holds(&lines) {
                return lines;
            }
            assert!(
                started.elapsed() < WAIT,
                "{what}: not received in {WAIT:?}: {lines:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every body it was sent.
    fn raw(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        if let Ok(mut file) = std::fs::File::open(&self.raw) {
            let _ = file.read_to_end(&mut bytes);
        }
        bytes
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The service, exporting to `collector` quickly.
fn exporting_to(collector: &str, extra: &[(&str, &str)]) -> PackService {
    exporting_with(ServiceOptions::default(), collector, extra)
}

/// The service with `options`, exporting to `collector` quickly.
fn exporting_with(options: ServiceOptions, collector: &str, extra: &[(&str, &str)]) -> PackService {
    let mut options = options
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test");
    for (name, value) in extra {
        options = options.env(name, value);
    }
    start(&options)
}

fn span_named<'a>(spans: &'a [Value], name: &str) -> Option<&'a Value> {
    spans
        .iter()
        .find(|l| l["kind"] == "span" && l["name"] == name)
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_a_span_in_the_callers_trace_and_nothing_secret_is_sent() {
    let receiver = Receiver::start();
    let service = exporting_to(&receiver.url(), &[]);
    // A traced call with every kind of credential in its context, and a
    // handler that logs carelessly.
    let sentinels = Sentinels::new("otel");
    let mut message = invoke::tool_message(
        "stress.log-careless",
        json!({"message": "with Bearer SENTINEL-BEARER", "secret": sentinels.secret, "note": "n"}),
    );
    let mut ctx = sentinels.ctx("run-traced", "http://127.0.0.1:9/v1/tool-files");
    ctx["requestId"] = json!("req-1");
    message["ctx"] = ctx;
    let traced = invoke::invoke(service.token(), &message)
        .header("traceparent", &format!("00-{TRACE}-{CALLER_SPAN}-01"));
    let answer = http::exchange(service.addr(), &traced, WAIT)
        .await
        .expect_answer("traced call");
    assert_eq!(answer.status, 200, "{}", answer.text());
    // An untraced call that fails, and one of a tool the pack lacks.
    for tool in ["stress.throws", "stress.nope"] {
        http::exchange(
            service.addr(),
            &invoke::call(service.token(), tool, json!({})),
            WAIT,
        )
        .await
        .expect_answer(tool);
    }
    let lines = receiver.wait("three spans", |lines| {
        [
            "execute_tool stress.log-careless",
            "execute_tool stress.throws",
            "execute_tool stress.nope",
        ]
        .iter()
        .all(|name| span_named(lines, name).is_some())
    });

    // The traced call: a child of the caller's span, with the id its
    // records carry.
    let span = span_named(&lines, "execute_tool stress.log-careless").expect("span");
    let record = service
        .records_of("call")
        .into_iter()
        .find(|r| r["runId"] == "run-traced")
        .expect("its call record");
    assert_eq!(span["traceId"], TRACE, "{span}");
    assert_eq!(span["parentSpanId"], CALLER_SPAN, "{span}");
    assert_eq!(span["spanId"], record["spanId"], "{span}\n{record}");
    assert_eq!(span["spanKind"], 2, "SERVER: {span}");
    assert_eq!(span["status"], json!({}), "{span}");
    assert_eq!(
        span["attributes"],
        json!({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "stress.log-careless",
            "kindgi.target": "tool",
            "kindgi.outcome": "ok",
            "kindgi.pack.id": "stress",
            "kindgi.artifact.version": "20250101.1",
            "kindgi.request.id": "req-1",
            "kindgi.tenant.id": "t1",
            "kindgi.run.id": "run-traced",
        }),
        "{span}"
    );
    assert_eq!(span["resource"]["service.name"], "stress", "{span}");
    assert_eq!(span["resource"]["service.version"], "20250101.1", "{span}");
    assert_eq!(span["resource"]["deployment.environment"], "test", "{span}");
    let took = span["endNs"].as_u64().unwrap_or(0) - span["startNs"].as_u64().unwrap_or(0);
    assert!(took > 0 && took < 10_000_000_000, "{span}");

    // The handler's own span: a child of the call's, redacted as a log
    // record is, its events too.
    let lines = receiver.wait("the handler's span", |lines| {
        span_named(lines, "careless.lookup").is_some()
    });
    let inner = span_named(&lines, "careless.lookup").expect("span");
    assert_eq!(inner["traceId"], TRACE, "{inner}");
    assert_eq!(inner["parentSpanId"], span["spanId"], "{inner}");
    assert_eq!(inner["attributes"]["api_key"], "[redacted]", "{inner}");
    let event = inner["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["attributes"]["level"] == "INFO"))
        .unwrap_or_else(|| panic!("the info event: {inner}"));
    assert_eq!(event["attributes"]["api_key"], "[redacted]", "{event}");
    assert!(
        event.to_string().contains("with Bearer [redacted]"),
        "{event}"
    );

    // A failed call without a caller's trace: a root span, an error.
    let failed = span_named(&lines, "execute_tool stress.throws").expect("span");
    assert_eq!(failed["parentSpanId"], "", "{failed}");
    assert_eq!(failed["status"]["code"], "STATUS_CODE_ERROR", "{failed}");
    assert_eq!(
        failed["attributes"]["error.type"], "handler-throw",
        "{failed}"
    );
    let lacking = span_named(&lines, "execute_tool stress.nope").expect("span");
    assert_eq!(
        lacking["attributes"]["kindgi.outcome"], "tool-not-in-pack",
        "{lacking}"
    );

    // The metrics: the calls by outcome (a tool the pack lacks under one
    // name), their durations.
    let lines = receiver.wait("the calls' metrics", |lines| {
        lines.iter().any(|l| {
            l["metric"] == "kindgi.pack.calls" && l["attributes"]["kindgi.id"] == "(not in pack)"
        }) && lines
            .iter()
            .any(|l| l["metric"] == "kindgi.pack.call.duration")
    });
    let calls = |id: &str, outcome: &str| {
        lines
            .iter()
            .filter(|l| {
                l["metric"] == "kindgi.pack.calls"
                    && l["attributes"]["kindgi.id"] == id
                    && l["attributes"]["kindgi.outcome"] == outcome
            })
            .filter_map(|l| l["value"].as_u64())
            .max()
    };
    assert_eq!(calls("stress.log-careless", "ok"), Some(1));
    assert_eq!(calls("stress.throws", "handler-throw"), Some(1));
    assert_eq!(calls("(not in pack)", "tool-not-in-pack"), Some(1));

    // Nothing secret in anything sent.
    let raw = String::from_utf8_lossy(&receiver.raw()).into_owned();
    assert!(!raw.is_empty());
    assert_eq!(sentinels.found_in(&raw), Vec::<String>::new());
    for sentinel in ["SENTINEL-BEARER", service.token()] {
        assert!(!raw.contains(sentinel), "{sentinel} was exported");
    }
}

/// A collector that takes connections and never answers: the calls go on
/// at their own pace, spans past the queue are dropped and said once, and
/// the process's memory stays bounded; then the collector dies, and the
/// service still answers and stops on time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_or_dead_collector_costs_the_calls_nothing() {
    let _heavy = crate::common::heavy().await;
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = stalled.local_addr().expect("addr");
    let held = Arc::new(Mutex::new(Vec::new()));
    let holding = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in stalled.incoming().map_while(Result::ok) {
            holding
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(stream);
        }
    });
    let service = exporting_to(
        &format!("http://{addr}"),
        &[
            ("OTEL_BSP_MAX_QUEUE_SIZE", "64"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000"),
        ],
    );
    let before = service.peak_rss_kib();
    let started = Instant::now();
    for i in 0..1000 {
        let answer = http::exchange(
            service.addr(),
            &invoke::call(service.token(), "stress.sleep", json!({"ms": 0})),
            WAIT,
        )
        .await
        .expect_answer("a call");
        assert_eq!(answer.status, 200, "call {i}: {}", answer.text());
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "1000 calls took {took:?}");
    let dropped = service
        .wait_record_where(
            |r| {
                r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("dropped a Span"))
            },
            WAIT,
        )
        .expect("the drop said");
    assert_eq!(dropped["level"], "warn", "{dropped}");
    let said = service
        .records()
        .iter()
        .filter(|r| {
            r["message"]
                .as_str()
                .is_some_and(|m| m.contains("dropped a Span"))
        })
        .count();
    assert_eq!(said, 1, "said once");
    let grew = service.peak_rss_kib().saturating_sub(before) / 1024;
    assert!(grew < 64, "peak RSS +{grew} MiB");
    // The collector dies: calls still answer, and SIGTERM still stops the
    // service within its drain window and the flush's.
    held.lock().unwrap_or_else(PoisonError::into_inner).clear();
    let answer = http::exchange(
        service.addr(),
        &invoke::call(service.token(), "stress.sleep", json!({"ms": 0})),
        WAIT,
    )
    .await
    .expect_answer("after");
    assert_eq!(answer.status, 200);
    let mut service = service;
    service.sigterm();
    let stopped = Instant::now();
    let status = service
        .wait_exit(Duration::from_secs(20))
        .expect("it exits");
    assert!(status.success(), "{status}");
    assert!(
        stopped.elapsed() < Duration::from_secs(12),
        "{:?}",
        stopped.elapsed()
    );
}

/// A setting the standard variables make that can't be honoured stops the
/// service before it serves, named.
#[test]
fn an_otel_setting_that_cannot_be_honoured_is_config_invalid() {
    let ran = Command::new(crate::common::pack_bin())
        .args(["serve", "--index", "/nonexistent/index.json"])
        .env_clear()
        .env("KINDGI_PACK_SERVICE_TOKEN", "tok")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")
        .env("OTEL_TRACES_SAMPLER", "sometimes")
        .output()
        .expect("the pack binary runs");
    assert_eq!(ran.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&ran.stderr);
    let record: Value = stderr
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("a record: {stderr}"));
    assert_eq!(record["kind"], "config-invalid", "{record}");
    assert_eq!(
        record["problems"],
        json!([
            "The OTLP endpoint must be an http:// or https:// URL, got \"collector:4318/v1/traces\"",
            "The OTLP endpoint must be an http:// or https:// URL, got \"collector:4318/v1/metrics\"",
            "OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got \"sometimes\"",
        ]),
        "{record}"
    );
}

/// The collector's headers leave the pack's environment as the token
/// does, even with the env filter off: they are credentials. The other
/// `OTEL_*` variables stay, as the env filter keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collectors_headers_leave_the_pack_s_environment() {
    let receiver = Receiver::start();
    let service = exporting_to(
        &receiver.url(),
        &[
            ("KINDGI_PACK_ENV_FILTER", "off"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=SENTINEL-COLLECTOR-KEY",
            ),
        ],
    );
    let answer = http::exchange(
        service.addr(),
        &invoke::call(
            service.token(),
            "stress.environ",
            json!({"needle": "SENTINEL-COLLECTOR-KEY"}),
        ),
        WAIT,
    )
    .await
    .expect_answer("environ");
    let output = &answer.json_or_null()["output"];
    assert_eq!(output["inEnv"], false, "{output}");
    assert_eq!(output["inProcEnviron"], false, "{output}");
    let names: Vec<&str> = output["names"]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.starts_with("OTEL_"))
        .collect();
    assert_eq!(
        names,
        [
            "OTEL_BSP_SCHEDULE_DELAY",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_METRIC_EXPORT_INTERVAL",
            "OTEL_RESOURCE_ATTRIBUTES",
        ],
        "{output}"
    );
    // And still exports, with them.
    receiver.wait("the call's span", |lines| {
        span_named(lines, "execute_tool stress.environ").is_some()
    });
}

/// A receiver, and a service exporting to it with a cap of one call.
fn exporting_one_at_a_time() -> (Receiver, PackService) {
    let receiver = Receiver::start();
    let service = exporting_with(
        ServiceOptions::default().max_concurrency(1),
        &receiver.url(),
        &[],
    );
    (receiver, service)
}

/// Waits for `kindgi.pack.calls.refused` to count `count` calls refused
/// `overloaded`.
fn wait_refused_overloaded(receiver: &Receiver, count: u64) {
    receiver.wait("the refusal counted", |lines| {
        lines.iter().any(|l| {
            l["metric"] == "kindgi.pack.calls.refused"
                && l["attributes"] == json!({"kindgi.reason": "overloaded"})
                && l["value"].as_u64() == Some(count)
        })
    });
}

/// A call refused 503 before it ran counts by its reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_count_by_reason() {
    let (receiver, service) = exporting_one_at_a_time();
    // Three calls at once past a cap of one: two are refused.
    let addr = service.addr();
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let call = invoke::call(service.token(), "stress.sleep", json!({"ms": 1500}));
            tokio::spawn(async move { http::exchange(addr, &call, WAIT).await })
        })
        .collect();
    let mut refused = 0;
    for call in calls {
        let answer = call.await.expect("a call").expect_answer("a call");
        if answer.status == 503 {
            assert_eq!(answer.json_or_null(), json!({"error": "overloaded"}));
            refused += 1;
        }
    }
    assert_eq!(refused, 2);
    wait_refused_overloaded(&receiver, 2);
}

/// A blocking call refused for want of a thread counts as refused too:
/// with a cap of one, a blocking handler that outlives its call's deadline
/// keeps the one blocking slot, and the next blocking call is refused 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_without_a_thread_counts_as_refused() {
    let (receiver, service) = exporting_one_at_a_time();
    let runaway = invoke::call(service.token(), "stress.block", json!({"ms": 10_000}))
        .header("kindgi-timeout-ms", "100");
    let answer = http::exchange(service.addr(), &runaway, WAIT)
        .await
        .expect_answer("the runaway call");
    assert_eq!(
        invoke::error_code(&answer.json_or_null()),
        Some("deadline-exceeded"),
        "{}",
        answer.text()
    );
    let next = invoke::call(service.token(), "stress.block", json!({"ms": 1}));
    let refused = http::exchange(service.addr(), &next, WAIT)
        .await
        .expect_answer("the next blocking call");
    assert_eq!(
        (refused.status, refused.json_or_null()),
        (503, json!({"error": "overloaded"}))
    );
    wait_refused_overloaded(&receiver, 1);
}
