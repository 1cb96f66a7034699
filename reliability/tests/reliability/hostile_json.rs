//! Hostile JSON bodies: each answered with a documented error (or its
//! result), never a crash or a hang.

use std::time::{Duration, Instant};

use kindgi_reliability::http::{self, Request, Response};
use kindgi_reliability::{PackService, ServiceOptions};
use serde_json::{Value, json};

use crate::common::{heavy, start};

const WAIT: Duration = Duration::from_secs(60);
const LIMIT: usize = 10 * 1024 * 1024;

async fn send(service: &PackService, body: Vec<u8>) -> (Response, Duration) {
    let request = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .body(body);
    let started = Instant::now();
    let answer = http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("hostile JSON");
    (answer, started.elapsed())
}

/// An invoke of `stress.sleep` (or `tool`) whose `input` is the raw text
/// `input`.
fn invoke_raw(tool: &str, input: &str) -> Vec<u8> {
    format!(
        r#"{{"v":2,"kind":"invoke","tool":{{"id":"{tool}"}},"input":{input},"ctx":{{"tenantId":"t1","runId":"r1"}}}}"#
    )
    .into_bytes()
}

fn not_json() -> Value {
    json!({"kind": "error", "v": 2, "code": "malformed-message", "message": "Request body is not valid JSON"})
}

#[tokio::test]
async fn malformed_json_is_malformed_message() {
    let service = start(&ServiceOptions::default());
    let sleep = |input: &str| invoke_raw("stress.sleep", input);
    let mut invalid_utf8 = sleep(r#"{"ms":1}"#);
    let at = invalid_utf8
        .windows(3)
        .position(|w| w == b"\"t1")
        .expect("tenant id");
    invalid_utf8.insert(at + 2, 0xff);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("invalid UTF-8 in a string", invalid_utf8),
        (
            "invalid UTF-8 outside strings",
            [sleep(r#"{"ms":1}"#), vec![0xc3]].concat(),
        ),
        ("a lone surrogate escape", sleep(r#"{"ms":1,"x":"\ud800"}"#)),
        ("NaN", sleep(r#"{"ms":NaN}"#)),
        ("Infinity", sleep(r#"{"ms":Infinity}"#)),
        ("-Infinity", sleep(r#"{"ms":-Infinity}"#)),
        ("a number past f64 (1e400)", sleep(r#"{"ms":1e400}"#)),
        (
            "10 000 nested arrays",
            sleep(&format!("{}{}", "[".repeat(10_000), "]".repeat(10_000))),
        ),
        (
            "10 000 nested objects",
            sleep(&format!(
                "{}1{}",
                r#"{"a":"#.repeat(10_000),
                "}".repeat(10_000)
            )),
        ),
        (
            "a byte-order mark",
            [b"\xef\xbb\xbf".as_slice(), &sleep(r#"{"ms":1}"#)].concat(),
        ),
        (
            "trailing garbage",
            [sleep(r#"{"ms":1}"#), b" x".to_vec()].concat(),
        ),
        ("an empty body", Vec::new()),
        ("a lone quote", b"\"".to_vec()),
        (
            "a control character in a string",
            sleep("{\"ms\":1,\"x\":\"a\u{1}b\"}"),
        ),
        ("single quotes", sleep("{'ms':1}")),
        ("a comment", sleep(r#"{"ms":1 /* no */}"#)),
        ("a trailing comma", sleep(r#"{"ms":1,}"#)),
    ];
    for (what, body) in cases {
        let (answer, took) = send(&service, body).await;
        assert_eq!(answer.status, 200, "{what}");
        assert_eq!(
            answer.json_or_null(),
            not_json(),
            "{what}: {}",
            answer.text()
        );
        assert!(took < Duration::from_secs(5), "{what}: {took:?}");
    }
    assert!(
        service.records_of("call").is_empty(),
        "a body that doesn't parse gets no call record"
    );
}

#[tokio::test]
async fn odd_but_valid_json_is_answered_like_json_parse() {
    let service = start(&ServiceOptions::default());
    let sleep = |input: &str| invoke_raw("stress.sleep", input);
    // Duplicate keys: the last one wins, as in JSON.parse.
    let (answer, _) = send(&service, sleep(r#"{"ms":"x","ms":2}"#)).await;
    assert_eq!(answer.json_or_null()["output"], json!({"slept": 2}));
    let body = br#"{"v":2,"kind":"nope","kind":"invoke","tool":{"id":"stress.sleep"},"input":{"ms":1},"ctx":{"tenantId":"t1","runId":"r1"}}"#;
    let (answer, _) = send(&service, body.to_vec()).await;
    assert_eq!(answer.json_or_null()["output"], json!({"slept": 1}));
    // `"v": 2.0` is the number 2, as JSON.parse reads it (F4).
    let body = br#"{"v":2.0,"kind":"invoke","tool":{"id":"stress.sleep"},"input":{"ms":1},"ctx":{"tenantId":"t1","runId":"r1"}}"#;
    let (answer, _) = send(&service, body.to_vec()).await;
    assert_eq!(
        answer.json_or_null()["output"],
        json!({"slept": 1}),
        "{}",
        answer.text()
    );
    // Nesting up to serde_json's limit (128) parses; the schema refuses it.
    let deep = sleep(&format!("{}{}", "[".repeat(120), "]".repeat(120)));
    let (answer, _) = send(&service, deep).await;
    assert_eq!(answer.json_or_null()["code"], "input-validation-failed");
    assert_eq!(
        answer.json_or_null()["issues"][0]["message"],
        "must be object"
    );
    // Huge and negative numbers where an integer >= 0 is wanted: a
    // validation failure, never a wrap-around.
    for ms in [
        "123456789012345678901234567890",
        "-1",
        "1e300",
        "18446744073709551615",
        "18446744073709551616",
    ] {
        let (answer, _) = send(&service, sleep(&format!(r#"{{"ms":{ms}}}"#))).await;
        assert_eq!(
            answer.json_or_null()["code"],
            "input-validation-failed",
            "ms {ms}: {}",
            answer.text()
        );
    }
    // The largest integer JSON carries exactly (2^53 - 1) is a valid `ms`
    // (a u64's input schema stops there): a call whose sleep is longer
    // than its deadline.
    let request = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .header("kindgi-timeout-ms", "200")
        .body(sleep(r#"{"ms":9007199254740991}"#));
    let answer = http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("2^53 - 1");
    assert_eq!(
        answer.json_or_null()["code"],
        "deadline-exceeded",
        "{}",
        answer.text()
    );
    // A huge kindgi-timeout-ms doesn't overflow the deadline.
    let request = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .header("kindgi-timeout-ms", "18446744073709551615")
        .body(sleep(r#"{"ms":1}"#));
    let answer = http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("a huge timeout");
    assert_eq!(answer.json_or_null()["output"], json!({"slept": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_at_the_limit() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    // Exactly 10 MiB: read, parsed, answered.
    let frame = |pad: usize| {
        let mut body = invoke_raw(
            "stress.throws",
            &format!(r#"{{"pad":"{}"}}"#, "a".repeat(pad)),
        );
        let short = LIMIT.saturating_sub(body.len());
        body = invoke_raw(
            "stress.throws",
            &format!(r#"{{"pad":"{}"}}"#, "a".repeat(pad + short)),
        );
        body
    };
    let exact = frame(0);
    assert_eq!(exact.len(), LIMIT);
    let (answer, took) = send(&service, exact).await;
    assert_eq!(
        answer.json_or_null()["code"],
        "handler-throw",
        "{}",
        answer.text()
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    // One byte more: 413.
    let mut over = frame(0);
    over.insert(over.len() - 3, b'a');
    assert_eq!(over.len(), LIMIT + 1);
    let (answer, _) = send(&service, over).await;
    assert_eq!(answer.status, 413);
    // A 10 MiB string where the schema allows no such property: the issue
    // names the property, never echoes the value.
    let pad = "b".repeat(LIMIT - 200);
    let (answer, _) = send(
        &service,
        invoke_raw("stress.sleep", &format!(r#"{{"ms":1,"pad":"{pad}"}}"#)),
    )
    .await;
    assert_eq!(answer.json_or_null()["code"], "input-validation-failed");
    assert_eq!(
        answer.json_or_null()["issues"],
        json!([{"instancePath": "", "schemaPath": "#/additionalProperties", "keyword": "additionalProperties",
                "params": {"additionalProperty": "pad"}, "message": "must NOT have additional properties"}])
    );
    assert!(answer.body.len() < 1024);
    // A 10 MiB check trace.
    let body = format!(
        r#"{{"v":2,"kind":"check-invoke","check":{{"id":"stress.checks.ok"}},"config":{{}},"trace":{{"output":"{}"}}}}"#,
        "c".repeat(LIMIT - 200)
    );
    let (answer, _) = send(&service, body.into_bytes()).await;
    assert_eq!(
        answer.json_or_null()["kind"],
        "check-result",
        "{}",
        answer.text()
    );
    // Millions of values in a list: parsed and answered.
    let mut items = String::from("[");
    for i in 0..2_000_000 {
        if i > 0 {
            items.push(',');
        }
        items.push_str(r#""""#);
    }
    items.push(']');
    let (answer, took) = send(
        &service,
        invoke_raw("stress.count", &format!(r#"{{"items":{items}}}"#)),
    )
    .await;
    assert_eq!(answer.json_or_null()["output"], json!({"count": 2_000_000}));
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// A list of wrong items made one issue per item, all in the answer (F3):
/// the answer is now cut at the first issues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_wrong_items_has_a_bounded_answer() {
    let _heavy = heavy().await;
    let service = start(&ServiceOptions::default());
    let (answer, took) = send(&service, invoke_raw("stress.count", &wrong_items(200_000))).await;
    assert_eq!(answer.json_or_null()["code"], "input-validation-failed");
    let issues = answer.json_or_null()["issues"]
        .as_array()
        .map_or(0, Vec::len);
    assert!((1..=100).contains(&issues), "{issues} issues");
    assert!(
        answer.body.len() < 64 * 1024,
        "answer {} B",
        answer.body.len()
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// The memory a list of wrong items takes while it is validated is bounded
/// (F3b): past 100 000 values, an invalid input is answered with its first
/// error's issues, where the validator would build ~380 bytes of error per
/// wrong item (~760 MiB for 2 000 000) before keeping a hundred. (A 10 MiB
/// body of them, 5 million values, is refused by the memory budget before
/// it is parsed: see `memory.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_wrong_items_takes_bounded_memory() {
    let _heavy = heavy().await;
    refused_in_bounded_memory(
        "stress.count",
        &wrong_items(2_000_000),
        json!([{
            "instancePath": "/items/0",
            "schemaPath": "#/properties/items/items/type",
            "keyword": "type",
            "params": {"type": "string"},
            "message": "must be string"
        }]),
    )
    .await;
}

/// … also where the list is in an optional batch declared, as schemars
/// writes `Option<T>` with `$ref`s, as an `anyOf`: an `anyOf` error carries
/// every error of its branches, so the first error is found on a schema
/// that wraps each `anyOf` in a `not` of a `not` (F3b).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_wrong_items_under_an_option_takes_bounded_memory() {
    let _heavy = heavy().await;
    refused_in_bounded_memory(
        "stress.count-batch",
        &format!(r#"{{"batch":{}}}"#, wrong_items(2_000_000)),
        json!([{
            "instancePath": "/batch",
            "schemaPath": "#/properties/batch/anyOf",
            "keyword": "anyOf",
            "params": {},
            "message": "must match a schema in anyOf"
        }]),
    )
    .await;
}

/// Sends `input` to `tool` on a service of its own: answered
/// `input-validation-failed` with exactly `issues`, while the service grows
/// by less than 160 MiB (the body parsed: 2 million numbers in a `Value`
/// are ~64 MiB).
async fn refused_in_bounded_memory(tool: &str, input: &str, issues: Value) {
    let service = start(&ServiceOptions::default());
    let before = service.rss_kib();
    let (answer, _) = send(&service, invoke_raw(tool, input)).await;
    assert_eq!(answer.json_or_null()["code"], "input-validation-failed");
    assert_eq!(answer.json_or_null()["issues"], issues);
    let growth = service.peak_rss_kib().saturating_sub(before);
    assert!(growth < 160 * 1024, "+{growth} KiB");
}

/// Schema work on a large body runs off the async workers (F10): while
/// more calls than there are workers each check and read 2 000 000 strings
/// (seconds of work in a debug build), `/healthz` is answered at once. (A
/// memory budget for all of them at once: this is about the workers.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checking_large_bodies_leaves_the_workers_free() {
    let _heavy = heavy().await;
    let service =
        start(&ServiceOptions::default().env("KINDGI_PACK_SERVICE_BODY_MEMORY_MIB", "2048"));
    let body = invoke_raw("stress.count", &empty_strings(2_000_000));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let calls = (0..workers + 2).map(|_| send(&service, body.clone()));
    let probe = async {
        // Once the calls are under way.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = Instant::now();
        let answer = http::exchange(service.addr(), &Request::get("/healthz"), WAIT)
            .await
            .expect_answer("healthz");
        (answer.status, started.elapsed())
    };
    let (answers, (status, waited)) = tokio::join!(futures::future::join_all(calls), probe);
    assert_eq!(status, 200);
    assert!(waited < Duration::from_secs(1), "healthz waited {waited:?}");
    for (answer, took) in answers {
        assert_eq!(answer.json_or_null()["output"], json!({"count": 2_000_000}));
        // The probe came while they were still at it.
        assert!(took > Duration::from_millis(300) + waited, "{took:?}");
    }
}

/// `{"items":[0,0,…]}` with `n` numbers where strings are wanted.
fn wrong_items(n: usize) -> String {
    items_of(n, "0")
}

/// `{"items":["","",…]}` with `n` empty strings.
fn empty_strings(n: usize) -> String {
    items_of(n, r#""""#)
}

/// `{"items":[item,item,…]}` with `n` of `item`.
fn items_of(n: usize, item: &str) -> String {
    let mut items = String::with_capacity(n * (item.len() + 1) + 16);
    items.push_str(r#"{"items":["#);
    for i in 0..n {
        if i > 0 {
            items.push(',');
        }
        items.push_str(item);
    }
    items.push_str("]}");
    items
}
